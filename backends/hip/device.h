#pragma once
// The HIP device (DESIGN.md §4): AMD GPUs through libamdhip64, loaded at run time (driver.h), with kernels
// compiled by clang's amdgcn target for the device's gfx architecture (compiler.h). Queues, signals,
// timestamps, faults and graphs are the CUDA device's (backends/cuda/queue.h) over HIP's calls:
// hipModuleLaunchKernel, hipStreamWriteValue64 / hipStreamWaitValue64 on signal memory, events, and
// hcq::Graph replays as HIP graphs (hipGraphExecKernelNodeSetParams between replays).
#include <memory>
#include <string>

#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice::hip {

// Why no HIP device can be opened here ("" when one can): "libamdhip64.so not found: <dlerror>",
// "hipInit failed: ...", "no HIP device" ($SLUICE_HIP_LIBRARY names another library: driver.h).
std::string absent_reason();
// Named "HIP" for ordinal 0, "HIP:<n>" otherwise. Throws hcq::Error when the ordinal is out of range,
// the architecture is unknown, or the driver fails (naming the call).
std::unique_ptr<hcq::Device> open_device(int ordinal = 0);
// HIP C (renderers/hip.h) with caps() narrowed to the device's own limits.
render::Target target(const hcq::Device& dev);
// The DeviceCaps of an AMD GPU (gfx90a, gfx942, gfx1100) before its own limits: global_dims 3,
// global_max {2^31-1, 65535, 65535}, local_bytes 64 KiB (LDS per work-group), float16, no accurate
// transcendentals (AMDGPU's exp2/log2/sin are approximate: codegen rewrites them into polynomials),
// local memory, max_local_size 1024, local_max {1024, 1024, 1024}, max_buffers 256.
codegen::DeviceCaps caps();

}  // namespace sluice::hip
