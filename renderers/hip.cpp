#include "renderers/hip.h"

#include <set>
#include <string>

namespace sluice::render {
namespace {

Dialect hip_dialect() {
  Dialect d;
  d.kernel_prefix = "extern \"C\" __attribute__((global)) ";
  d.global_ids = {"__builtin_amdgcn_workgroup_id_x()", "__builtin_amdgcn_workgroup_id_y()",
                  "__builtin_amdgcn_workgroup_id_z()"};
  d.local_ids = {"__builtin_amdgcn_workitem_id_x()", "__builtin_amdgcn_workitem_id_y()",
                 "__builtin_amdgcn_workitem_id_z()"};
  // What HIP's __syncthreads expands to: release, barrier, acquire at work-group scope.
  d.barrier =
      "__builtin_amdgcn_fence(__ATOMIC_RELEASE, \"workgroup\"); __builtin_amdgcn_s_barrier(); "
      "__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, \"workgroup\");";
  d.shared_prefix = "__attribute__((shared)) ";
  d.type_names = {{Scalar::Float16, "_Float16"}, {Scalar::BFloat16, "__bf16"}};
  d.native_half = d.native_bf16 = true;
  d.vector_ctor = "make_float4(";
  d.float_fn_suffix = "f";
  d.math_prefix = "__builtin_";  // no headers: the compiler's builtins lower to AMDGPU instructions
  d.infinity = "__builtin_inff()";
  d.nan = "__builtin_nanf(\"\")";
  d.bit_cast = "__builtin_bit_cast";
  d.helper_prefix = "static __attribute__((device)) inline ";
  return d;
}

// Clang vector types for the vector dtypes a kernel uses, with CUDA-style make_<type>N constructors.
std::string vector_types(const CStyleRenderer& r, const codegen::Kernel& k) {
  std::set<std::pair<std::string, int>> vecs;
  for (const UOp& u : k.uops)
    if (u.dtype().count > 1 && !u.dtype().is_ptr()) vecs.insert({r.type(u.dtype().base()), u.dtype().count});
  std::string s;
  for (const auto& [t, n] : vecs) {
    std::string name = t + std::to_string(n), params, elems;
    for (char& ch : name)
      if (ch == ' ') ch = '_';
    for (int i = 0; i < n; ++i) {
      params += (i ? ", " : "") + t + " x" + std::to_string(i);
      elems += (i ? ", x" : "x") + std::to_string(i);
    }
    s += "typedef " + t + " " + name + " __attribute__((ext_vector_type(" + std::to_string(n) + ")));\n";
    s += "#ifndef SLUICE_MAKE_" + name + "\n#define SLUICE_MAKE_" + name + "\n";
    s += "static __attribute__((device)) inline " + name + " make_" + name + "(" + params + ") { return {" +
         elems + "}; }\n#endif\n";
  }
  return s;
}

class HipRenderer final : public CStyleRenderer {
 public:
  HipRenderer() : CStyleRenderer(hip_dialect()) {}

 protected:
  std::string wrap(const codegen::Kernel& k, const std::string& body) const override {
    std::string s = vector_types(*this, k);
    const uint64_t threads = uint64_t(k.local_size[0]) * k.local_size[1] * k.local_size[2];
    s += dialect().kernel_prefix + "void __attribute__((amdgpu_flat_work_group_size(1, " +
         std::to_string(threads) + "))) " + k.name + "(";
    return s + pointer_params(k) + ") {\n" + body + "}\n";
  }
};

}  // namespace

std::unique_ptr<CStyleRenderer> make_hip_renderer() { return std::make_unique<HipRenderer>(); }

}  // namespace sluice::render
