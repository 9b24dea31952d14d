#pragma once
// Profiling of what the subcommands submit themselves: with $SLUICE_PROFILE set (runtime/profile.h),
// trace_device turns on profiling for a device the subcommand uses directly through hcq (queue checks,
// latency probes), so its execs and copies land in the Perfetto trace the runtime writes at exit.
// Main thread only.
#include "hcq/device.h"

namespace sluice::cli {

void trace_device(hcq::Device& dev);

}  // namespace sluice::cli
