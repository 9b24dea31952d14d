#pragma once
// The OpenCL C dialect (OpenCL C 1.2, which every OpenCL 1.2/2.x/3.0 driver takes): one `__kernel` per
// kernel; each buffer, in DEFINE_GLOBAL order, as a `__global T*` base and a `ulong` byte offset into it,
// then the `int` variables in layout order (the ABI of backends/opencl/program.h). Work-groups come from
// get_group_id, work-items from get_local_id; the host launches global = groups * local work-items.
//
// - half: native where the device has cl_khr_fp16 (`native_half`: the pragma is added when a kernel uses
//   it); otherwise emulated like bfloat16 (ushort storage, float arithmetic rounded to half after each op).
// - double: the cl_khr_fp64 pragma when the kernel uses it.
// - bfloat16: emulated (the C-style base's helpers: ushort storage, float arithmetic rounded to bf16).
// - bool buffers are `uchar` (OpenCL forbids bool in kernel arguments); bool values stay `bool`.
// - exp2/log2/sqrt/sin/trunc are OpenCL's builtins (correctly rounded within the spec's ulp bounds, no
//   polynomial needed); the native_* versions are not used because their error is unspecified.
// No headers, so kernels of a batch concatenate into one program (hcq::Compiler::compile_many).
#include <memory>

#include "renderers/cstyle.h"

namespace sluice::render {

std::unique_ptr<CStyleRenderer> make_opencl_renderer(bool native_half = false);

}  // namespace sluice::render
