#pragma once
// The CUDA device (DESIGN.md §4): NVIDIA GPUs through the driver API, loaded at run time (driver.h), with
// kernels compiled by NVRTC for the device's exact architecture (compiler.h) and the HCQ mapping of
// queue.h: one stream per queue, signals written and awaited on the GPU with stream memory operations
// (events where the device lacks them), timestamps from events, hcq::Graph replays as CUDA graphs.
#include <memory>
#include <string>

#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice::cuda {

// Why no CUDA device can be opened here ("" when one can): "libcuda.so.1 not found: <dlerror>",
// "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", ... ($SLUICE_CUDA_LIBRARY
// names another driver library: driver.h).
std::string absent_reason();
// Named "CUDA" for ordinal 0, "CUDA:<n>" otherwise: the n-th GPU the driver lists. Throws hcq::Error
// when the ordinal is out of range or the driver fails (naming the call).
std::unique_ptr<hcq::Device> open_device(int ordinal = 0);
// CUDA C (renderers/cuda.h) with caps() narrowed to the device's own limits.
render::Target target(const hcq::Device& dev);
// The DeviceCaps of a CUDA device (sm_80 and later) before its own limits: global_dims 3, global_max
// {2^31-1, 65535, 65535}, local_bytes 48 KiB (the static __shared__ limit), float16, accurate
// transcendentals (CUDA's exp2f/log2f/sinf are within 2 ulp), local memory, max_local_size 1024,
// local_max {1024, 1024, 64}, max_buffers 256 (4 KiB of kernel parameters, with room for variables).
codegen::DeviceCaps caps();
// The target of a stream device (CUDA, HIP): `renderer` with `caps` narrowed to what the device reports
// (local memory, work-group size).
render::Target stream_target(const hcq::Device& dev, std::shared_ptr<const render::Renderer> renderer,
                             codegen::DeviceCaps caps);

}  // namespace sluice::cuda
