// The latency report as one XHTML file: inline CSS and SVG only (no script, no external resource), so it
// opens offline and parses as XML. Latency axes are logarithmic (a device's samples span decades: most
// near the median, a tail 10-100x slower), histograms bin on that axis from the fastest to the slowest
// sample, legends and labels sit outside the plot areas, and tick labels are placed only where they fit.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "tools/sluice/latency.h"
#include "tools/sluice/svg.h"

namespace sluice::cli {
namespace {

using svg::esc;
using svg::num;

constexpr double kFont = 13;                                            // chart text, SVG units
constexpr const char* kDirColor[] = {"#1f6fb4", "#d9480f", "#2b8a3e"};  // copy directions, in order
constexpr int kBins = 40;                                               // histogram bins on the log axis

std::string fmt_ns(double ns) {
  const char* unit = "ns";
  double v = ns;
  if (ns >= 1e9)
    v = ns / 1e9, unit = "s";
  else if (ns >= 1e6)
    v = ns / 1e6, unit = "ms";
  else if (ns >= 1e3)
    v = ns / 1e3, unit = "\xC2\xB5s";  // µs
  char b[32];
  std::snprintf(b, sizeof b, "%.3g %s", v, unit);
  return b;
}

std::string fmt_gbps(double v) {
  char b[32];
  std::snprintf(b, sizeof b, v >= 1000 ? "%.0f" : "%.3g", v);
  return b;
}

std::string fmt_gbps_tick(double v) {  // "300", "3000", "30k"
  char b[32];
  if (v >= 1e4)
    std::snprintf(b, sizeof b, "%.3gk", v / 1e3);
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

double quantile(const std::vector<double>& sorted, double q) {
  return sorted[std::min(sorted.size() - 1, size_t(q * double(sorted.size() - 1) + 0.5))];
}

double label_width(const std::string& s) { return svg::text_width(s, kFont); }
double label_height(const std::string&) { return kFont * 1.3; }

std::string text(double x, double y, const std::string& s, const char* anchor = "start",
                 const std::string& cls = "") {
  std::ostringstream o;
  o << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\"";
  if (std::string(anchor) != "start") o << " text-anchor=\"" << anchor << "\"";
  if (!cls.empty()) o << " class=\"" << cls << "\"";
  o << ">" << esc(s) << "</text>\n";
  return o.str();
}

std::string line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return "<line class=\"" + cls + "\" x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) +
         "\" y2=\"" + num(y2) + "\"/>\n";
}

// A legend above a plot: items laid left to right from x0, wrapping before x1; each is a swatch (SVG
// drawn in a 18x12 box at its origin) and a label. Returns the height it took.
struct LegendItem {
  std::string swatch, label;  // swatch: SVG with coordinates relative to (0, 0)
};
double legend(std::ostringstream& o, const std::vector<LegendItem>& items, double x0, double x1, double y0) {
  double x = x0, y = y0;
  for (const LegendItem& it : items) {
    const double w = 24 + label_width(it.label);
    if (x > x0 && x + w > x1) x = x0, y += 20;
    o << "<g transform=\"translate(" << num(x) << "," << num(y) << ")\">" << it.swatch << "</g>\n";
    o << text(x + 24, y + 11, it.label);
    x += w + 16;
  }
  return y + 20 - y0;
}

// The x axis under a plot area: tick marks, labels where they fit, grid lines, the axis title.
void x_axis(std::ostringstream& o, const svg::Scale& s, double top, double bottom,
            const std::function<std::string(double)>& fmt, const std::string& title, double overhang) {
  for (const svg::Tick& t : svg::ticks(s, fmt, label_width, 10, overhang)) {
    const double x = s(t.value);
    if (t.grid) o << line(x, top, x, bottom, "grid");
    o << line(x, bottom, x, bottom + (t.label.empty() ? 4 : 7), "tick");
    if (!t.label.empty()) o << text(x, bottom + 21, t.label, "middle");
  }
  o << text((s.p0 + s.p1) / 2, bottom + 42, title, "middle", "axis-title");
}

// The y axis left of a plot area at x = left; the title reads bottom to top.
void y_axis(std::ostringstream& o, const svg::Scale& s, double left, double right,
            const std::function<std::string(double)>& fmt, const std::string& title, double title_x) {
  for (const svg::Tick& t : svg::ticks(s, fmt, label_height, 4, kFont, 6)) {
    const double y = s(t.value);
    if (t.grid) o << line(left, y, right, y, "grid");
    o << line(left - (t.label.empty() ? 4 : 6), y, left, y, "tick");
    if (!t.label.empty()) o << text(left - 9, y + kFont * 0.35, t.label, "end");
  }
  o << "<text class=\"axis-title\" text-anchor=\"middle\" transform=\"translate(" << num(title_x) << ","
    << num((s.p0 + s.p1) / 2) << ") rotate(-90)\">" << esc(title) << "</text>\n";
}

std::string svg_open(double w, double h, const std::string& what) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 " + num(w) + " " + num(h) +
         "\" data-metric=\"" + esc(what) + "\" role=\"img\">\n";
}

std::string area(double x, double y, double w, double h) {
  return "<rect class=\"area\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" +
         num(h) + "\"/>\n";
}

// A log axis from a little below the fastest sample to a little above the slowest (4% of the span, at
// least 5%, on each side), so neither sits on the frame.
void log_range(double fastest, double slowest, double& lo, double& hi) {
  const double pad = std::max(1.05, std::pow(slowest / fastest, 0.04));
  lo = fastest / pad, hi = slowest * pad;
}

const std::string kSwatchBar = "<rect class=\"bar\" x=\"2\" y=\"1\" width=\"14\" height=\"11\"/>";
const std::string kSwatchMedian = "<line class=\"median\" x1=\"9\" y1=\"0\" x2=\"9\" y2=\"13\"/>";
const std::string kSwatchP99 = "<line class=\"p99\" x1=\"9\" y1=\"0\" x2=\"9\" y2=\"13\"/>";
const std::string kSwatchRange = "<line class=\"range\" x1=\"0\" y1=\"6.5\" x2=\"18\" y2=\"6.5\"/>";
const std::string kSwatchIqr = "<rect class=\"iqr\" x=\"2\" y=\"1\" width=\"14\" height=\"11\"/>";

// One metric's samples: kBins bins of equal width on a log axis from the fastest to the slowest sample
// (nothing clipped), the median and the p99 marked. Samples of 0 ns cannot sit on a log axis: the
// legend counts them. At least one sample must be above 0 ns.
std::string histogram(const LatencyMetric& m) {
  std::vector<double> pos;
  for (double v : m.ns)
    if (v > 0) pos.push_back(v);
  std::sort(pos.begin(), pos.end());
  const size_t zeros = m.ns.size() - pos.size();
  constexpr double W = 600, L = 70, R = 40, PH = 180, B = 54;
  double lo = 0, hi = 0;
  log_range(pos.front(), pos.back(), lo, hi);
  std::vector<LegendItem> items = {
      {kSwatchBar, "samples per bin"},
      {kSwatchMedian, "median " + fmt_ns(m.stats.median)},
      {kSwatchP99, "p99 " + fmt_ns(m.stats.p99)},
      {"", "max " + fmt_ns(m.stats.max)},
  };
  if (zeros) items.push_back({"", std::to_string(zeros) + " at 0 ns, not shown"});
  std::ostringstream body;
  const double T = 10 + legend(body, items, 10, W - 10, 8) + 4;
  const svg::Scale x{lo, hi, L, W - R, true};
  std::vector<int> bins(kBins, 0);
  for (double v : pos)
    bins[size_t(std::clamp(int(std::log(v / lo) / std::log(hi / lo) * kBins), 0, kBins - 1))]++;
  const int top = *std::max_element(bins.begin(), bins.end());
  const double step = svg::ceil125(std::max(1.0, top / 4.0));
  const svg::Scale y{0, std::ceil(top / step) * step, T + PH, T, false};
  std::ostringstream o;
  o << svg_open(W, T + PH + B, m.name) << body.str() << area(L, T, W - L - R, PH);
  y_axis(
      o, y, L, W - R, [](double v) { return std::to_string(int(v)); }, "samples", 18);
  x_axis(o, x, T, T + PH, fmt_ns, "latency (log scale)", R - 4);
  const double bw = (W - L - R) / kBins;
  for (int i = 0; i < kBins; ++i) {
    const int n = bins[size_t(i)];
    if (!n) continue;
    const double b0 = lo * std::pow(hi / lo, double(i) / kBins),
                 b1 = lo * std::pow(hi / lo, double(i + 1) / kBins);
    o << "<rect class=\"bar\" x=\"" << num(L + i * bw + 0.5) << "\" y=\"" << num(y(n)) << "\" width=\""
      << num(bw - 1) << "\" height=\"" << num(y(0) - y(n)) << "\"><title>" << n << " samples, "
      << esc(fmt_ns(b0)) << " to " << esc(fmt_ns(b1)) << "</title></rect>\n";
  }
  o << line(x(m.stats.median), T, x(m.stats.median), T + PH, "median");
  o << line(x(m.stats.p99), T, x(m.stats.p99), T + PH, "p99");
  o << "</svg>\n";
  return o.str();
}

// Every measured metric of a device as one row on a shared log axis: min-max line, p25-p75 box, median
// and p99 ticks; the median's value in a column on the right.
std::string overview(const std::vector<const LatencyMetric*>& ms) {
  constexpr double W = 1100, Row = 30, B = 54, ValueCol = 110;
  double name_w = 0, lo = 0, hi = 0;
  for (const LatencyMetric* m : ms) {
    name_w = std::max(name_w, label_width(m->name));
    for (double v : m->ns)
      if (v > 0) lo = lo > 0 ? std::min(lo, v) : v, hi = std::max(hi, v);
  }
  if (lo <= 0) lo = 1, hi = 10;
  log_range(lo, hi, lo, hi);
  const double L = name_w + 24, R = W - ValueCol - 16;
  std::ostringstream body;
  const double T = 10 +
                   legend(body,
                          {{kSwatchRange, "min to max"},
                           {kSwatchIqr, "middle half (p25 to p75)"},
                           {kSwatchMedian, "median"},
                           {kSwatchP99, "p99"}},
                          L, R, 8) +
                   6;
  const double PH = Row * double(ms.size());
  const svg::Scale x{lo, hi, L, R, true};
  std::ostringstream o;
  o << svg_open(W, T + PH + B, "overview") << body.str();
  o << text(W - 10, T - 10, "median", "end", "axis-title");
  o << area(L, T, R - L, PH);
  x_axis(o, x, T, T + PH, fmt_ns, "latency (log scale)", 40);
  for (size_t i = 0; i < ms.size(); ++i) {
    const LatencyMetric& m = *ms[i];
    const double cy = T + Row * (double(i) + 0.5);
    o << text(L - 12, cy + kFont * 0.35, m.name, "end");
    o << text(W - 10, cy + kFont * 0.35, fmt_ns(m.stats.median), "end");
    std::vector<double> s = m.ns;
    std::sort(s.begin(), s.end());
    if (s.back() <= 0) continue;  // all 0 ns: nothing to place on a log axis
    o << "<g><title>"
      << esc(m.name + ": min " + fmt_ns(s.front()) + ", p25 " + fmt_ns(quantile(s, 0.25)) + ", median " +
             fmt_ns(m.stats.median) + ", p75 " + fmt_ns(quantile(s, 0.75)) + ", p99 " + fmt_ns(m.stats.p99) +
             ", max " + fmt_ns(s.back()))
      << "</title>\n";
    o << line(x(s.front()), cy, x(s.back()), cy, "range");
    const double a = x(quantile(s, 0.25)), b = x(quantile(s, 0.75));
    o << "<rect class=\"iqr\" x=\"" << num(a) << "\" y=\"" << num(cy - 7) << "\" width=\""
      << num(std::max(1.5, b - a)) << "\" height=\"14\"/>\n";
    o << line(x(m.stats.median), cy - 11, x(m.stats.median), cy + 11, "median");
    o << line(x(m.stats.p99), cy - 11, x(m.stats.p99), cy + 11, "p99");
    o << "</g>\n";
  }
  o << "</svg>\n";
  return o.str();
}

// Median GB/s by copy size, one line per direction, min-max bars; every size labelled. The y axis is
// logarithmic when the medians span more than 30x (small copies are dominated by their fixed cost).
std::string bandwidth_chart(const std::vector<BandwidthPoint>& pts) {
  std::vector<std::string> dirs;
  std::vector<uint64_t> sizes;
  double ymin = 0, ymax = 0, mmin = 0, mmax = 0;
  for (const BandwidthPoint& b : pts) {
    if (std::find(dirs.begin(), dirs.end(), b.direction) == dirs.end()) dirs.push_back(b.direction);
    if (std::find(sizes.begin(), sizes.end(), b.bytes) == sizes.end()) sizes.push_back(b.bytes);
    ymin = ymin > 0 ? std::min(ymin, b.stats.min) : b.stats.min, ymax = std::max(ymax, b.stats.max);
    mmin = mmin > 0 ? std::min(mmin, b.stats.median) : b.stats.median, mmax = std::max(mmax, b.stats.median);
  }
  std::sort(sizes.begin(), sizes.end());
  constexpr double W = 1100, L = 90, R = W - 30, PH = 280;
  const double smin = double(sizes.front()), smax = double(sizes.back());
  const svg::Scale x{smin / 1.6, smax * 1.6, L, R, true};
  // Size labels: horizontal while they fit between neighbours, else vertical.
  double widest = 0, spacing = R - L;
  for (size_t i = 0; i < sizes.size(); ++i) {
    widest = std::max(widest, label_width(format_bytes(sizes[i])));
    if (i) spacing = std::min(spacing, x(double(sizes[i])) - x(double(sizes[i - 1])));
  }
  const bool vertical = widest + 12 > spacing;
  const double label_room = vertical ? widest + 10 : 24;
  const double B = label_room + 40;
  std::vector<LegendItem> items;
  for (size_t d = 0; d < dirs.size(); ++d) {
    const std::string name = dirs[d] == "h2d"   ? "h2d: host to device"
                             : dirs[d] == "d2h" ? "d2h: device to host"
                             : dirs[d] == "d2d" ? "d2d: device to device"
                                                : dirs[d];
    items.push_back(
        {std::string("<line x1=\"0\" y1=\"6.5\" x2=\"18\" y2=\"6.5\" stroke-width=\"2.5\" stroke=\"") +
             kDirColor[d % 3] + "\"/><circle cx=\"9\" cy=\"6.5\" r=\"3.5\" fill=\"" + kDirColor[d % 3] +
             "\"/>",
         name});
  }
  items.push_back(
      {"<line class=\"whisker\" x1=\"9\" y1=\"0\" x2=\"9\" y2=\"13\"/>", "min to max of the copies"});
  std::ostringstream body;
  const double T = 10 + legend(body, items, L, R, 8) + 6;
  const bool logy = ymin > 0 && mmax / std::max(mmin, 1e-12) > 30;
  const svg::Scale y = logy ? svg::Scale{svg::floor125(ymin), svg::ceil125(ymax), T + PH, T, true}
                            : svg::Scale{0, svg::ceil125(std::max(ymax, 1e-9)), T + PH, T, false};
  std::ostringstream o;
  o << svg_open(W, T + PH + B, "bandwidth") << body.str() << area(L, T, R - L, PH);
  y_axis(o, y, L, R, fmt_gbps_tick,
         logy ? "GB/s (log scale; 1 GB = 10\xE2\x81\xB9 bytes)" : "GB/s (1 GB = 10\xE2\x81\xB9 bytes)", 22);
  for (uint64_t s : sizes) {
    const double px = x(double(s));
    o << line(px, T, px, T + PH, "grid") << line(px, T + PH, px, T + PH + 7, "tick");
    if (vertical)
      o << "<text text-anchor=\"end\" transform=\"translate(" << num(px + kFont * 0.35) << ","
        << num(T + PH + 11) << ") rotate(-90)\">" << esc(format_bytes(s)) << "</text>\n";
    else
      o << text(px, T + PH + 21, format_bytes(s), "middle");
  }
  o << text((L + R) / 2, T + PH + label_room + 24, "copy size (log scale)", "middle", "axis-title");
  for (size_t d = 0; d < dirs.size(); ++d) {
    std::string points;
    std::ostringstream marks;
    for (const BandwidthPoint& b : pts) {
      if (b.direction != dirs[d]) continue;
      const double px = x(double(b.bytes)), py = y(b.stats.median);
      points += num(px) + "," + num(py) + " ";
      marks << "<g><title>"
            << esc(b.direction + " " + format_bytes(b.bytes) + ": median " + fmt_gbps(b.stats.median) +
                   " GB/s, min " + fmt_gbps(b.stats.min) + ", max " + fmt_gbps(b.stats.max) + " (" +
                   std::to_string(b.stats.n) + " copies)")
            << "</title>" << line(px, y(b.stats.min), px, y(b.stats.max), "whisker") << "<circle cx=\""
            << num(px) << "\" cy=\"" << num(py) << "\" r=\"4\" fill=\"" << kDirColor[d % 3] << "\"/></g>\n";
    }
    o << "<polyline class=\"curve\" stroke=\"" << kDirColor[d % 3] << "\" points=\"" << points << "\"/>\n"
      << marks.str();
  }
  o << "</svg>\n";
  return o.str();
}

std::string bandwidth_table(const std::vector<BandwidthPoint>& pts) {
  std::vector<std::string> dirs;
  std::map<uint64_t, std::map<std::string, const BandwidthPoint*>> by;
  for (const BandwidthPoint& b : pts) {
    if (std::find(dirs.begin(), dirs.end(), b.direction) == dirs.end()) dirs.push_back(b.direction);
    by[b.bytes][b.direction] = &b;
  }
  std::ostringstream o;
  o << "<table class=\"numbers\">\n<tr><th>size</th>";
  for (const std::string& d : dirs) o << "<th>" << esc(d) << " GB/s</th><th>min to max</th>";
  o << "</tr>\n";
  for (const auto& [bytes, row] : by) {
    o << "<tr><td>" << esc(format_bytes(bytes)) << "</td>";
    for (const std::string& d : dirs) {
      const BandwidthPoint* b = row.count(d) ? row.at(d) : nullptr;
      if (!b)
        o << "<td></td><td></td>";
      else
        o << "<td>" << esc(fmt_gbps(b->stats.median)) << "</td><td class=\"dim\">"
          << esc(fmt_gbps(b->stats.min)) << " to " << esc(fmt_gbps(b->stats.max)) << "</td>";
    }
    o << "</tr>\n";
  }
  o << "</table>\n";
  return o.str();
}

std::string summary_table(const LatencyReport& r) {
  std::ostringstream o;
  o << "<table class=\"numbers\">\n<tr><th>metric</th><th class=\"what\">what is timed</th><th>samples</th>"
       "<th>min</th><th>median</th><th>p99</th><th>max</th></tr>\n";
  for (const LatencyMetric& m : r.metrics) {
    o << "<tr><td><code>" << esc(m.name) << "</code></td><td class=\"what\">" << esc(m.description)
      << "</td>";
    if (!m.skipped.empty())
      o << "<td colspan=\"5\" class=\"dim\">skipped: " << esc(m.skipped) << "</td></tr>\n";
    else
      o << "<td>" << m.stats.n << "</td><td>" << esc(fmt_ns(m.stats.min)) << "</td><td><b>"
        << esc(fmt_ns(m.stats.median)) << "</b></td><td>" << esc(fmt_ns(m.stats.p99)) << "</td><td>"
        << esc(fmt_ns(m.stats.max)) << "</td></tr>\n";
  }
  o << "</table>\n";
  return o.str();
}

std::string device_line(const LatencyReport& r) {
  const hcq::Properties& p = r.props;
  return r.device + ": " + p.device_name + " (vendor: " + p.vendor +
         (p.software ? "; a GPU API emulated on the CPU)" : ")");
}

const char* kStyle =
    "body{font:15px/1.45 'DejaVu Sans',system-ui,sans-serif;color:#1b1b1b;margin:0;background:#fff}\n"
    "main{max-width:1760px;margin:0 auto;padding:20px 32px 40px}\n"
    "h1{font-size:26px;margin:0 0 10px}h2{font-size:21px;margin:30px 0 8px;padding-top:14px;"
    "border-top:2px solid #ddd}\n"
    "h3{font-size:16px;margin:0 0 6px}p{margin:4px 0 10px}code{font-size:14px}\n"
    ".context{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content minmax(0,1fr);"
    "gap:3px 18px;margin:0 0 8px}\n"
    ".context dt{color:#666}.context dd{margin:0;overflow-wrap:anywhere}\n"
    ".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:26px 40px}\n"
    ".wide{grid-column:1/-1}figure{margin:0}\n"
    ".numbers{border-collapse:collapse;font-variant-numeric:tabular-nums}\n"
    ".numbers td,.numbers th{padding:3px 12px;text-align:right;border-bottom:1px solid #eee;"
    "white-space:nowrap}\n.numbers .what{white-space:normal}\n"
    ".numbers td:first-child,.numbers th:first-child,.numbers .what{text-align:left}\n"
    ".dim,.note{color:#666}\n"
    "svg.plot{width:100%;height:auto;display:block}\n"
    "svg text{font-size:13px;fill:#333}svg .axis-title{fill:#555}\n"
    ".area{fill:none;stroke:#999}line.grid{stroke:#e6e6e6}line.tick{stroke:#999}\n"
    ".bar{fill:#4c78a8}.median{stroke:#111;stroke-width:2.5}.p99{stroke:#d62728;stroke-width:2;"
    "stroke-dasharray:4 2}\n"
    ".range{stroke:#888;stroke-width:1.5}.iqr{fill:#9ecae9;stroke:#4c78a8}\n"
    ".curve{fill:none;stroke-width:2.5}.whisker{stroke:#444;stroke-width:1.2}\n";

}  // namespace

std::string render_html(const std::vector<LatencyReport>& reports, const RunContext& c) {
  std::ostringstream o;
  std::string devices;
  for (const LatencyReport& r : reports) devices += (devices.empty() ? "" : ", ") + r.device;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
       "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"UTF-8\"/>\n"
       "<meta name=\"viewport\" content=\"width=device-width\"/>\n<title>sluice latency: "
    << esc(devices) << "</title>\n<style>\n"
    << kStyle << "</style>\n</head>\n<body>\n<main>\n<h1>sluice latency: " << esc(devices) << "</h1>\n";
  o << "<dl class=\"context\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    o << "<dt>" << esc(k) << "</dt><dd>" << esc(v) << "</dd>\n";
  };
  for (const LatencyReport& r : reports) {
    row("device", device_line(r));
    row("driver", r.props.driver_version.empty() ? "none (host device)" : r.props.driver_version);
  }
  row("host", c.host + (c.cpu.empty() ? "" : ", " + c.cpu));
  row("system", c.os);
  row("date", c.date);
  row("sluice", c.version);
  row("command", c.command);
  if (!reports.empty())
    row("samples", std::to_string(reports.front().iters) + " per latency, after " +
                       std::to_string(reports.front().warmup) + " warm-up");
  o << "</dl>\n<p class=\"note\">Latency axes are logarithmic. Each histogram has " << kBins
    << " bins of equal width on that axis, from the fastest to the slowest sample: nothing is clipped. "
       "p99: the 99th percentile. Times are on the host clock; the queue-to-queue intervals come "
       "from device timestamps.</p>\n";
  for (const LatencyReport& r : reports) {
    o << "<h2>" << esc(device_line(r)) << "</h2>\n<div class=\"charts\">\n";
    o << "<figure class=\"wide\">" << summary_table(r) << "</figure>\n";
    std::vector<const LatencyMetric*> measured, plotted;
    std::string zero;  // metrics whose every sample is 0 ns
    for (const LatencyMetric& m : r.metrics) {
      if (!m.skipped.empty() || m.ns.empty()) continue;
      measured.push_back(&m);
      if (m.stats.max > 0)
        plotted.push_back(&m);
      else
        zero += (zero.empty() ? "" : ", ") + m.name;
    }
    if (!measured.empty()) {
      o << "<figure class=\"wide\"><h3>All latencies on one axis</h3>\n" << overview(measured);
      if (!zero.empty())
        o << "<p class=\"note\">Every sample of " << esc(zero)
          << " is 0 ns: the interval is below the resolution of the device's clock.</p>\n";
      o << "</figure>\n";
    }
    for (const LatencyMetric* m : plotted)
      o << "<figure><h3><code>" << esc(m->name) << "</code>: " << esc(m->description) << "</h3>\n"
        << histogram(*m) << "</figure>\n";
    if (!r.bandwidth.empty())
      o << "<figure class=\"wide\"><h3>Copy bandwidth by size (median GB/s)</h3>\n"
        << bandwidth_chart(r.bandwidth) << bandwidth_table(r.bandwidth) << "</figure>\n";
    o << "</div>\n";
  }
  o << "</main>\n</body>\n</html>\n";
  return o.str();
}

}  // namespace sluice::cli
