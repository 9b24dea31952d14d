#pragma once
// SLUICE_DEBUG's reports on what ran (levels in base/debug.h), for realize and JIT replays; through the
// logger (base/log.h) at info level. A level-2 line per timed kernel:
//   realize #2    CPU      E_64_16_4u                   2 bufs  mem   32.8 KB    49.23 us  cum   61.99 us
//        0.33 GFLOP/s     0.67 GB/s  mul,add,relu  [UPCAST axis 1 arg 4]
// (one line: its number among the kernel runs reported in this process, device, name, buffers, device
// memory in use, time, the cumulative time of the kernel runs reported, rates from codegen's estimates,
// the tensor ops it came from, the optimization actions it was built with). "replay" instead of "realize"
// labels a JIT replay's kernels. A copy prints its bytes and GB/s. Without device timestamps (a backend that
// has none) the kernels print untimed.
#include <cstdint>
#include <string>
#include <vector>

#include "hcq/device.h"
#include "runtime/realize.h"

namespace sluice {

// 850 ns, 12.30 us, 4.56 ms, 1.23 s: the unit chosen by magnitude, us and ms with `decimals` places.
std::string duration_str(double ns, int decimals = 2);
// 512 B, 786.4 KB, 1.50 MB, 2.00 GB (decimal units, as GB/s).
std::string bytes_str(uint64_t bytes);

// At SLUICE_DEBUG >= 2, one line per record (execs matched in order with the launched `kernels` of their
// device by name; kernels without a record print untimed); returns the records' device time in ns.
double report_kernel_runs(const char* label, const std::vector<hcq::ProfileRecord>& records,
                          const std::vector<RealizeReport::KernelRun>& kernels,
                          const std::vector<hcq::Device*>& devices);

}  // namespace sluice
