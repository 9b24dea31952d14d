#pragma once
// HIP for clang without any header (-nogpuinc; backends/hip/compiler.h): one kernel per function,
//   extern "C" __attribute__((global)) void __attribute__((amdgpu_flat_work_group_size(1, L)))
//   name(T0* data0, const T1* data1, ..., int var0, ...)
// Ids come from __builtin_amdgcn_workgroup_id_* / workitem_id_*; the barrier is s_barrier between
// work-group fences; shared memory is __attribute__((shared)). half is _Float16, bfloat16 __bf16 (clang
// >= 17 computes with both). Math uses clang builtins only (__builtin_sqrtf, __builtin_truncf): AMDGPU's
// exp2/log2/sin instructions are approximate and float64 has none, so HIP targets set
// accurate_transcendentals = false and codegen rewrites EXP2/LOG2/SIN into polynomials
// (core/codegen/transcendental.h).
// A device's DeviceCaps are its backend's (backends/hip/device.h caps()).
#include <memory>

#include "renderers/cstyle.h"

namespace sluice::render {

std::unique_ptr<CStyleRenderer> make_hip_renderer();

}  // namespace sluice::render
