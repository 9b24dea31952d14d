// `sluice latency`: queue-level latencies (min/median/p99/max after a warm-up) and copy bandwidth of a
// device (latency_measure.cpp), as text, JSON with the raw samples and the run's context, and an HTML
// report (html.cpp).
#include <sys/utsname.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include "runtime/debug_report.h"
#include "runtime/saved_plan.h"
#include "tools/sluice/latency.h"

namespace sluice::cli {
namespace {

struct Options {
  std::string device, html, metric, sizes;
  int iters = 0;
  bool quick = false, json = false;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  for (size_t a = 0; a <= s.size();) {
    size_t b = s.find(',', a);
    if (b == std::string::npos) b = s.size();
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

std::vector<std::string> parse_metrics(const std::string& spec) {
  std::vector<std::string> all, out;
  for (const MetricInfo& m : latency_metrics()) all.push_back(m.name);
  if (spec.empty()) return all;
  for (const std::string& m : split(spec)) {
    if (std::find(all.begin(), all.end(), m) == all.end()) {
      std::string names;
      for (const std::string& n : all) names += (names.empty() ? "" : ", ") + n;
      throw UsageError("--metric: no metric is called '" + m + "' (metrics: " + names + ")");
    }
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  }
  if (out.empty()) throw UsageError("--metric names no metric");
  return out;
}

// "4096", "64K", "16M", "1G" (binary units; "KiB", "MB" and "B" suffixes read the same).
uint64_t parse_size(const std::string& s) {
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  std::string unit = s.substr(digits);
  for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'I') unit.pop_back();
  const std::map<std::string, int> shift = {{"", 0}, {"B", 0}, {"K", 10}, {"M", 20}, {"G", 30}};
  if (digits == 0 || digits > 9 || !shift.count(unit))
    throw UsageError("--sizes: '" + s + "' is not a size (sizes read like 4096, 64K, 16M, 1G)");
  const uint64_t v = std::stoull(s.substr(0, digits)) << shift.at(unit);
  if (v == 0 || v > (uint64_t(4) << 30))
    throw UsageError("--sizes: " + s + " must be between 1 byte and 4 GiB");
  return v;
}

std::vector<uint64_t> parse_sizes(const std::string& spec, bool quick) {
  std::vector<uint64_t> out;
  if (spec.empty()) {  // 4 KiB .. 256 MiB (quick: 16 MiB) in steps of 4x
    for (uint64_t size = 4096; size <= (uint64_t(quick ? 16 : 256) << 20); size *= 4) out.push_back(size);
    return out;
  }
  for (const std::string& s : split(spec)) out.push_back(parse_size(s));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.empty()) throw UsageError("--sizes names no size");
  return out;
}

RunContext run_context(const Options& o) {
  RunContext c;
  c.version = sluice_version();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) c.host = host;
  utsname u{};
  if (uname(&u) == 0) c.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; c.cpu.empty() && std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      c.cpu = line.substr(line.find(':') + 2);
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  c.date = date;
  c.command = "sluice latency";
  if (!o.device.empty()) c.command += " --device " + shell_quote(o.device);
  if (o.quick) c.command += " --quick";
  if (o.iters > 0) c.command += " --iters " + std::to_string(o.iters);
  if (!o.metric.empty()) c.command += " --metric " + shell_quote(o.metric);
  if (!o.sizes.empty()) c.command += " --sizes " + shell_quote(o.sizes);
  return c;
}

nlohmann::json to_json(const LatencyReport& r) {
  nlohmann::json j = {{"device", r.device},
                      {"device_name", r.props.device_name},
                      {"vendor", r.props.vendor},
                      {"driver_version", r.props.driver_version},
                      {"software", r.props.software},
                      {"iters", r.iters},
                      {"warmup", r.warmup}};
  j["latency"] = nlohmann::json::array();
  for (const LatencyMetric& m : r.metrics) {
    nlohmann::json e = {{"name", m.name}, {"description", m.description}};
    if (!m.skipped.empty())
      e["skipped"] = m.skipped;
    else
      e.update({{"samples", m.stats.n},
                {"min_ns", m.stats.min},
                {"median_ns", m.stats.median},
                {"p99_ns", m.stats.p99},
                {"max_ns", m.stats.max},
                {"samples_ns", m.ns}});
    j["latency"].push_back(e);
  }
  j["bandwidth"] = nlohmann::json::array();
  for (const BandwidthPoint& b : r.bandwidth)
    j["bandwidth"].push_back({{"direction", b.direction},
                              {"bytes", b.bytes},
                              {"samples", b.stats.n},
                              {"min_gbps", b.stats.min},
                              {"median_gbps", b.stats.median},
                              {"max_gbps", b.stats.max},
                              {"samples_gbps", b.gbps}});
  return j;
}

nlohmann::json context_json(const RunContext& c, const Options& o, const LatencySpec& spec) {
  return {{"sluice_version", c.version},
          {"host", c.host},
          {"os", c.os},
          {"cpu", c.cpu},
          {"date", c.date},
          {"command", c.command},
          {"options",
           {{"device", o.device.empty() ? "default" : o.device},
            {"iters", spec.iters},
            {"warmup", spec.warmup},
            {"quick", o.quick},
            {"metrics", spec.metrics},
            {"sizes", spec.sizes}}}};
}

void print_human(const LatencyReport& r) {
  const hcq::Properties& p = r.props;
  std::printf("%s: %s\n", r.device.c_str(), p.device_name.c_str());
  const std::string about = "vendor " + p.vendor +
                            (p.driver_version.empty() ? "" : ", driver " + p.driver_version) +
                            (p.software ? "; emulated on the CPU" : "");
  for (const std::string& line : wrap(about, 76)) std::printf("  %s\n", line.c_str());
  std::printf("  %d samples per latency after %d warm-up\n", r.iters, r.warmup);
  if (!r.metrics.empty())
    std::printf("  %-20s %10s %10s %10s %10s\n", "latency", "min", "median", "p99", "max");
  for (const LatencyMetric& m : r.metrics) {
    if (!m.skipped.empty()) {
      std::printf("  %-20s skipped: %s\n", m.name.c_str(), m.skipped.c_str());
      continue;
    }
    std::printf("  %-20s %10s %10s %10s %10s\n", m.name.c_str(), duration_str(m.stats.min, 1).c_str(),
                duration_str(m.stats.median, 1).c_str(), duration_str(m.stats.p99, 1).c_str(),
                duration_str(m.stats.max, 1).c_str());
  }
  std::vector<std::string> dirs;
  std::map<uint64_t, std::map<std::string, double>> median;
  for (const BandwidthPoint& b : r.bandwidth) {
    if (std::find(dirs.begin(), dirs.end(), b.direction) == dirs.end()) dirs.push_back(b.direction);
    median[b.bytes][b.direction] = b.stats.median;
  }
  if (dirs.empty()) return;
  std::printf("  %-20s", "bandwidth GB/s");
  for (const std::string& d : dirs) std::printf(" %10s", d.c_str());
  std::printf("\n");
  for (const auto& [bytes, by_dir] : median) {
    std::printf("  %-20s", format_bytes(bytes).c_str());
    for (const std::string& d : dirs) std::printf(" %10.2f", by_dir.at(d));
    std::printf("\n");
  }
}

// One line per metric shown: what it times. 80 columns.
void print_legend(const LatencySpec& spec) {
  std::printf("What each row is (median of the samples; p99: 99th percentile):\n");
  for (const MetricInfo& m : latency_metrics())
    if (spec.selected(m.name)) std::printf("  %-17s %s\n", m.name, m.line);
}

int run(const Options& o) {
  LatencySpec spec;
  spec.metrics = parse_metrics(o.metric);
  spec.sizes = parse_sizes(o.sizes, o.quick);
  if (!o.sizes.empty() && !spec.selected("h2d") && !spec.selected("d2h") && !spec.selected("d2d"))
    throw UsageError("--sizes: --metric selects no copy direction (h2d, d2h, d2d) to measure them with");
  spec.iters = o.iters > 0 ? o.iters : o.quick ? 200 : 1000;
  spec.warmup = std::max(3, spec.iters / 10);
  spec.max_copies = o.quick ? 20 : 100;
  std::vector<std::string> devices =
      o.device.empty() ? std::vector<std::string>{default_device_name()} : select_devices(o.device);
  const RunContext context = run_context(o);
  const bool bar = isatty(STDERR_FILENO) == 1 && !o.json;
  std::vector<LatencyReport> reports;
  for (const std::string& d : devices) {
    Progress progress(d, latency_steps(spec), bar);
    reports.push_back(measure_latency(d, spec, progress));
  }
  if (o.json) {
    nlohmann::json j = {{"context", context_json(context, o, spec)}, {"devices", nlohmann::json::array()}};
    for (const LatencyReport& r : reports) j["devices"].push_back(to_json(r));
    std::cout << j.dump(2) << "\n";
  } else {
    for (const LatencyReport& r : reports) print_human(r);
    print_legend(spec);
  }
  if (!o.html.empty()) {
    std::ofstream f(o.html);
    f << render_html(reports, context);
    if (!f) throw std::runtime_error("cannot write the report to " + o.html);
  }
  return 0;
}

}  // namespace

void add_latency_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("latency", "Queue latencies and copy bandwidth of a device");
  cmd->add_option("--device", o.device, "Devices, comma-separated, or 'all' (default one)");
  cmd->add_option("--iters", o.iters, "Samples per latency (1000; --quick: 200)")->check(at_least(1));
  cmd->add_flag("--quick", o.quick, "200 samples; copy sizes up to 16 MiB");
  cmd->add_option("--metric", o.metric, "Only these metrics, comma-separated (list below)");
  cmd->add_option("--sizes", o.sizes, "Copy sizes, comma-separated: 4096,64K,16M,1G");
  cmd->add_flag("--json", o.json, "JSON on stdout: raw samples and the run's context");
  cmd->add_option("--html", o.html, "Also write a self-contained HTML report here");
  std::string footer =
      "Examples:\n"
      "  sluice latency --quick\n"
      "  sluice latency --device CPU,VULKAN --html report.html\n"
      "  sluice latency --metric submit_signal,h2d --sizes 4K,1M,64M --json\n"
      "Metrics (--metric names them; all by default):\n";
  for (const MetricInfo& m : latency_metrics())
    footer += "  " + std::string(m.name) + std::string(18 - std::string(m.name).size(), ' ') + m.line + "\n";
  footer +=
      "Latencies: min, median, 99th percentile and max of the samples taken after\n"
      "a warm-up (a tenth as many), in host-clock time; the queue-to-queue ones\n"
      "from device timestamps. Bandwidth: GB/s (1e9 bytes/s) per copy size, median\n"
      "of 3 to 100 copies (--quick: 20). Sizes default to 4 KiB..256 MiB in steps\n"
      "of 4x (--quick: up to 16 MiB). A progress bar goes to stderr when it is a\n"
      "terminal, except under --json.\n" +
      exit_codes_help("a device failed during the measurement");
  cmd->footer(footer);
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
