#pragma once
// CUDA C for NVRTC (backends/cuda/compiler.h): one `extern "C" __global__` function per kernel,
//   extern "C" __global__ void __launch_bounds__(L) name(T0* data0, const T1* data1, ..., int var0, ...)
// buffers as pointer parameters in DEFINE_GLOBAL order (read-only ones const), then the int variables;
// blockIdx/threadIdx give the group and local ids. half and bfloat16 are native (cuda_fp16.h,
// cuda_bf16.h: the compiler adds the toolkit's include directory). exp2f/log2f/sinf/sqrtf are CUDA's
// accurate versions (<= 2 ulp; sqrtf correctly rounded), so no polynomial rewrite is needed.
//
// The DeviceCaps of a CUDA device (sm_80 and later), for backends/cuda/device.cpp target():
//   global_dims 3, global_max {2^31-1, 65535, 65535}, local_bytes 48 KiB (static __shared__ limit),
//   supports_float16 true, accurate_transcendentals true, has_local true,
//   max_local_size 1024, local_max {1024, 1024, 64}, max_buffers 256. cuda_caps() returns them.
#include <memory>

#include "core/codegen/kernel.h"
#include "renderers/cstyle.h"

namespace sluice::render {

std::unique_ptr<CStyleRenderer> make_cuda_renderer();
codegen::DeviceCaps cuda_caps();

}  // namespace sluice::render
