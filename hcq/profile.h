#pragma once
// hcq::ProfileRecord — one timed command (DESIGN.md §4, Profiling).
//
// With Device::set_profiling(true), a device records the device-side start and end (host clock, ns) of
// every exec and copy its queues run; Device::take_profile() hands the records over. A later tool turns
// them into a Perfetto trace.
#include <cstdint>
#include <string>

namespace sluice::hcq {

struct ProfileRecord {
  std::string device;  // "CPU"
  std::string queue;   // "compute:0", "copy:0"
  std::string name;    // the kernel's name, or "copy"
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t bytes = 0;  // copies: bytes moved
};

}  // namespace sluice::hcq
