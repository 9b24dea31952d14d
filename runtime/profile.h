#pragma once
// Profiling traces (DESIGN.md §4-§5): SLUICE_PROFILE=trace.json makes every device profile its commands
// (hcq::ProfileRecord) and the runtime time its own phases, and writes both, at process exit, as a
// Chrome / Perfetto trace: {"traceEvents": [...]}, complete events ("ph": "X") in microseconds from the
// first thing traced. `sluice profile -- cmd` sets the variable.
//
// - Devices: one process per device, one track (tid) per queue ("compute:0", "copy:0", and "transfer"
//   for host<->device copies), one event per kernel or copy. A kernel's args: its device, queue,
//   timeline value ("submission"), the tensor ops it computes ("ops": "MUL,ADD") and its launch
//   ("global", "local": work-groups and work-items per group, [x, y, z]). A copy's: "bytes" and
//   "direction" ("host->device", "device->host", "device->device").
// - Host: process "host", one track per thread that realizes: "schedule", "codegen" (lower and render,
//   the kernels lowered), "compile" (one compiler batch: kernels, compiler runs, cache hits), "submit"
//   (device, timeline value, commands) and "jit replay" (the graph's items), each when it happened.
// - Flows ("ph": "s" / "f", one id each, "bp": "e") from a submit span to each kernel and copy it
//   submitted, so the trace shows what a submit ran and how long it waited.
// - A JIT replay's kernels and copies carry "replay": true.
// One time base: hcq::ProfileRecord times and host spans are both the host's steady clock (hcq::now_ns;
// hcq/profile.h says how each backend gets there), so host and device events line up.
//
// Threading: every function is thread-safe. Failures: write_profile throws Error when the file cannot be
// written; the file appears complete or not at all (written to a temporary name, then renamed).
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hcq/counter.h"
#include "hcq/profile.h"

namespace sluice {

namespace hcq {
class Device;
class HwQueue;
}  // namespace hcq

// True when SLUICE_PROFILE is set or start_profiling() was called.
bool profiling_enabled();
// Turns profiling on for every device realize uses from now on (for a trace written on demand).
void start_profiling();
// Adds records to the trace (realize does, with SLUICE_DEBUG; the rest are taken from the devices).
void record_profile(std::vector<hcq::ProfileRecord> records);
// Waits for the open devices, takes their records and writes every record so far to `path` (they stay,
// so a later write includes them too).
void write_profile(const std::string& path);

// What the runtime adds while profiling_enabled() (realize, the JIT); callers check that first.
using TraceArgs = std::vector<std::pair<std::string, std::variant<bool, int64_t, std::string>>>;
// A host phase that began at `start` and ends now, on the calling thread's track.
void trace_host_span(std::string name, hcq::Clock::time_point start, TraceArgs args = {});
// A submit of q to dev that began at `start`, returned timeline value `submission`, and ends now. ops: for
// each exec and copy of q in record order, the tensor ops it computes (missing or "": none known);
// launch sizes are read from q. replay: a JIT graph replay.
void trace_submit(const hcq::Device& dev, const hcq::HwQueue& q, uint64_t submission,
                  hcq::Clock::time_point start, const std::vector<std::string>& ops, bool replay = false);

}  // namespace sluice
