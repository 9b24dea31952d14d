#pragma once
// `sluice latency`'s measurements of one device, shared by the text/JSON output (latency.cpp) and the
// HTML report (html.cpp). Times are host-clock nanoseconds (hcq::now_ns, the clock device timestamps use).
#include <cstdint>
#include <string>
#include <vector>

#include "tools/sluice/cli.h"

namespace sluice::cli {

// What `--metric` can name: the latencies, then the copy directions. `line` explains it in one line.
struct MetricInfo {
  const char* name;  // "submit_signal", "h2d"
  const char* line;  // "submit a queue that only signals, until the host sees the signal"
  bool bandwidth;    // a copy direction (GB/s by size), not a latency
};
const std::vector<MetricInfo>& latency_metrics();

struct LatencyMetric {
  std::string name;         // "submit_signal"
  std::string description;  // one line: what is timed, from where to where
  std::vector<double> ns;   // one sample per iteration, after the warm-up
  Stats stats;
  std::string skipped;  // why it was not measured (empty: measured)
};

struct BandwidthPoint {
  std::string direction;  // "h2d", "d2h", "d2d"
  uint64_t bytes = 0;
  std::vector<double> gbps;  // one sample per copy (GB/s = 1e9 bytes per second)
  Stats stats;
};

struct LatencyReport {
  std::string device;     // registry name: "CPU"
  hcq::Properties props;  // its hardware, vendor and driver
  int iters = 0, warmup = 0;
  std::vector<LatencyMetric> metrics;
  std::vector<BandwidthPoint> bandwidth;
};

// What to measure: the metrics `--metric` selected (latency_metrics() names), the copy sizes, and how
// often. Each bandwidth point takes between 3 and max_copies copies, fewer for large sizes.
struct LatencySpec {
  int iters = 1000, warmup = 100;
  std::vector<std::string> metrics;
  std::vector<uint64_t> sizes;
  int max_copies = 100;
  bool selected(const std::string& metric) const;
};
// Measures `device` (a registry name) as `spec` says; steps `progress` once per metric and per copy
// size and direction. Throws what the device throws (a timeout, a fault).
LatencyReport measure_latency(const std::string& device, const LatencySpec& spec, Progress& progress);
size_t latency_steps(const LatencySpec& spec);  // the steps measure_latency takes

// Where, when and how the measurements were made: the report's header and the JSON's "context".
struct RunContext {
  std::string version;  // sluice's: "0.1.0"
  std::string host;     // host name
  std::string os;       // "Linux 6.1.0-18-amd64 x86_64"
  std::string cpu;      // the host CPU's model name, "" when unknown
  std::string date;     // UTC: "2025-11-26 13:20:05 UTC"
  std::string command;  // the options as a command line: "sluice latency --device CPU --quick"
};

// A self-contained XHTML page (inline SVG and CSS, no script, no external resource): the run's context,
// then per device a summary table, every metric on one log-scale axis, a log-binned histogram per metric
// and the bandwidth curves with every size labelled.
std::string render_html(const std::vector<LatencyReport>& reports, const RunContext& context);

}  // namespace sluice::cli
