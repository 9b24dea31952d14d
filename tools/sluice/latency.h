#pragma once
// `sluice latency`'s measurements of one device, shared by the text/JSON output (latency.cpp) and the
// HTML report (html.cpp). Times are host-clock nanoseconds (hcq::now_ns, the clock device timestamps use).
#include <cstdint>
#include <string>
#include <vector>

#include "tools/sluice/cli.h"

namespace sluice::cli {

struct LatencyMetric {
  std::string name;         // "submit_signal"
  std::string description;  // "submit -> signal round trip"
  std::vector<double> ns;   // one sample per iteration, after the warm-up
  Stats stats;
  std::string skipped;  // why it was not measured (empty: measured)
};

struct BandwidthPoint {
  std::string direction;  // "h2d", "d2h", "d2d"
  uint64_t bytes = 0;
  std::vector<double> gbps;  // one sample per iteration (GB/s = 1e9 bytes per second)
  Stats stats;
};

struct LatencyReport {
  std::string device;
  int iters = 0, warmup = 0;
  std::vector<LatencyMetric> metrics;
  std::vector<BandwidthPoint> bandwidth;
};

// A self-contained XHTML page (inline SVG, inline CSS, no external resources): per device, a histogram of
// each metric's samples and the bandwidth curves.
std::string render_html(const std::vector<LatencyReport>& reports);

}  // namespace sluice::cli
