#pragma once
// HIP's driver calls in the shape of the CUDA table (backends/cuda/driver.h), loaded from libamdhip64 at
// run time, so the HIP device is the CUDA device's implementation (backends/cuda/queue.h) over another
// table. The few calls whose shapes differ go through small adapters here: error names returned instead
// of passed back, hipStreamWaitValue64's extra mask (all bits), hipMemcpyAsync's direction
// (hipMemcpyDefault on unified addresses), device attributes translated to hipDeviceAttribute_t, and
// device words for stream waits from hipExtMallocWithFlags(hipMallocSignalMemory), the only memory
// hipStreamWaitValue64 takes, and contexts, which HIP replaces with a current device (a "context" is the
// device ordinal, made current with hipSetDevice), and graph kernel nodes, whose hipKernelNodeParams
// orders the fields of CUDA_KERNEL_NODE_PARAMS differently (dim3 launch sizes first): hcq::Graph replays
// run as HIP graphs (backends/cuda/graph.h).
//
// The adapters call the library that load_hip_driver loaded last: one HIP library per process (tests load
// a simulated one in their own executable).
//
// Library: $SLUICE_HIP_LIBRARY if set, else libamdhip64.so (.so.6, .so.5) from the loader's search path,
// then /opt/rocm/lib (ROCm's standard location).
#include <string>

#include "backends/cuda/driver.h"

namespace sluice::hip {

// The table, loaded once per process; null with *why set ("libamdhip64.so not found: <dlerror>",
// "hipInit failed: hipErrorNoDevice (no ROCm-capable device is detected)", "no HIP device").
const cuda::Driver* hip_driver(std::string* why);
// Loads the table from `library` without caching or initialising (tests). Returns "" or the reason.
std::string load_hip_driver(const std::string& library, cuda::Driver& out);

// The device's gfx architecture ("gfx90a"): hipGetDeviceProperties' gcnArchName without its feature
// suffix (":sramecc+:xnack-"), else the KFD topology's gfx_target_version; "" when neither says.
std::string gfx_arch(const cuda::Driver& drv, int ordinal);
// "gfx" name of a KFD gfx_target_version: 90010 -> "gfx90a", 110000 -> "gfx1100", 90402 -> "gfx942".
std::string gfx_name(unsigned target_version);

}  // namespace sluice::hip
