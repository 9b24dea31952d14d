#include "runtime/debug_report.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "base/debug.h"
#include "base/log.h"

namespace sluice {
namespace {

// Across every realize and replay of the process, so numbers and the cumulative time run on.
std::mutex g_mu;
uint64_t g_runs = 0;
double g_cum_ns = 0;

std::string mem_in_use(const std::vector<hcq::Device*>& devices, const std::string& name) {
  for (hcq::Device* d : devices)
    if (d->name() == name) return bytes_str(d->allocator().in_use_bytes());
  return "-";
}

}  // namespace

std::string duration_str(double ns, int decimals) {
  char b[32];
  if (ns < 1e3)
    std::snprintf(b, sizeof b, "%.0f ns", ns);
  else if (ns < 1e6)
    std::snprintf(b, sizeof b, "%.*f us", decimals, ns / 1e3);
  else if (ns < 1e9)
    std::snprintf(b, sizeof b, "%.*f ms", decimals, ns / 1e6);
  else
    std::snprintf(b, sizeof b, "%.2f s", ns / 1e9);
  return b;
}

std::string bytes_str(uint64_t bytes) {
  char b[32];
  const double v = double(bytes);
  if (bytes < 1000)
    std::snprintf(b, sizeof b, "%llu B", (unsigned long long)bytes);
  else if (v < 1e6)
    std::snprintf(b, sizeof b, "%.1f KB", v / 1e3);
  else if (v < 1e9)
    std::snprintf(b, sizeof b, "%.2f MB", v / 1e6);
  else
    std::snprintf(b, sizeof b, "%.2f GB", v / 1e9);
  return b;
}

double report_kernel_runs(const char* label, const std::vector<hcq::ProfileRecord>& records,
                          const std::vector<RealizeReport::KernelRun>& kernels,
                          const std::vector<hcq::Device*>& devices) {
  const bool lines = debug_level() >= 2;
  std::vector<bool> timed(kernels.size(), false);
  double total = 0;
  std::lock_guard lock(g_mu);
  for (const hcq::ProfileRecord& r : records) {
    const double ns = double(r.end_ns - r.start_ns);
    total += ns;
    if (!lines) continue;
    const unsigned long long n = ++g_runs;
    g_cum_ns += ns;
    const std::string mem = mem_in_use(devices, r.device), t = duration_str(ns), cum = duration_str(g_cum_ns);
    const double gbps = ns > 0 ? double(r.bytes) / ns : 0;
    if (r.name == "copy") {
      log_printf(LogLevel::Info, "%-7s #%-4llu %-8s %-26s %8s  mem %9s  %10s  cum %10s  %22s %8.2f GB/s",
                 label, n, r.device.c_str(), "copy", bytes_str(r.bytes).c_str(), mem.c_str(), t.c_str(),
                 cum.c_str(), "", gbps);
      continue;
    }
    size_t k = 0;
    while (k < kernels.size() && (timed[k] || kernels[k].name != r.name || kernels[k].device != r.device))
      ++k;
    if (k == kernels.size()) {  // not one of ours (another thread's, say): what the record says
      log_printf(LogLevel::Info, "%-7s #%-4llu %-8s %-26s %8s  mem %9s  %10s  cum %10s", label, n,
                 r.device.c_str(), r.name.c_str(), "", mem.c_str(), t.c_str(), cum.c_str());
      continue;
    }
    timed[k] = true;
    const RealizeReport::KernelRun& kr = kernels[k];
    log_printf(
        LogLevel::Info,
        "%-7s #%-4llu %-8s %-26s %3zu bufs  mem %9s  %10s  cum %10s  %8.2f GFLOP/s %8.2f GB/s  %s  [%s]",
        label, n, r.device.c_str(), kr.name.c_str(), kr.buffers, mem.c_str(), t.c_str(), cum.c_str(),
        ns > 0 ? double(kr.flops) / ns : 0, ns > 0 ? double(kr.bytes) / ns : 0, kr.metadata.c_str(),
        kr.opts.c_str());
  }
  if (!lines) return total;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const RealizeReport::KernelRun& kr = kernels[k];
    if (timed[k] || kr.work_groups == 0) continue;
    log_printf(LogLevel::Info,
               "%-7s #%-4llu %-8s %-26s %3zu bufs  mem %9s  %10s  (no device timestamps)  %s  [%s]", label,
               (unsigned long long)++g_runs, kr.device.c_str(), kr.name.c_str(), kr.buffers,
               mem_in_use(devices, kr.device).c_str(), "-", kr.metadata.c_str(), kr.opts.c_str());
  }
  return total;
}

}  // namespace sluice
