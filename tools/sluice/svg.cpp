#include "tools/sluice/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sluice::cli::svg {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

double text_width(const std::string& s, double font) {
  // DejaVu Sans advance widths of ASCII ' '..'~' in thousandths of an em (its hmtx table).
  static constexpr short kAdvance[95] = {
      318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361,  318, 337, 636, 636, 636,
      636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
      575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635,  611, 732, 684, 989, 685,
      611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352,  635, 634, 278, 278, 579,
      278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592,  525, 636, 337, 636, 838};
  double em = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte: its character counted once
    em += c >= 32 && c < 127 ? kAdvance[c - 32] / 1000.0 : 1.0;
  }
  return em * font * 1.06;  // rounded up: hinting, and a fallback font a little wider
}

double Scale::operator()(double v) const {
  if (!log) return p0 + (v - lo) / (hi - lo) * (p1 - p0);
  if (v <= lo) return p0;
  return p0 + std::log(v / lo) / std::log(hi / lo) * (p1 - p0);
}

namespace {

// v = m x 10^e with m in [1, 10).
void split(double v, double& m, double& p) {
  p = std::pow(10.0, std::floor(std::log10(v)));
  m = v / p;
  if (m >= 10 - 1e-9) m /= 10, p *= 10;
}

}  // namespace

double floor125(double v) {
  double m, p;
  split(v, m, p);
  return (m >= 5 - 1e-9 ? 5 : m >= 2 - 1e-9 ? 2 : 1) * p;
}

double ceil125(double v) {
  double m, p;
  split(v, m, p);
  return (m <= 1 + 1e-9 ? 1 : m <= 2 + 1e-9 ? 2 : m <= 5 + 1e-9 ? 5 : 10) * p;
}

std::vector<Tick> ticks(const Scale& s, const std::function<std::string(double)>& label,
                        const std::function<double(const std::string&)>& extent, double gap, double overhang,
                        int max_ticks) {
  struct Candidate {
    double value;
    int rank;
  };
  std::vector<Candidate> cands;
  // Less than 3x from end to end, a log axis is nearly linear: it gets a linear axis's ticks.
  if (s.log && s.hi / s.lo >= 3) {
    static const int kRank[10] = {0, 0, 2, 3, 4, 1, 4, 4, 4, 4};  // by mantissa: 1, 5, 2, 3, the rest
    // Under a decade, also halves (1.5, 2.5, ...), labelled where they fit.
    const bool halves = s.hi / s.lo < 10;
    for (double p = std::pow(10.0, std::floor(std::log10(s.lo))); p <= s.hi * (1 + 1e-9); p *= 10)
      for (int m = 10; m < 100; m += halves ? 5 : 10) {
        const double v = m * p / 10;
        if (v >= s.lo * (1 - 1e-9) && v <= s.hi * (1 + 1e-9))
          cands.push_back({v, m % 10 ? 5 : kRank[m / 10]});
      }
  } else {
    const double step = ceil125((s.hi - s.lo) / std::max(1, max_ticks - 1));
    for (double v = std::ceil(s.lo / step - 1e-9) * step; v <= s.hi + step * 1e-9; v += step)
      cands.push_back({std::abs(v) < step * 1e-9 ? 0.0 : v, 0});
  }
  std::vector<Candidate> order = cands;
  std::stable_sort(order.begin(), order.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  const double lo_px = std::min(s.p0, s.p1) - overhang, hi_px = std::max(s.p0, s.p1) + overhang;
  std::vector<std::pair<double, double>> taken;  // label extents along the axis
  std::vector<Tick> out;
  for (const Candidate& c : order) {
    const std::string text = label(c.value);
    const double at = s(c.value), half = extent(text) / 2;
    bool fits = at - half >= lo_px && at + half <= hi_px;
    for (const auto& [a, b] : taken) fits = fits && (at + half + gap <= a || at - half - gap >= b);
    if (fits) taken.push_back({at - half, at + half});
    out.push_back({c.value, fits ? text : "", fits});
  }
  std::sort(out.begin(), out.end(), [](const Tick& a, const Tick& b) { return a.value < b.value; });
  return out;
}

}  // namespace sluice::cli::svg
