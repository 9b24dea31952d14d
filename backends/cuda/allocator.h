#pragma once
// GPU memory for the CUDA and HIP devices: buffers from cuMemAlloc (hipMalloc) behind hcq's LRU cache
// (hcq/allocator.h); Buffer::addr is the device address. copyin/copyout move bytes synchronously through
// a pinned staging buffer (cuMemHostAlloc) on the allocator's own stream, in chunks, so pageable host
// memory never reaches the driver's slow path and no queue stream is held up.
//
// Threading: every member is thread-safe (staging is serialised by a lock). Failures: hcq::Error naming
// the driver call and its error (driver.h), e.g. `[alloc] CUDA: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY
// (out of memory)`.
#include <memory>

#include "backends/cuda/driver.h"
#include "hcq/allocator.h"

namespace sluice::cuda {

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev, const Driver& drv, CUcontext ctx);

}  // namespace sluice::cuda
