// The latency report as one XHTML file: inline CSS and SVG only, so it opens offline and parses as XML.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "tools/sluice/latency.h"

namespace sluice::cli {
namespace {

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

constexpr int kW = 640, kH = 170, kL = 50, kR = 10, kT = 10, kB = 30;  // plot size and margins
constexpr int kBins = 40;

// A histogram of the samples between min and p99 (the slowest 1% go into the last bin), with the
// median marked.
std::string histogram(const LatencyMetric& m) {
  std::ostringstream o;
  const double lo = m.stats.min, hi = std::max(m.stats.p99, lo + 1);
  std::vector<int> bins(kBins, 0);
  for (double v : m.ns) bins[size_t(std::clamp(int((v - lo) / (hi - lo) * kBins), 0, kBins - 1))]++;
  const int top = std::max(1, *std::max_element(bins.begin(), bins.end()));
  const double pw = kW - kL - kR, ph = kH - kT - kB, bw = pw / kBins;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"" << kW << "\" height=\"" << kH
    << "\" data-metric=\"" << esc(m.name) << "\">\n";
  o << "<rect x=\"" << kL << "\" y=\"" << kT << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" class=\"frame\"/>\n";
  for (int i = 0; i < kBins; ++i) {
    if (!bins[size_t(i)]) continue;
    const double h = ph * bins[size_t(i)] / top;
    o << "<rect class=\"bar\" x=\"" << num(kL + i * bw) << "\" y=\"" << num(kT + ph - h) << "\" width=\""
      << num(bw - 1) << "\" height=\"" << num(h) << "\"><title>" << bins[size_t(i)]
      << " samples</title></rect>\n";
  }
  const double mx = kL + (m.stats.median - lo) / (hi - lo) * pw;
  o << "<line class=\"median\" x1=\"" << num(mx) << "\" x2=\"" << num(mx) << "\" y1=\"" << kT << "\" y2=\""
    << kT + ph << "\"/>\n";
  o << "<text x=\"" << kL << "\" y=\"" << kH - 10 << "\">" << esc(format_ns(lo)) << "</text>\n";
  o << "<text x=\"" << num(mx) << "\" y=\"" << kH - 10 << "\" text-anchor=\"middle\">median "
    << esc(format_ns(m.stats.median)) << "</text>\n";
  o << "<text x=\"" << kW - kR << "\" y=\"" << kH - 10 << "\" text-anchor=\"end\">p99 " << esc(format_ns(hi))
    << "</text>\n";
  o << "<text x=\"" << kL - 5 << "\" y=\"" << kT + 10 << "\" text-anchor=\"end\">" << top << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

// Median GB/s against size (log scale), one line per direction.
std::string bandwidth_plot(const std::vector<BandwidthPoint>& pts) {
  std::map<std::string, std::vector<const BandwidthPoint*>> by;
  double top = 0;
  uint64_t smin = UINT64_MAX, smax = 0;
  for (const BandwidthPoint& b : pts) {
    by[b.direction].push_back(&b);
    top = std::max(top, b.stats.max);
    smin = std::min(smin, b.bytes), smax = std::max(smax, b.bytes);
  }
  top = std::max(top, 1e-9);
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  const double l0 = std::log2(double(smin)), l1 = std::max(std::log2(double(smax)), l0 + 1);
  auto x = [&](uint64_t s) { return kL + (std::log2(double(s)) - l0) / (l1 - l0) * pw; };
  auto y = [&](double g) { return kT + ph - g / top * ph; };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"" << kW << "\" height=\"" << kH
    << "\" data-metric=\"bandwidth\">\n";
  o << "<rect x=\"" << kL << "\" y=\"" << kT << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" class=\"frame\"/>\n";
  int idx = 0;
  for (const auto& [dir, v] : by) {
    std::string points;
    for (const BandwidthPoint* b : v) points += num(x(b->bytes)) + "," + num(y(b->stats.median)) + " ";
    o << "<polyline class=\"line c" << idx << "\" points=\"" << points << "\"/>\n";
    for (const BandwidthPoint* b : v)
      o << "<circle class=\"c" << idx << "\" cx=\"" << num(x(b->bytes)) << "\" cy=\""
        << num(y(b->stats.median)) << "\" r=\"3\"><title>"
        << esc(dir + " " + format_bytes(b->bytes) + ": " + num(b->stats.median) + " GB/s")
        << "</title></circle>\n";
    o << "<text class=\"c" << idx << "\" x=\"" << kL + 8 << "\" y=\"" << kT + 14 + 14 * idx << "\">"
      << esc(dir) << "</text>\n";
    ++idx;
  }
  o << "<text x=\"" << kL << "\" y=\"" << kH - 10 << "\">" << esc(format_bytes(smin)) << "</text>\n";
  o << "<text x=\"" << kW - kR << "\" y=\"" << kH - 10 << "\" text-anchor=\"end\">" << esc(format_bytes(smax))
    << "</text>\n";
  o << "<text x=\"" << kL - 5 << "\" y=\"" << kT + 10 << "\" text-anchor=\"end\">" << num(top) << "</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace

std::string render_html(const std::vector<LatencyReport>& reports) {
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n"
       "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"UTF-8\"/>\n"
       "<title>sluice latency</title>\n<style>\n"
       "body{font-family:sans-serif;max-width:700px;margin:2em auto;color:#222}\n"
       "table{border-collapse:collapse}td,th{padding:2px "
       "8px;text-align:right}td:first-child{text-align:left}\n"
       ".plot text{font-size:11px;fill:#444}.frame{fill:none;stroke:#bbb}.bar{fill:#4a7bd0}\n"
       ".median{stroke:#d04a4a;stroke-width:2}.line{fill:none;stroke-width:2}\n"
       "polyline.c0{stroke:#4a7bd0}polyline.c1{stroke:#d04a4a}polyline.c2{stroke:#3a9a4a}\n"
       "circle.c0,text.c0{fill:#4a7bd0}circle.c1,text.c1{fill:#d04a4a}circle.c2,text.c2{fill:#3a9a4a}\n"
       "</style>\n</head>\n<body>\n<h1>sluice latency</h1>\n";
  for (const LatencyReport& r : reports) {
    o << "<h2>" << esc(r.device) << "</h2>\n<p>" << r.iters << " iterations after " << r.warmup
      << " warm-up. Histograms run from the minimum to the 99th percentile; the red line is the "
         "median.</p>\n";
    o << "<table>\n<tr><th>latency</th><th>min</th><th>median</th><th>p99</th><th>max</th></tr>\n";
    for (const LatencyMetric& m : r.metrics) {
      o << "<tr><td>" << esc(m.name) << "</td>";
      if (!m.skipped.empty())
        o << "<td colspan=\"4\">skipped: " << esc(m.skipped) << "</td></tr>\n";
      else
        o << "<td>" << esc(format_ns(m.stats.min)) << "</td><td>" << esc(format_ns(m.stats.median))
          << "</td><td>" << esc(format_ns(m.stats.p99)) << "</td><td>" << esc(format_ns(m.stats.max))
          << "</td></tr>\n";
    }
    o << "</table>\n";
    for (const LatencyMetric& m : r.metrics) {
      if (!m.skipped.empty() || m.ns.empty()) continue;
      o << "<h3>" << esc(m.name) << ": " << esc(m.description) << "</h3>\n" << histogram(m);
    }
    if (!r.bandwidth.empty())
      o << "<h3>copy bandwidth (median GB/s by size)</h3>\n" << bandwidth_plot(r.bandwidth);
  }
  o << "</body>\n</html>\n";
  return o.str();
}

}  // namespace sluice::cli
