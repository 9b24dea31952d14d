#include "renderers/opencl.h"

#include <string>
#include <variant>

namespace sluice::render {
namespace {

Dialect opencl_dialect(bool native_half) {
  Dialect d;
  d.kernel_prefix = "__kernel ";
  d.buffer_prefix = "__global ";
  d.global_ids = {"get_group_id(0)", "get_group_id(1)", "get_group_id(2)"};
  d.local_ids = {"get_local_id(0)", "get_local_id(1)", "get_local_id(2)"};
  d.barrier = "barrier(CLK_LOCAL_MEM_FENCE);";
  d.shared_prefix = "__local ";
  d.native_half = native_half;
  d.vector_ctor = "(float4)(";  // a cast of a parenthesized list: (float4)(a, b, c, d)
  d.math_prefix = "";           // exp2, log2, sqrt, sin, trunc are overloaded builtins: no suffix, no prefix
  d.infinity = "INFINITY";
  d.nan = "NAN";
  return d;
}

bool uses(const codegen::Kernel& k, Scalar s) {
  for (const auto& b : k.bufs)
    if (b.dtype.scalar == s) return true;
  for (const UOp& u : k.uops)
    if (u.dtype().scalar == s) return true;
  return false;
}

class OpenCLRenderer final : public CStyleRenderer {
 public:
  explicit OpenCLRenderer(bool native_half) : CStyleRenderer(opencl_dialect(native_half)) {}

 protected:
  std::string wrap(const codegen::Kernel& k, const std::string& body) const override {
    std::string s;
    if (dialect().native_half && uses(k, Scalar::Float16))
      s += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
    if (uses(k, Scalar::Float64)) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    s += f16_helpers(k);  // bfloat16 (and half without cl_khr_fp16) are emulated
    s += dialect().kernel_prefix + "void " + k.name + "(";
    // Each buffer arrives as its cl_mem and a byte offset into it (backends/opencl/program.h).
    std::string bind;
    for (size_t i = 0; i < k.bufs.size(); ++i) {
      const DType dt = k.bufs[i].dtype;
      const std::string n = "data" + std::to_string(i), g = dialect().buffer_prefix;
      const std::string t =
          g + (k.bufs[i].written ? "" : "const ") + (dt.base().is_bool() ? "uchar" : storage_type(dt)) + "*";
      s += (i ? ", " : "") + t + " " + n + "_base, ulong " + n + "_off";
      bind += "  " + t + " " + n + " = (" + t + ")((" + g + (k.bufs[i].written ? "" : "const ") + "char*)" +
              n + "_base + " + n + "_off);\n";
    }
    for (size_t i = 0; i < k.vars.size(); ++i) {
      const auto* v = std::get_if<VarArg>(&k.vars[i].arg());
      s += (i || !k.bufs.empty() ? ", int " : "int ") + (v ? v->name : "var" + std::to_string(i));
    }
    return s + ") {\n" + bind + body + "}\n";
  }
};

}  // namespace

std::unique_ptr<CStyleRenderer> make_opencl_renderer(bool native_half) {
  return std::make_unique<OpenCLRenderer>(native_half);
}

}  // namespace sluice::render
