#pragma once
// Renders lines of text into an image with stb_truetype, for OCR tests that know what the image says:
// black glyphs on white, each line in its own font (a TrueType file or a face of a collection).
#include <string>
#include <vector>

#include "models/ocr/image.h"

namespace sluice::ocr::test {

struct TextLine {
  std::string text;  // UTF-8
  std::string font;  // .ttf or .ttc file
  float pixel_height = 32;
  int face = 0;  // the face in a .ttc collection
};

// The lines one below the other, `margin` pixels from the edges and `gap` pixels apart.
Image render_text(const std::vector<TextLine>& lines, int margin = 24, int gap = 24);

// The path of a font file (such as "DejaVuSans.ttf") under the system's font folders, or "" when absent.
std::string find_font(const std::string& file);

// The lines of the OCR sample (models/ocr/sample.png and the tests): English words and digits in three
// DejaVu faces (Debian fonts-dejavu-core) and one line of Chinese (fonts-wqy-zenhei). Each line fits the
// recognizer's narrowest input (320x48) so a batch costs no more than it must on a slow device. Empty,
// with `missing` naming the font files not found, when a font is absent.
std::vector<TextLine> sample_lines(std::string* missing = nullptr);

// Writes im as a PNG (stb_image_write): one gray channel when every pixel is gray, else RGB.
// Throws std::runtime_error when the file cannot be written.
void write_png(const Image& im, const std::string& path);

}  // namespace sluice::ocr::test
