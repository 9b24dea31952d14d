#pragma once
// Images for the OCR pipeline: 8-bit BGR pixels (PaddleOCR's channel order), read from PNG or JPEG files
// (stb_image), and the geometric steps the pipeline needs: bilinear resize, rotation by 90/180 degrees,
// and cropping a rotated box into an upright image (a perspective warp, as PaddleOCR's
// get_rotate_crop_image does with OpenCV).
//
// Failures: ValueError "[ocr] FILE: ..." for a file that is empty or not a PNG/JPEG image, and for an image
// under kMinSide or over kMaxSide pixels a side; the size is read from the header, so an image too large
// is refused before its pixels are decoded.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::ocr {

inline constexpr int kMinSide = 8;      // smaller holds no legible text
inline constexpr int kMaxSide = 16384;  // 16384^2 BGR is 768 MiB decoded, before any resizing

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> bgr;  // height rows of width pixels, B, G, R
  uint8_t at(int x, int y, int c) const {
    return bgr[(size_t(y) * size_t(width) + size_t(x)) * 3 + size_t(c)];
  }
};

using Point = std::array<float, 2>;  // x, y
using Quad = std::array<Point, 4>;   // corners clockwise from the top-left

Image read_image(const std::string& path);
// Decodes an image held in memory (`name` labels messages).
Image decode_image(const uint8_t* data, size_t size, const std::string& name);
// RGB rows (3 bytes a pixel) as an Image, swapping to BGR.
Image from_rgb(int width, int height, const uint8_t* rgb);

Image resize(const Image& im, int width, int height);  // bilinear, half-pixel centres (cv2.INTER_LINEAR)
Image rotate90(const Image& im);                       // counter-clockwise
Image rotate180(const Image& im);
// The quad's content as an upright image: the width is the longer of its top and bottom edges, the
// height the longer of its sides; turned 90 degrees when it is much taller than wide (vertical text).
Image crop_quad(const Image& im, const Quad& q);

}  // namespace sluice::ocr
