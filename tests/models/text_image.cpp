#include "tests/models/text_image.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

#define STB_TRUETYPE_IMPLEMENTATION
#include <stb/stb_truetype.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace sluice::ocr::test {
namespace {

std::vector<int> utf8_codepoints(const std::string& s) {
  std::vector<int> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    int cp = n == 1 ? c : c & (0xff >> (n + 1));
    for (int k = 1; k < n && i + size_t(k) < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + size_t(k)]) & 0x3f);
    out.push_back(cp);
    i += size_t(n);
  }
  return out;
}

struct Font {
  std::vector<unsigned char> data;
  stbtt_fontinfo info{};
};

const Font& font(const std::string& path, int face) {
  static std::map<std::pair<std::string, int>, Font> cache;
  auto [it, fresh] = cache.try_emplace({path, face});
  if (fresh) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("render_text: font " + path + " cannot be opened");
    it->second.data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    const int off = stbtt_GetFontOffsetForIndex(it->second.data.data(), face);
    if (off < 0 || !stbtt_InitFont(&it->second.info, it->second.data.data(), off))
      throw std::runtime_error("render_text: " + path + " is not a font stb_truetype reads");
  }
  return it->second;
}

// One line as 8-bit coverage, `height` rows.
std::vector<uint8_t> raster(const TextLine& l, int& width, int& height) {
  const Font& f = font(l.font, l.face);
  const float scale = stbtt_ScaleForPixelHeight(&f.info, l.pixel_height);
  int ascent = 0, descent = 0, gap = 0;
  stbtt_GetFontVMetrics(&f.info, &ascent, &descent, &gap);
  const int base = int(std::ceil(float(ascent) * scale));
  height = base + int(std::ceil(float(-descent) * scale));
  const std::vector<int> cps = utf8_codepoints(l.text);
  float x = 0;
  std::vector<std::pair<int, float>> at;  // glyph, pen x
  for (size_t i = 0; i < cps.size(); ++i) {
    at.push_back({cps[i], x});
    int adv = 0, lsb = 0;
    stbtt_GetCodepointHMetrics(&f.info, cps[i], &adv, &lsb);
    x += float(adv) * scale;
    if (i + 1 < cps.size()) x += float(stbtt_GetCodepointKernAdvance(&f.info, cps[i], cps[i + 1])) * scale;
  }
  width = int(std::ceil(x)) + 2;
  std::vector<uint8_t> cov(size_t(width) * size_t(height), 0);
  for (auto [cp, px] : at) {
    int x0, y0, x1, y1;
    stbtt_GetCodepointBitmapBox(&f.info, cp, scale, scale, &x0, &y0, &x1, &y1);
    const int gw = x1 - x0, gh = y1 - y0;
    if (gw <= 0 || gh <= 0) continue;
    std::vector<uint8_t> g(size_t(gw) * size_t(gh));
    stbtt_MakeCodepointBitmap(&f.info, g.data(), gw, gh, gw, scale, scale, cp);
    for (int y = 0; y < gh; ++y)
      for (int xx = 0; xx < gw; ++xx) {
        const int tx = int(px) + x0 + xx, ty = base + y0 + y;
        if (tx < 0 || ty < 0 || tx >= width || ty >= height) continue;
        uint8_t& d = cov[size_t(ty) * size_t(width) + size_t(tx)];
        d = std::max(d, g[size_t(y) * size_t(gw) + size_t(xx)]);
      }
  }
  return cov;
}

}  // namespace

Image render_text(const std::vector<TextLine>& lines, int margin, int gap) {
  std::vector<std::vector<uint8_t>> covs;
  std::vector<int> ws, hs;
  int w = 0, h = margin;
  for (const TextLine& l : lines) {
    int lw = 0, lh = 0;
    covs.push_back(raster(l, lw, lh));
    ws.push_back(lw), hs.push_back(lh);
    w = std::max(w, lw);
    h += lh + gap;
  }
  w += 2 * margin;
  h += margin - gap;
  Image im{w, h, std::vector<uint8_t>(size_t(w) * size_t(h) * 3, 255)};
  int y0 = margin;
  for (size_t i = 0; i < lines.size(); ++i) {
    for (int y = 0; y < hs[i]; ++y)
      for (int x = 0; x < ws[i]; ++x) {
        const uint8_t v = uint8_t(255 - covs[i][size_t(y) * size_t(ws[i]) + size_t(x)]);
        for (int c = 0; c < 3; ++c)
          im.bgr[(size_t(y0 + y) * size_t(w) + size_t(margin + x)) * 3 + size_t(c)] = v;
      }
    y0 += hs[i] + gap;
  }
  return im;
}

std::string find_font(const std::string& file) {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots{"/usr/share/fonts", "/usr/local/share/fonts"};
  if (const char* home = std::getenv("HOME")) roots.push_back(fs::path(home) / ".local/share/fonts");
  std::error_code ec;
  for (const fs::path& root : roots)
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename() == file && it->is_regular_file(ec)) return it->path().string();
  return "";
}

std::vector<TextLine> sample_lines(std::string* missing) {
  struct Row {
    const char *text, *font;
  };
  static const Row rows[] = {
      {"Invoice 20475", "DejaVuSans.ttf"},
      {"Paid March 18", "DejaVuSerif.ttf"},
      {"Order 8832", "DejaVuSansMono.ttf"},
      {"欢迎使用文字识别", "wqy-zenhei.ttc"},
  };
  std::vector<TextLine> out;
  std::string absent;
  for (const Row& r : rows) {
    const std::string path = find_font(r.font);
    if (path.empty()) absent += (absent.empty() ? "" : ", ") + std::string(r.font);
    out.push_back({r.text, path});
  }
  if (missing) *missing = absent;
  if (!absent.empty()) out.clear();
  return out;
}

void write_png(const Image& im, const std::string& path) {
  const size_t n = size_t(im.width) * size_t(im.height);
  bool gray = true;
  for (size_t p = 0; p < n && gray; ++p)
    gray = im.bgr[p * 3] == im.bgr[p * 3 + 1] && im.bgr[p * 3] == im.bgr[p * 3 + 2];
  std::vector<uint8_t> px(n * (gray ? 1 : 3));
  for (size_t p = 0; p < n; ++p)
    if (gray)
      px[p] = im.bgr[p * 3];
    else
      for (size_t c = 0; c < 3; ++c) px[p * 3 + c] = im.bgr[p * 3 + 2 - c];  // BGR -> RGB
  const int comp = gray ? 1 : 3;
  if (!stbi_write_png(path.c_str(), im.width, im.height, comp, px.data(), im.width * comp))
    throw std::runtime_error("write_png: " + path + " cannot be written");
}

}  // namespace sluice::ocr::test
