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
// CUDA C (renderers/cuda.h) with the device's limits.
render::Target target(const hcq::Device& dev);

}  // namespace sluice::cuda
