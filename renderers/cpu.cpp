#include "renderers/cpu.h"

#include <string>

namespace sluice::render {
namespace {

Dialect cpu_dialect() {
  Dialect d;
  d.global_ids = {"(int)(g % launch[0])", "(int)(g / launch[0] % launch[1])",
                  "(int)(g / ((unsigned long)launch[0] * launch[1]))"};
  d.type_names = {{Scalar::Bool, "_Bool"}};
  d.float_fn_suffix = "f";
  d.math_prefix = "__builtin_";  // libm through builtins: clang inlines sqrt/trunc and calls exp2f, ...
  d.infinity = "__builtin_inff()";
  d.nan = "__builtin_nanf(\"\")";
  return d;
}

class CpuRenderer final : public CStyleRenderer {
 public:
  CpuRenderer() : CStyleRenderer(cpu_dialect()) {}

 protected:
  // The grid is flattened and split into n_cores contiguous shares (the ABI's intended scheme).
  std::string wrap(const codegen::Kernel& k, const std::string& body) const override {
    std::string s = f16_helpers(k);  // half and bfloat16 are emulated (no _Float16 in every clang's C)
    s += "void " + k.name +
         "(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores) {\n";
    for (size_t i = 0; i < k.bufs.size(); ++i) {
      const std::string t = (k.bufs[i].written ? "" : "const ") + storage_type(k.bufs[i].dtype) + "*";
      s += "  " + t + " data" + std::to_string(i) + " = (" + t + ")bufs[" + std::to_string(i) + "];\n";
    }
    for (size_t i = 0; i < k.vars.size(); ++i)
      s += "  const int " + k.vars[i].arg_as<VarArg>().name + " = vars[" + std::to_string(i) + "];\n";
    s += "  (void)vars;\n"
         "  unsigned long n = (unsigned long)launch[0] * launch[1] * launch[2];\n"
         "  for (unsigned long g = n * core_id / n_cores; g < n * (core_id + 1) / n_cores; ++g) {\n";
    // The body was rendered one level in; the grid loop adds one more.
    for (size_t a = 0; a < body.size();) {
      size_t e = body.find('\n', a);
      s += "  " + body.substr(a, e - a + 1);
      a = e + 1;
    }
    return s + "  }\n}\n";
  }
};

}  // namespace

std::unique_ptr<CStyleRenderer> make_cpu_renderer() { return std::make_unique<CpuRenderer>(); }

}  // namespace sluice::render
