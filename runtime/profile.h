#pragma once
// Profiling traces (DESIGN.md §4-§5): SLUICE_PROFILE=trace.json makes every device profile its commands
// (hcq::ProfileRecord: device timestamps around each exec and copy) and writes them, at process exit, as a
// Chrome / Perfetto trace: {"traceEvents": [...]} with one process per device, one track (tid) per device
// queue named "compute:0" / "copy:0", and one complete event ("ph": "X", microseconds) per kernel or copy
// with its name, and its device, queue and bytes in args. `sluice profile -- cmd` sets the variable.
//
// Threading: every function is thread-safe. Failures: write_profile throws Error when the file cannot be
// written; the file appears complete or not at all (written to a temporary name, then renamed).
#include <string>
#include <vector>

#include "hcq/profile.h"

namespace sluice {

// True when SLUICE_PROFILE is set or start_profiling() was called.
bool profiling_enabled();
// Turns profiling on for every device realize uses from now on (for a trace written on demand).
void start_profiling();
// Adds records to the trace (realize does, with SLUICE_DEBUG; the rest are taken from the devices).
void record_profile(std::vector<hcq::ProfileRecord> records);
// Waits for the open devices, takes their records and writes every record so far to `path` (they stay,
// so a later write includes them too).
void write_profile(const std::string& path);

}  // namespace sluice
