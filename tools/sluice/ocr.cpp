// `sluice ocr IMAGE`: the text of a PNG or JPEG image, read with PaddleOCR's PP-OCRv4 models on a device
// (models/ocr/pipeline.h): each line's text, box and confidence, and the time of each stage; --json the
// same as JSON.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "models/ocr/pipeline.h"
#include "runtime/device.h"
#include "tools/sluice/cli.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string image, device, models;
  int batch = 6;
  bool json = false;
};

// Terminal columns of UTF-8 text: East Asian characters take two.
int columns(const std::string& s) {
  int n = 0;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    int cp = len == 1 ? c : c & (0xff >> (len + 1));
    for (size_t k = 1; k < len && i + k < s.size(); ++k)
      cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    n += cp >= 0x1100 && cp <= 0xffdc && !(cp >= 0x303f && cp <= 0x3040) ? 2 : 1;
    i += len;
  }
  return n;
}

int run(const Options& o) {
  if (o.image.empty()) throw UsageError("give an image: sluice ocr IMAGE.png");
  const std::string device = o.device.empty() ? default_device_name() : select_devices(o.device).at(0);
  ocr::Image im;
  try {
    im = ocr::read_image(o.image);
  } catch (const ValueError& e) { throw UsageError(e.what()); }
  const std::string models = o.models.empty() ? data_path("ocr-models/assets") : o.models;
  SLUICE_CHECK_IN(ValueError, "ocr", fs::is_directory(models))
      << "the PP-OCRv4 models are not in " << models
      << ": run scripts/fetch-models.sh in the sluice repository, then run from there, set SLUICE_DATA to "
         "its data/ folder or give --models DIR";
  open_device(device);  // opened before the clock starts
  auto t0 = Clock::now();
  ocr::Options opt;
  opt.device = device;
  opt.rec_batch = o.batch;
  ocr::Pipeline p = ocr::Pipeline::load(models, opt);
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  ocr::Times t;
  const std::vector<ocr::Line> lines = p.run(im, &t);

  if (o.json) {
    nlohmann::json js = nlohmann::json::array();
    for (const ocr::Line& l : lines) {
      nlohmann::json box = nlohmann::json::array();
      for (const ocr::Point& c : l.box) box.push_back({int(c[0]), int(c[1])});
      js.push_back({{"text", l.text},
                    {"confidence", l.confidence},
                    {"box", box},
                    {"box_score", l.box_score},
                    {"turned", l.turned}});
    }
    nlohmann::json j = {{"image", o.image},
                        {"width", im.width},
                        {"height", im.height},
                        {"device", device},
                        {"models", models},
                        {"lines", js},
                        {"times_ms",
                         {{"load", load_ms},
                          {"det", t.det_ms},
                          {"boxes", t.boxes_ms},
                          {"cls", t.cls_ms},
                          {"rec", t.rec_ms},
                          {"total", t.total_ms}}}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s: %dx%d on %s, %zu lines\n", o.image.c_str(), im.width, im.height, device.c_str(),
              lines.size());
  for (const ocr::Line& l : lines) {
    std::printf("  %s%*s  confidence %.3f  box", l.text.c_str(), std::max(0, 24 - columns(l.text)), "",
                l.confidence);
    for (const ocr::Point& c : l.box) std::printf(" (%.0f,%.0f)", c[0], c[1]);
    std::printf("%s\n", l.turned ? "  (turned 180)" : "");
  }
  std::printf("load %.0f ms; det %.1f ms, boxes %.1f ms, cls %.1f ms, rec %.1f ms, total %.1f ms\n", load_ms,
              t.det_ms, t.boxes_ms, t.cls_ms, t.rec_ms, t.total_ms);
  return 0;
}

}  // namespace

void add_ocr_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("ocr", "The text of an image (PaddleOCR PP-OCRv4)");
  cmd->add_option("image", o.image, "A PNG or JPEG image");
  cmd->add_option("--device", o.device, "Device to run on (default: the default device)");
  cmd->add_option("--models", o.models, "Folder of the PP-OCRv4 models (default: see below)");
  cmd->add_option("--batch", o.batch, "Lines per cls and rec batch")->default_val(6)->check(between(1, 64));
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout");
  cmd->footer(
      "Examples:\n"
      "  sluice ocr models/ocr/sample.png --device CPU\n"
      "  sluice ocr scan.jpg --json\n"
      "The models: --models, else $SLUICE_DATA/ocr-models/assets, else\n"
      "data/ocr-models/assets (scripts/fetch-models.sh fetches them).\n"
      "Each line: its text, the mean probability of its characters and its box\n"
      "(corners clockwise from the top-left, in image pixels). Times: load parses\n"
      "the models; the stages are of one run, which builds the kernels and\n"
      "compiles them (or loads them from the disk cache).\n"
      "Exit codes: 0 ok, 1 the models failed to load or run, 2 bad arguments or\n"
      "an image that cannot be read.");
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
