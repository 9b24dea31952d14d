// Writes the OCR sample image (models/ocr/sample.png, which scripts/demo.sh reads): the lines of
// sample_lines() rendered by render_text, as the OCR tests render them.
//   build/default/tests/models/ocr_sample models/ocr/sample.png
#include <cstdio>
#include <exception>

#include "tests/models/text_image.h"

int main(int argc, char** argv) {
  using namespace sluice::ocr::test;
  if (argc != 2) {
    std::fprintf(stderr, "usage: ocr_sample OUT.png\n");
    return 2;
  }
  std::string missing;
  const std::vector<TextLine> lines = sample_lines(&missing);
  if (lines.empty()) {
    std::fprintf(stderr, "ocr_sample: fonts missing: %s (Debian fonts-dejavu-core, fonts-wqy-zenhei)\n",
                 missing.c_str());
    return 1;
  }
  try {
    write_png(render_text(lines), argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ocr_sample: %s\n", e.what());
    return 1;
  }
  return 0;
}
