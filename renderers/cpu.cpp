#include "renderers/cpu.h"

#include <algorithm>
#include <string>
#include <vector>

namespace sluice::render {
namespace {

Dialect cpu_dialect() {
  Dialect d;
  d.global_ids = {"g0", "g1", "g2"};  // wrap() decodes them from the flat index g
  d.type_names = {{Scalar::Bool, "_Bool"}};
  d.float_fn_suffix = "f";
  d.math_prefix = "__builtin_";  // libm through builtins: clang inlines sqrt/trunc and calls exp2f, ...
  d.infinity = "__builtin_inff()";
  d.nan = "__builtin_nanf(\"\")";
  return d;
}

// In a kernel with loops, the launch dimension to vary fastest: the one along which the largest buffer read
// inside the loops is shared, so that consecutive work-groups of a core reuse it from cache (a matmul's
// right-hand panel down its rows, a convolution's input across its output channels). Ties go to the
// next-to-last dimension, then the later one; -1 when nothing inside a loop is shared.
int shared_dim(const codegen::Kernel& k, int nd) {
  std::vector<int64_t> bytes(size_t(std::max(nd, 0)), 0);  // per dimension: largest buffer shared along it
  for (const UOp& u : k.uops) {
    if (u.op() != Op::Load || u.src(0).op() != Op::Index || u.src(0).src(0).op() != Op::DefineGlobal)
      continue;
    std::vector<bool> uses(size_t(nd), false);
    bool in_loop = false;
    for (const UOp& n : u.src(0).toposort()) {
      in_loop |= n.op() == Op::Range;
      if (n.op() != Op::Special) continue;
      const std::string& name = n.arg_as<VarArg>().name;
      if (name.rfind("gidx", 0) == 0 && name.size() == 5 && name[4] - '0' < nd)
        uses[size_t(name[4] - '0')] = true;
    }
    if (!in_loop) continue;
    const codegen::KernelBuffer& b = k.bufs[size_t(u.src(0).src(0).arg_as<int64_t>())];
    for (int d = 0; d < nd; ++d)
      if (!uses[size_t(d)]) bytes[size_t(d)] = std::max(bytes[size_t(d)], b.size * b.dtype.itemsize());
  }
  int best = -1;
  for (int d : {nd - 2, nd - 1, nd - 3})
    if (d >= 0 && bytes[size_t(d)] > 0 && (best < 0 || bytes[size_t(d)] > bytes[size_t(best)])) best = d;
  return best;
}

class CpuRenderer final : public CStyleRenderer {
 public:
  CpuRenderer() : CStyleRenderer(cpu_dialect()) {}

 protected:
  // The grid is flattened and split into n_cores contiguous shares (the ABI's intended scheme).
  // Consecutive work-groups of a core vary the last launch dimension fastest (memory order), except in
  // kernels with loops, which vary shared_dim's fastest.
  std::string wrap(const codegen::Kernel& k, const std::string& body) const override {
    int nd = 0;
    for (int d = 0; d < 3; ++d)
      if (k.global_size[size_t(d)] > 1) nd = d + 1;
    std::vector<int> order;  // the launch dimensions in use, fastest first
    if (int d = shared_dim(k, nd); d >= 0) order = {d};
    for (int d = nd - 1; d >= 0; --d)
      if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
    // The ids are decoded once, from the share's first work-group, then advance like an odometer: no
    // division per work-group. An elementwise kernel's work-groups go in runs along the fastest dimension,
    // an inner counted loop: the compiler hoists the other dimensions' index arithmetic out of it and may
    // vectorize it. (A kernel with loops keeps one work-group per iteration: hoisted values would take the
    // registers of its register tile.)
    const bool runs = !order.empty() && std::none_of(k.uops.begin(), k.uops.end(),
                                                     [](const UOp& u) { return u.op() == Op::Range; });
    std::string decode = order.empty() ? "" : "  unsigned long q = g_begin;\n", advance;
    for (size_t i = order.size(); i-- > (runs ? 1 : 0);) {
      const std::string d = std::to_string(order[i]), l = "launch[" + d + "]";
      const bool last = i + 1 == order.size();  // the slowest: no wrap-around
      advance = last ? "++g" + d + ";" : "if (++g" + d + " == " + l + ") { g" + d + " = 0; " + advance + " }";
    }
    for (size_t i = 0; i < order.size(); ++i) {
      const std::string d = std::to_string(order[i]), l = "launch[" + d + "]";
      const bool last = i + 1 == order.size();
      decode += "  unsigned long g" + d + " = " + (last ? "q" : "q % " + l) + ";\n";
      if (!last) decode += "  q /= " + l + ";\n";
    }
    std::string s = f16_helpers(k);  // half and bfloat16 are emulated (no _Float16 in every clang's C)
    s += vector_math_helpers(k);
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
         "  const unsigned long g_begin = n * core_id / n_cores, g_end = n * (core_id + 1) / n_cores;\n" +
         decode;
    std::string indent = "  ";  // the body was rendered one level in; the grid loops add the rest
    if (!runs) {
      s += "  for (unsigned long g = g_begin; g < g_end; ++g) {\n";
    } else {
      const std::string f = "g" + std::to_string(order[0]), l = "launch[" + std::to_string(order[0]) + "]";
      s += "  for (unsigned long g = g_begin; g < g_end;) {\n"
           "    const unsigned long left = " +
           l + " - " + f + ", stop = " + f +
           " + (g_end - g < left ? g_end - g : left);\n"
           "    g += stop - " +
           f +
           ";\n"
           "    for (; " +
           f + " < stop; ++" + f + ") {\n";
      indent = "    ";
    }
    for (size_t a = 0; a < body.size();) {
      size_t e = body.find('\n', a);
      s += indent + body.substr(a, e - a + 1);
      a = e + 1;
    }
    if (!runs) return s + (advance.empty() ? "" : "    " + advance + "\n") + "  }\n}\n";
    return s + "    }\n    g" + std::to_string(order[0]) + " = 0;" + (advance.empty() ? "" : " " + advance) +
           "\n  }\n}\n";
  }
};

}  // namespace

std::unique_ptr<CStyleRenderer> make_cpu_renderer() { return std::make_unique<CpuRenderer>(); }

}  // namespace sluice::render
