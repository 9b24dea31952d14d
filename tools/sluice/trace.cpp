#include "tools/sluice/trace.h"

#include "runtime/profile.h"

namespace sluice::cli {

void trace_device(hcq::Device& dev) {
  if (profiling_enabled() && !dev.profiling()) {
    dev.take_profile();  // drop records of work before tracing began
    dev.set_profiling(true);
  }
}

}  // namespace sluice::cli
