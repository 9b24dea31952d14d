#pragma once
// The C-style renderer: linear kernel uops (core/codegen/kernel.h) to C-family source (DESIGN.md §3).
// CPU C, OpenCL C, CUDA C and HIP share this base and differ in a Dialect description plus the few hooks
// below (how the kernel is declared and how it finds its work-group).
//
// Semantics every dialect reproduces (core/ir/alu.h, where C defines a result):
// - Integer ADD/SUB/MUL/NEG wrap in the dtype's width: computed in unsigned arithmetic (no signed
//   overflow UB) and converted back.
// - IDIV/MOD truncate toward zero. A divisor that is not a known nonzero constant is guarded so a kernel
//   never traps: x/0 and x%0 give 0, MIN/-1 gives MIN (the reference marks those elements undefined).
// - Shifts by a negative amount or >= the width give 0 instead of UB.
// - MAX propagates NaN; CMPLT/CMPNE are C's < and !=; WHERE is ?:; BITCAST goes through a union.
// - Masked loads never read: `valid ? buf[idx] : 0`; masked stores are skipped.
// Transcendentals (EXP2, LOG2, SIN, SQRT) call the dialect's math functions (on a C vector: lane by lane in
// an out-of-line loop, vector_math_helpers); where those are not accurate (HIP), codegen has already
// replaced EXP2/LOG2/SIN by polynomials (core/codegen/transcendental.h).
//
// Rendering is a pure function of the kernel; a renderer is immutable and usable from any thread.
// Failures: Error `[render] ...` for dtypes or ops the dialect cannot express.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/codegen/kernel.h"
#include "core/ir/dtype.h"
#include "renderers/renderer.h"

namespace sluice::render {

struct Dialect {
  std::string kernel_prefix;  // before the function: "__kernel " (OpenCL), "extern \"C\" __global__ "
  std::string buffer_prefix;  // before a buffer's element type: "__global " (OpenCL)
  // The work-group id along each launch dimension, and the work-item id within the group (LOCAL opts), as
  // unsigned expressions: the renderer casts them to the kernel's index dtype.
  std::array<std::string, 3> global_ids;
  std::array<std::string, 3> local_ids;
  std::string barrier;        // "__syncthreads();", "barrier(CLK_LOCAL_MEM_FENCE);"
  std::string shared_prefix;  // declares shared memory: "__shared__ ", "__local "
  std::vector<std::pair<Scalar, std::string>> type_names;  // overrides of DType::c_name ("_Bool")
  // half / bfloat16 arithmetic in the language (type_names gives the type). Otherwise emulated: buffers
  // hold the IEEE bits as unsigned short, values are floats rounded to the 16-bit format after every op
  // (round to nearest even, as core/ir/dtype.h), through the helpers of f16_helpers().
  bool native_half = false;
  bool native_bf16 = false;
  std::string vector_ctor;      // "(float4)(" (OpenCL), "make_float4(" (CUDA): vectorized opts
  std::string float_fn_suffix;  // "f" where float math functions are suffixed (C: exp2f)
  std::string math_prefix;      // "__builtin_" to use the compiler's builtins without headers
  std::string infinity, nan;    // float32 literals
  std::string infinity64 = "__builtin_inf()", nan64 = "__builtin_nan(\"\")";  // float64 literals
  std::string bit_cast;                          // "__builtin_bit_cast" (C++); empty: a union (C)
  std::string helper_prefix = "static inline ";  // declares the emulation helpers ("__device__ " ...)
};

class CStyleRenderer : public Renderer {
 public:
  explicit CStyleRenderer(Dialect d) : d_(std::move(d)) {}

  const Dialect& dialect() const { return d_; }
  // The source of one kernel, defining a function named k.name.
  std::string render(const codegen::Kernel& k) const override;
  // The element type's name in this dialect (of a value: an emulated half is a float).
  std::string type(DType dt) const;
  // The type a buffer of dt holds in memory: type(dt), or "unsigned short" for emulated half/bfloat16.
  std::string storage_type(DType dt) const;
  bool emulated(DType dt) const;  // half / bfloat16 without native arithmetic in this dialect
  // Definitions of the emulation helpers (guarded, so a batch may repeat them), or "" when the kernel
  // needs none. Dialects put this before the kernel.
  std::string f16_helpers(const codegen::Kernel& k) const;
  // Definitions (guarded, as f16_helpers) of the loops that apply a math function (EXP2, LOG2, SIN,
  // SQRT, TRUNC) to the lanes of a C vector, called by the kernel's vector transcendentals (the CPU's
  // packed register tiles, core/codegen/vectorize.h): out of line, so each is one libm call site for
  // clang to compile, not one per lane. Dialects with vector math of their own put "" here.
  std::string vector_math_helpers(const codegen::Kernel& k) const;

 protected:
  // The kernel's declaration, buffer bindings and the loop or id setup that surrounds `body` (already
  // indented by one level).
  virtual std::string wrap(const codegen::Kernel& k, const std::string& body) const = 0;
  // "const float* data0, float* data1, int n": buffers as pointers in DEFINE_GLOBAL order (const where
  // only read), then the int variables — the parameter list of the dialects that pass plain pointers.
  std::string pointer_params(const codegen::Kernel& k) const;

 private:
  Dialect d_;
};

}  // namespace sluice::render
