#pragma once
// The SPIR-V renderer: a linear kernel (core/codegen/kernel.h) straight to a SPIR-V binary module for
// Vulkan (DESIGN.md §3), through the builder of spirv_builder.h; no GLSL in between. render() returns the
// module's 32-bit words as little-endian bytes.
//
// THE ABI (what backends/vulkan binds and dispatches):
// - One GLCompute entry point named k.name; execution mode LocalSize = k.local_size.
// - Buffer i (DEFINE_GLOBAL i) = descriptor set 0, binding i, StorageBuffer storage class: a
//   Block-decorated struct { T data[]; } (member offset 0) with ArrayStride = itemsize of T. bool is
//   stored as uint8 (0 or 1). Buffers the kernel does not write are decorated NonWritable.
// - Scalar variables (k.vars, DEFINE_VAR) = one push-constant Block struct whose member i is the int32
//   value of k.vars[i] at offset 4*i. No push-constant block when the kernel has no variables.
// - gidxN (SPECIAL) = WorkgroupId.N; lidxN = LocalInvocationId.N. A launch dispatches k.global_size
//   work-groups.
// - Shared memory (DEFINE_LOCAL) = a Workgroup array; BARRIER = OpControlBarrier(Workgroup, Workgroup,
//   AcquireRelease | WorkgroupMemory).
//
// Semantics are those of core/ir/alu.h, as the C-style renderers reproduce them (cstyle.h): integer
// arithmetic wraps in its width; IDIV/MOD truncate, x/0 and x%0 give 0 and MIN/-1 gives MIN (guarded,
// never undefined); shifts by a negative amount or >= the width give 0; x/+-0 gives +-inf or NaN by IEEE
// (a select around OpFDiv, whose error Vulkan bounds only for 2^-126 <= |y| <= 2^126); MAX propagates
// NaN; CMPLT is an ordered <, CMPNE an unordered !=; masked loads read nothing (a branch, not a select),
// masked stores are skipped. EXP2/LOG2/SIN/SQRT/TRUNC are GLSL.std.450 instructions; float16
// EXP2/LOG2/SIN/SQRT/FDIV/RECIP compute in float32 and round back.
//
// Capabilities and extensions are declared only when a kernel uses them: Int8/Int16/Int64, Float16/
// Float64 for values of those types; StorageBuffer8BitAccess (+ SPV_KHR_8bit_storage below SPIR-V 1.5)
// and StorageBuffer16BitAccess for buffers of 8- and 16-bit elements; SignedZeroInfNanPreserve (+
// SPV_KHR_float_controls below 1.4) for the float widths a kernel computes in, where the options allow.
//
// Failures: Error `[render] ...` naming the op and dtype for what Vulkan SPIR-V cannot express here:
// bfloat16; a type the options say the device lacks; float64 EXP2/LOG2/SIN (GLSL.std.450 has them only
// for 16- and 32-bit floats: build such kernels with DeviceCaps::accurate_transcendentals = false so
// codegen expands them into polynomials); vectors wider than 4.
//
// Rendering is a pure function of the kernel; the renderer is immutable and usable from any thread.
#include <cstdint>
#include <memory>

#include "renderers/renderer.h"

namespace sluice::render {

struct SpirvOptions {
  uint32_t version = 0x00010500;  // SPIR-V 1.5 (Vulkan 1.2); 0x00010300 (1.3, Vulkan 1.1) .. 0x00010600
  // What the device has (VkPhysicalDeviceFeatures / Vulkan 1.1-1.2 features); a kernel needing one that
  // is missing fails to render.
  bool int8 = true;       // shaderInt8
  bool int16 = true;      // shaderInt16
  bool int64 = true;      // shaderInt64
  bool float16 = true;    // shaderFloat16
  bool float64 = true;    // shaderFloat64
  bool storage8 = true;   // storageBuffer8BitAccess (also needed by bool buffers)
  bool storage16 = true;  // storageBuffer16BitAccess
  // shaderSignedZeroInfNanPreserveFloat16/32/64: the module asks for IEEE infinities, NaNs and signed
  // zeros (execution mode SignedZeroInfNanPreserve per float width it uses). Without it a driver may
  // assume there are none (x*0 -> 0), and MAX's NaN propagation or x/0 = inf are not guaranteed.
  bool inf_nan_preserve16 = true;
  bool inf_nan_preserve32 = true;
  bool inf_nan_preserve64 = true;
};

std::unique_ptr<Renderer> make_spirv_renderer(const SpirvOptions& options = {});

}  // namespace sluice::render
