#include "models/ocr/image.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#include <stb/stb_image.h>

#include <fstream>
#include <iterator>

namespace sluice::ocr {

Image from_rgb(int width, int height, const uint8_t* rgb) {
  Image im{width, height, std::vector<uint8_t>(size_t(width) * size_t(height) * 3)};
  for (size_t p = 0; p < size_t(width) * size_t(height); ++p) {
    im.bgr[p * 3 + 0] = rgb[p * 3 + 2];
    im.bgr[p * 3 + 1] = rgb[p * 3 + 1];
    im.bgr[p * 3 + 2] = rgb[p * 3 + 0];
  }
  return im;
}

Image decode_image(const uint8_t* data, size_t size, const std::string& name) {
  SLUICE_CHECK_IN(ValueError, "ocr", size > 0) << name << ": the file is empty (0 bytes), not an image";
  SLUICE_CHECK_IN(ValueError, "ocr", size < size_t(1) << 31)
      << name << ": the file is " << size << " bytes; image files up to 2 GiB are read";
  int w = 0, h = 0, comp = 0;
  // A PNG's size is read here first: stb_image's own header check refuses a PNG over 2^30 bytes of
  // pixels as an unknown image type.
  static const uint8_t kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
                                 0,    0,   0,   13,  'I',  'H',  'D',  'R'};
  if (size >= 24 && std::equal(kPng, kPng + sizeof kPng, data)) {
    auto be32 = [&](size_t at) {
      return uint32_t(data[at]) << 24 | data[at + 1] << 16 | data[at + 2] << 8 | data[at + 3];
    };
    const uint32_t pw = be32(16), ph = be32(20);
    SLUICE_CHECK_IN(ValueError, "ocr", pw <= uint32_t(kMaxSide) && ph <= uint32_t(kMaxSide))
        << name << ": the image is " << pw << "x" << ph << " pixels; images up to " << kMaxSide
        << " pixels a side are read (resize it first)";
  }
  SLUICE_CHECK_IN(ValueError, "ocr", stbi_info_from_memory(data, int(size), &w, &h, &comp))
      << name << ": not a PNG or JPEG image (" << size << " bytes; stb_image: " << stbi_failure_reason()
      << ")";
  SLUICE_CHECK_IN(ValueError, "ocr", w >= kMinSide && h >= kMinSide)
      << name << ": the image is " << w << "x" << h << " pixels; text needs at least " << kMinSide
      << " pixels a side";
  SLUICE_CHECK_IN(ValueError, "ocr", w <= kMaxSide && h <= kMaxSide)
      << name << ": the image is " << w << "x" << h << " pixels; images up to " << kMaxSide
      << " pixels a side are read (resize it first)";
  uint8_t* px = stbi_load_from_memory(data, int(size), &w, &h, &comp, 3);
  SLUICE_CHECK_IN(ValueError, "ocr", px) << name << ": cannot be decoded (" << stbi_failure_reason() << ")";
  Image im = from_rgb(w, h, px);
  stbi_image_free(px);
  return im;
}

Image read_image(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SLUICE_CHECK_IN(ValueError, "ocr", in) << path << ": cannot be opened";
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_image(bytes.data(), bytes.size(), path);
}

Image resize(const Image& im, int width, int height) {
  SLUICE_CHECK_IN(ValueError, "ocr", width > 0 && height > 0)
      << "cannot resize to " << width << "x" << height;
  Image out{width, height, std::vector<uint8_t>(size_t(width) * size_t(height) * 3)};
  const float sx = float(im.width) / float(width), sy = float(im.height) / float(height);
  for (int y = 0; y < height; ++y) {
    const float fy = std::max(0.0f, (float(y) + 0.5f) * sy - 0.5f);
    const int y0 = std::min(int(fy), im.height - 1), y1 = std::min(y0 + 1, im.height - 1);
    const float wy = fy - float(y0);
    for (int x = 0; x < width; ++x) {
      const float fx = std::max(0.0f, (float(x) + 0.5f) * sx - 0.5f);
      const int x0 = std::min(int(fx), im.width - 1), x1 = std::min(x0 + 1, im.width - 1);
      const float wx = fx - float(x0);
      for (int c = 0; c < 3; ++c) {
        const float top = float(im.at(x0, y0, c)) * (1 - wx) + float(im.at(x1, y0, c)) * wx;
        const float bot = float(im.at(x0, y1, c)) * (1 - wx) + float(im.at(x1, y1, c)) * wx;
        out.bgr[(size_t(y) * size_t(width) + size_t(x)) * 3 + size_t(c)] =
            uint8_t(std::clamp(std::lround(top * (1 - wy) + bot * wy), 0L, 255L));
      }
    }
  }
  return out;
}

Image rotate90(const Image& im) {
  Image out{im.height, im.width, std::vector<uint8_t>(im.bgr.size())};
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x)
      for (int c = 0; c < 3; ++c)  // (x, y) -> (y, W-1-x)
        out.bgr[(size_t(im.width - 1 - x) * size_t(out.width) + size_t(y)) * 3 + size_t(c)] = im.at(x, y, c);
  return out;
}

Image rotate180(const Image& im) {
  Image out = im;
  const size_t n = size_t(im.width) * size_t(im.height);
  for (size_t p = 0; p < n; ++p)
    for (size_t c = 0; c < 3; ++c) out.bgr[p * 3 + c] = im.bgr[(n - 1 - p) * 3 + c];
  return out;
}

namespace {

float dist(const Point& a, const Point& b) { return std::hypot(a[0] - b[0], a[1] - b[1]); }

// The homography taking the unit-less destination rectangle corners (0,0), (w,0), (w,h), (0,h) to the
// quad's corners, solved as the 8x8 linear system of the four correspondences.
std::array<double, 9> homography(const Quad& q, double w, double h) {
  const double src[4][2] = {{0, 0}, {w, 0}, {w, h}, {0, h}};
  double a[8][9] = {};
  for (int i = 0; i < 4; ++i) {
    const double x = src[i][0], y = src[i][1], u = q[size_t(i)][0], v = q[size_t(i)][1];
    double r0[9] = {x, y, 1, 0, 0, 0, -u * x, -u * y, u};
    double r1[9] = {0, 0, 0, x, y, 1, -v * x, -v * y, v};
    std::copy(r0, r0 + 9, a[2 * i]);
    std::copy(r1, r1 + 9, a[2 * i + 1]);
  }
  for (int c = 0; c < 8; ++c) {  // Gaussian elimination with partial pivoting
    int p = c;
    for (int r = c + 1; r < 8; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    if (std::abs(a[c][c]) < 1e-12) return {1, 0, q[0][0], 0, 1, q[0][1], 0, 0, 1};  // degenerate: a shift
    for (int r = 0; r < 8; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k < 9; ++k) a[r][k] -= f * a[c][k];
    }
  }
  std::array<double, 9> m{};
  for (int i = 0; i < 8; ++i) m[size_t(i)] = a[i][8] / a[i][i];
  m[8] = 1;
  return m;
}

}  // namespace

Image crop_quad(const Image& im, const Quad& q) {
  const int w = std::max(1, int(std::max(dist(q[0], q[1]), dist(q[2], q[3]))));
  const int h = std::max(1, int(std::max(dist(q[0], q[3]), dist(q[1], q[2]))));
  const std::array<double, 9> m = homography(q, w, h);
  Image out{w, h, std::vector<uint8_t>(size_t(w) * size_t(h) * 3)};
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double d = m[6] * x + m[7] * y + m[8];
      const double sx = (m[0] * x + m[1] * y + m[2]) / d, sy = (m[3] * x + m[4] * y + m[5]) / d;
      // Bilinear, replicating the border (cv2.BORDER_REPLICATE).
      const double cx = std::clamp(sx, 0.0, double(im.width - 1)),
                   cy = std::clamp(sy, 0.0, double(im.height - 1));
      const int x0 = int(cx), y0 = int(cy), x1 = std::min(x0 + 1, im.width - 1),
                y1 = std::min(y0 + 1, im.height - 1);
      const double wx = cx - x0, wy = cy - y0;
      for (int c = 0; c < 3; ++c) {
        const double v = (im.at(x0, y0, c) * (1 - wx) + im.at(x1, y0, c) * wx) * (1 - wy) +
                         (im.at(x0, y1, c) * (1 - wx) + im.at(x1, y1, c) * wx) * wy;
        out.bgr[(size_t(y) * size_t(w) + size_t(x)) * 3 + size_t(c)] =
            uint8_t(std::clamp(std::lround(v), 0L, 255L));
      }
    }
  if (float(h) / float(w) >= 1.5f) return rotate90(out);
  return out;
}

}  // namespace sluice::ocr
