#pragma once
// CUDA C for NVRTC (backends/cuda/compiler.h): one `extern "C" __global__` function per kernel,
//   extern "C" __global__ void __launch_bounds__(L) name(T0* data0, const T1* data1, ..., int var0, ...)
// buffers as pointer parameters in DEFINE_GLOBAL order (read-only ones const), then the int variables;
// blockIdx/threadIdx give the group and local ids. half and bfloat16 are native (cuda_fp16.h,
// cuda_bf16.h: the compiler adds the toolkit's include directory). exp2f/log2f/sinf/sqrtf are CUDA's
// accurate versions (<= 2 ulp; sqrtf correctly rounded), so no polynomial rewrite is needed.
// A device's DeviceCaps are its backend's (backends/cuda/device.h caps()).
#include <memory>

#include "renderers/cstyle.h"

namespace sluice::render {

std::unique_ptr<CStyleRenderer> make_cuda_renderer();

}  // namespace sluice::render
