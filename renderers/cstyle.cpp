#include "renderers/cstyle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "base/error.h"

namespace sluice::render {
namespace {

struct Ctx {
  const CStyleRenderer& r;
  std::unordered_map<const UOpNode*, std::string> name;
  std::unordered_map<std::string, int> counts;
  std::string out;
  int depth = 1;

  const std::string& operator[](const UOp& u) const { return name.at(u.get()); }
  std::string fresh(const std::string& prefix) { return prefix + std::to_string(counts[prefix]++); }
  void line(const std::string& s) {
    out.append(size_t(2 * depth), ' ');
    out += s;
    out += '\n';
  }
};

// Integer arithmetic that must wrap is done in the unsigned type at least as wide as int.
std::string utype(DType dt) { return dt.itemsize() == 8 ? "unsigned long" : "unsigned int"; }
int bits(DType dt) { return 8 * dt.itemsize(); }

// Whether a signed ADD, SUB or MUL provably stays inside its dtype: from its operands' ranges, since its
// own range is clamped to the dtype's limits wherever it could wrap (core/ir/range.cpp), which would read
// as fitting. Bounds beyond 2^53 are not exact as doubles: they never count as fitting.
bool cannot_overflow(const UOp& u) {
  const DType dt = u.dtype();
  if (dt.scalar != Scalar::Int32 && dt.scalar != Scalar::Int64) return false;
  const double a = u.src(0).vmin(), b = u.src(0).vmax(), c = u.src(1).vmin(), d = u.src(1).vmax();
  double lo = 0, hi = 0;
  switch (u.op()) {
    case Op::Add: lo = a + c, hi = b + d; break;
    case Op::Sub: lo = a - d, hi = b - c; break;
    case Op::Mul:
      lo = std::min({a * c, a * d, b * c, b * d}), hi = std::max({a * c, a * d, b * c, b * d});
      break;
    default: return false;
  }
  constexpr double kExact = 9007199254740992.0;  // 2^53
  return lo >= std::max(dt.min(), -kExact) && hi <= std::min(dt.max(), kExact);
}

std::string literal(const CStyleRenderer& r, const UOp& c) {
  const DType dt = c.dtype();
  char buf[64];
  if (dt.is_bool()) return c.const_int_value() ? "1" : "0";
  if (dt.is_float()) {
    const bool f32 = dt.scalar != Scalar::Float64;
    const double v = c.const_value();
    const Dialect& d = r.dialect();
    if (std::isnan(v)) return f32 ? d.nan : d.nan64;
    if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + (f32 ? d.infinity : d.infinity64) + ")";
    std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (f32) s += "f";
    if (dt.itemsize() == 2 && !r.emulated(dt)) return "((" + r.type(dt) + ")" + s + ")";  // half * half
    return v < 0 || std::signbit(v) ? "(" + s + ")" : s;
  }
  const int64_t v = c.const_int_value();
  switch (dt.scalar) {
    case Scalar::Int32:
      if (v == INT32_MIN) return "(-2147483647-1)";
      std::snprintf(buf, sizeof buf, v < 0 ? "(%lld)" : "%lld", (long long)v);
      return buf;
    case Scalar::UInt32: std::snprintf(buf, sizeof buf, "%lluu", (unsigned long long)uint32_t(v)); return buf;
    case Scalar::Int64:
      if (v == INT64_MIN) return "(-9223372036854775807L-1)";
      std::snprintf(buf, sizeof buf, v < 0 ? "(%lldL)" : "%lldL", (long long)v);
      return buf;
    case Scalar::UInt64: std::snprintf(buf, sizeof buf, "%lluUL", (unsigned long long)v); return buf;
    default:  // narrow integers: the int literal converted
      std::snprintf(buf, sizeof buf, "((%s)%lld)", r.type(dt).c_str(), (long long)v);
      return buf;
  }
}

bool const_nonzero(const UOp& u, bool signed_dt) {
  return u.is_const() && u.const_int_value() != 0 && !(signed_dt && u.const_int_value() == -1);
}

// Whether u is a constant that is not a NaN, or a vector of such constants.
bool ordered_const(const UOp& u) {
  if (u.op() == Op::Vectorize) return std::all_of(u.src().begin(), u.src().end(), ordered_const);
  return u.is_const() && !std::isnan(u.const_value());
}

// The math functions of the unary transcendental ops, by op.
constexpr std::pair<Op, const char*> kMathFns[] = {
    {Op::Exp2, "exp2"}, {Op::Log2, "log2"}, {Op::Sin, "sin"}, {Op::Sqrt, "sqrt"}, {Op::Trunc, "trunc"}};
const char* math_fn(Op op) {
  for (const auto& [o, fn] : kMathFns)
    if (o == op) return fn;
  return nullptr;
}
// The out-of-line loop that applies the float math function fn to a C vector's lanes
// (CStyleRenderer::vector_math_helpers).
std::string vector_math_name(const Dialect& d, const char* fn) { return "sl_v" + (fn + d.float_fn_suffix); }

// The C name of a vector type.
std::string vtype(const CStyleRenderer& r, DType dt) { return r.type(dt.base()) + std::to_string(dt.count); }

// The C expression of an ALU op on already-named sources.
std::string alu_expr(Ctx& c, const UOp& u) {
  const Dialect& d = c.r.dialect();
  const DType dt = u.src(0).dtype();  // the operands' dtype (comparisons give bool)
  const std::string T = c.r.type(u.dtype()), U = utype(dt);
  auto s = [&](size_t i) { return c[u.src(i)]; };
  // Integer arithmetic wraps, through the unsigned type, unless range analysis proves an int result fits:
  // index arithmetic then stays plain signed C, which the compiler may assume never overflows (it
  // strength-reduces and hoists it: a 3x3 conv's inner loop ran 30% faster on the CPU).
  auto wrapped = [&](const char* op) {
    if (cannot_overflow(u)) return "(" + s(0) + " " + op + " " + s(1) + ")";
    return "(" + T + ")((" + U + ")" + s(0) + " " + op + " (" + U + ")" + s(1) + ")";
  };
  auto math = [&](const char* fn) {
    if (!u.dtype().is_vector())
      return d.math_prefix + fn + (dt.scalar == Scalar::Float64 ? "" : d.float_fn_suffix) + "(" + s(0) + ")";
    SLUICE_CHECK_IN(Error, "render", d.vector_ctor.empty() && dt.scalar == Scalar::Float32)
        << "no vector " << fn << " on " << dt.name() << " in this dialect";
    // C has no vector libm: the lanes go through one out-of-line loop. Inlined, a 4x64 matmul tile's
    // GELU was 256 calls that clang spent half the kernel's compile time on.
    const std::string V = c.r.type(dt.base()) + std::to_string(dt.count);
    return "({ " + V + " x_ = " + s(0) + ", r_; " + vector_math_name(d, fn) +
           "((float*)&r_, (const float*)&x_, " + std::to_string(dt.count) + "); r_; })";
  };
  const bool fl = dt.is_float(), sgn = dt.is_int() && !dt.is_unsigned();
  switch (u.op()) {
    case Op::Add:
      return fl ? s(0) + " + " + s(1) : dt.is_bool() ? "(" + s(0) + " | " + s(1) + ")" : wrapped("+");
    case Op::Sub: return fl ? s(0) + " - " + s(1) : wrapped("-");
    case Op::Mul:
      return fl ? s(0) + " * " + s(1) : dt.is_bool() ? "(" + s(0) + " & " + s(1) + ")" : wrapped("*");
    case Op::MulAcc:
      return fl ? s(0) + " * " + s(1) + " + " + s(2)
                : "(" + T + ")((" + U + ")" + s(0) + " * (" + U + ")" + s(1) + " + (" + U + ")" + s(2) + ")";
    case Op::Neg:
      return fl ? "-" + s(0) : dt.is_bool() ? s(0) : "(" + T + ")((" + U + ")0 - (" + U + ")" + s(0) + ")";
    case Op::FDiv: return s(0) + " / " + s(1);
    case Op::IDiv:
    case Op::Mod: {
      const char* op = u.op() == Op::IDiv ? " / " : " % ";
      const std::string plain = "(" + T + ")(" + s(0) + op + s(1) + ")";
      if (const_nonzero(u.src(1), sgn)) return plain;
      // MIN / -1 overflows (and traps on x86): -1 takes the wrapping path instead.
      const std::string minus1 =
          u.op() == Op::IDiv ? "(" + T + ")((" + U + ")0 - (" + U + ")" + s(0) + ")" : "(" + T + ")0";
      return "(" + s(1) + " == 0 ? (" + T + ")0 : " + (sgn ? s(1) + " == -1 ? " + minus1 + " : " : "") +
             plain + ")";
    }
    case Op::Max: {
      // a < b ? b : a keeps a NaN a; the test for NaNs is needed only where b may be one (a clip's bound
      // cannot).
      const bool b_const = ordered_const(u.src(1)), a_const = !b_const && ordered_const(u.src(0));
      const std::string a = s(a_const ? 1 : 0), b = s(a_const ? 0 : 1);
      const std::string m = "(" + a + " < " + b + " ? " + b + " : " + a + ")";
      if (!fl || a_const || b_const) return m;
      std::string nan = dt.scalar == Scalar::Float64 ? d.nan64 : d.nan;
      if ((dt.itemsize() == 2 && !c.r.emulated(dt)) || dt.is_vector())  // no float ?: half; splat a vector
        nan = "((" + (dt.is_vector() ? vtype(c.r, dt) : T) + ")" + nan + ")";
      return "(" + s(0) + " != " + s(0) + " || " + s(1) + " != " + s(1) + " ? " + nan + " : " + m + ")";
    }
    case Op::CmpLT: return "(" + s(0) + " < " + s(1) + ")";
    case Op::CmpNE: return "(" + s(0) + " != " + s(1) + ")";
    case Op::And: return "(" + T + ")(" + s(0) + " & " + s(1) + ")";
    case Op::Or: return "(" + T + ")(" + s(0) + " | " + s(1) + ")";
    case Op::Xor: return "(" + T + ")(" + s(0) + " ^ " + s(1) + ")";
    case Op::Shl:
    case Op::Shr: {
      const std::string shifted = u.op() == Op::Shl ? "(" + T + ")((" + U + ")" + s(0) + " << " + s(1) + ")"
                                                    : "(" + T + ")(" + s(0) + " >> " + s(1) + ")";
      const UOp& b = u.src(1);
      if (b.is_const() && b.const_int_value() >= 0 && b.const_int_value() < bits(dt)) return shifted;
      return "((" + U + ")" + s(1) + " >= " + std::to_string(bits(dt)) + "u ? (" + T + ")0 : " + shifted +
             ")";
    }
    case Op::Where: return "(" + s(0) + " ? " + s(1) + " : " + s(2) + ")";
    case Op::Exp2:
    case Op::Log2:
    case Op::Sin:
    case Op::Sqrt:
    case Op::Trunc: return math(math_fn(u.op()));
    case Op::Recip: return "(" + T + ")1 / " + s(0);  // T is the lane type: a vector divides by lanes
    default: break;
  }
  SLUICE_CHECK_IN(Error, "render", false) << "no C for " << op_name(u.op()) << " on " << dt.name();
  return {};
}

// The reinterpretation of expression x of type `from` as type `to`.
std::string bit_cast(const Dialect& d, const std::string& from, const std::string& to, const std::string& x) {
  if (!d.bit_cast.empty()) return d.bit_cast + "(" + to + ", " + x + ")";
  return "((union { " + from + " f; " + to + " t; }){.f = " + x + "}).t";  // no aliasing UB in C
}

// Emulated half/bfloat16 (Dialect::native_half): values are floats, rounded after every op except those
// that are exact on representable values (sign, selection, comparison).
const char* rounder(DType dt) { return dt.scalar == Scalar::Float16 ? "sl_rh" : "sl_rbf"; }
const char* to_bits(DType dt) { return dt.scalar == Scalar::Float16 ? "sl_f2h" : "sl_f2bf"; }
const char* from_bits(DType dt) { return dt.scalar == Scalar::Float16 ? "sl_h2f" : "sl_bf2f"; }
bool exact_op(Op op) { return op == Op::Where || op == Op::Max || op == Op::Neg || is_comparison(op); }

// The helpers mirror float_to_half_bits / half_bits_to_float / *_bf16_bits of core/ir/dtype.cpp.
std::string helpers(const Dialect& d) {
  const std::string p = d.helper_prefix, f2u = bit_cast(d, "float", "unsigned int", "f");
  auto u2f_of = [&](const std::string& x) { return bit_cast(d, "unsigned int", "float", x); };
  return "#ifndef SLUICE_F16_HELPERS\n#define SLUICE_F16_HELPERS\n" + p +
         "float sl_h2f(unsigned short h) {\n"
         "  unsigned int s = (unsigned int)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;\n"
         "  if (e == 0x1f) return " +
         u2f_of("s | 0x7f800000u | m << 13") +
         ";\n"
         "  if (e == 0) return s ? -((float)m * 5.9604644775390625e-8f) : (float)m * "
         "5.9604644775390625e-8f;\n"
         "  return " +
         u2f_of("s | (e + 112) << 23 | m << 13") + ";\n}\n" + p +
         "unsigned short sl_f2h(float f) {\n"
         "  unsigned int x = " +
         f2u +
         ", s = (x >> 16) & 0x8000, ex = (x >> 23) & 0xff, m = x & 0x7fffff;\n"
         "  if (ex == 0xff) return (unsigned short)(s | 0x7c00 | (m ? 0x200 | (m >> 13) : 0));\n"
         "  int e = (int)ex - 112;\n"
         "  if (e >= 31) return (unsigned short)(s | 0x7c00);\n"
         "  if (e <= 0) {\n"
         "    if (e < -10) return (unsigned short)s;\n"
         "    m |= 0x800000;\n"
         "    int sh = 14 - e;\n"
         "    unsigned int h = m >> sh, r = m & ((1u << sh) - 1), mid = 1u << (sh - 1);\n"
         "    if (r > mid || (r == mid && (h & 1))) h++;\n"
         "    return (unsigned short)(s | h);\n"
         "  }\n"
         "  unsigned int h = (unsigned int)e << 10 | m >> 13, r = m & 0x1fff;\n"
         "  if (r > 0x1000 || (r == 0x1000 && (h & 1))) h++;\n"
         "  return (unsigned short)(s | h);\n}\n" +
         p + "float sl_rh(float f) { return sl_h2f(sl_f2h(f)); }\n" + p +
         "float sl_bf2f(unsigned short b) { return " + u2f_of("(unsigned int)b << 16") + "; }\n" + p +
         "unsigned short sl_f2bf(float f) {\n"
         "  unsigned int x = " +
         f2u +
         ";\n"
         "  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);\n"
         "  x += 0x7fff + ((x >> 16) & 1);\n"
         "  return (unsigned short)(x >> 16);\n}\n" +
         p + "float sl_rbf(float f) { return sl_bf2f(sl_f2bf(f)); }\n#endif\n";
}

}  // namespace

std::string CStyleRenderer::vector_math_helpers(const codegen::Kernel& k) const {
  std::string out;
  if (!d_.vector_ctor.empty()) return out;  // GPU languages: no packed vector math (vectorize.h)
  for (const auto& [op, fn] : kMathFns) {
    const bool used = std::any_of(k.uops.begin(), k.uops.end(),
                                  [op = op](const UOp& u) { return u.op() == op && u.dtype().is_vector(); });
    if (!used) continue;
    const std::string name = vector_math_name(d_, fn);
    out += "#ifndef SLUICE_" + name + "\n#define SLUICE_" + name +
           "\nstatic __attribute__((noinline)) void " + name + "(float* r, const float* x, int n) {\n" +
           "  for (int i = 0; i < n; ++i) r[i] = " + d_.math_prefix + fn + d_.float_fn_suffix +
           "(x[i]);\n}\n#endif\n";
  }
  return out;
}

std::string CStyleRenderer::pointer_params(const codegen::Kernel& k) const {
  std::string s;
  for (size_t i = 0; i < k.bufs.size(); ++i)
    s += (i ? ", " : "") + std::string(k.bufs[i].written ? "" : "const ") + type(k.bufs[i].dtype) + "* data" +
         std::to_string(i);
  for (size_t i = 0; i < k.vars.size(); ++i)
    s += (i || !k.bufs.empty() ? ", int " : "int ") + k.vars[i].arg_as<VarArg>().name;
  return s;
}

std::string CStyleRenderer::type(DType dt) const {
  const DType b = dt.base();
  if (emulated(b)) return "float";
  for (const auto& [s, n] : d_.type_names)
    if (s == b.scalar) return n;
  return b.c_name();
}

bool CStyleRenderer::emulated(DType dt) const {
  return (dt.scalar == Scalar::Float16 && !d_.native_half) ||
         (dt.scalar == Scalar::BFloat16 && !d_.native_bf16);
}

std::string CStyleRenderer::storage_type(DType dt) const {
  return emulated(dt) ? "unsigned short" : type(dt);
}

std::string CStyleRenderer::f16_helpers(const codegen::Kernel& k) const {
  for (const codegen::KernelBuffer& b : k.bufs)
    if (emulated(b.dtype)) return helpers(d_);
  for (const UOp& u : k.uops)
    if (emulated(u.dtype().base())) return helpers(d_);
  return "";
}

namespace {

// The uops of optimized kernels (kernel.h): shared memory, barriers, vectors.

void vector_load_store(Ctx& c, const UOp& u) {
  const Dialect& d = c.r.dialect();
  const UOp& ix = u.src(0);
  const DType vt = u.op() == Op::Load ? u.dtype() : u.src(1).dtype();
  const std::string space = ix.src(0).dtype().addr == AddrSpace::Local ? d.shared_prefix : d.buffer_prefix;
  const std::string ptr = "*((" + space + vtype(c.r, vt) + "*)(" + c[ix.src(0)] + " + " + c[ix.src(1)] + "))";
  if (u.op() == Op::Store) return c.line(ptr + " = " + c[u.src(1)] + ";");
  std::string n = c.fresh("val");
  const std::string value =
      ix.num_src() == 3 ? c[ix.src(2)] + " ? " + ptr + " : (" + vtype(c.r, vt) + ")0" : ptr;
  c.line("const " + vtype(c.r, vt) + " " + n + " = " + value + ";");
  c.name[u.get()] = n;
}

void render_opt_uop(Ctx& c, const UOp& u) {
  const Dialect& d = c.r.dialect();
  switch (u.op()) {
    case Op::DefineLocal: {
      std::string n = "temp" + std::to_string(u.arg_as<int64_t>());
      c.line(d.shared_prefix + c.r.type(u.dtype().deref()) + " " + n + "[" +
             std::to_string(u.dtype().ptr_size) + "];");
      c.name[u.get()] = n;
      break;
    }
    case Op::Barrier:
      SLUICE_CHECK_IN(Error, "render", !d.barrier.empty()) << "this dialect has no barrier (GROUP needs one)";
      c.line(d.barrier);
      break;
    case Op::Vectorize: {
      std::string args;
      for (size_t i = 0; i < u.num_src(); ++i) args += (i ? ", " : "") + c[u.src(i)];
      const std::string T = vtype(c.r, u.dtype());
      std::string n = c.fresh("vec");
      // Without a constructor (C): a clang ext_vector_type compound literal.
      std::string ctor = d.vector_ctor;  // spelled for float4: the width and type are this vector's
      if (size_t at = ctor.find("float4"); at != std::string::npos) ctor.replace(at, 6, T);
      c.line("const " + T + " " + n + " = " +
             (ctor.empty() ? "(" + T + "){" + args + "}" : ctor + args + ")") + ";");
      c.name[u.get()] = n;
      break;
    }
    case Op::Gep:  // C's ext_vector_type lanes by subscript (any width); the GPU languages' by name
      c.name[u.get()] = d.vector_ctor.empty() ? c[u.src(0)] + "[" + std::to_string(u.arg_as<int64_t>()) + "]"
                                              : c[u.src(0)] + "." + "xyzw"[u.arg_as<int64_t>()];
      break;
    default: break;
  }
}

// C has no vector types: clang's ext_vector_type, declared inside the kernel (4-byte aligned: the access
// is aligned to the vector only when the buffer is).
std::string vector_typedefs(const CStyleRenderer& r, const codegen::Kernel& k) {
  if (!r.dialect().vector_ctor.empty()) return "";
  std::vector<std::string> seen;
  std::string out;
  for (const UOp& u : k.uops)
    if (u.dtype().is_vector() && !u.dtype().is_ptr()) {
      const std::string T = vtype(r, u.dtype());
      if (std::find(seen.begin(), seen.end(), T) != seen.end()) continue;
      seen.push_back(T);
      out += "  typedef " + r.type(u.dtype().base()) + " " + T + " __attribute__((ext_vector_type(" +
             std::to_string(u.dtype().count) + "), aligned(" + std::to_string(u.dtype().base().itemsize()) +
             ")));\n";
    }
  return out;
}

}  // namespace

std::string CStyleRenderer::render(const codegen::Kernel& k) const {
  Ctx c{*this, {}, {}, {}};
  for (const UOp& u : k.uops) {
    const std::string T = u.dtype().is_void() || u.dtype().is_ptr() ? ""
                          : u.dtype().is_vector()                   ? vtype(*this, u.dtype())
                                                                    : type(u.dtype());
    auto value = [&](const std::string& prefix, const std::string& expr) {
      std::string n = c.fresh(prefix);
      c.line("const " + T + " " + n + " = " + expr + ";");
      c.name[u.get()] = n;
    };
    switch (u.op()) {
      case Op::DefineGlobal: c.name[u.get()] = "data" + std::to_string(u.arg_as<int64_t>()); break;
      case Op::Const: c.name[u.get()] = literal(*this, u); break;
      case Op::Special: {
        const std::string& n = u.arg_as<VarArg>().name;  // "gidxN" / "lidxN": launch dimension N
        const auto& ids = n[0] == 'l' ? d_.local_ids : d_.global_ids;
        c.line("const " + T + " " + n + " = (" + T + ")" + ids[size_t(n.back() - '0')] + ";");
        c.name[u.get()] = n;
        break;
      }
      case Op::Range: {
        std::string n = c.fresh("ridx");
        c.line("for (" + T + " " + n + " = 0; " + n + " < " + c[u.src(0)] + "; " + n + "++) {");
        c.name[u.get()] = n;
        ++c.depth;
        break;
      }
      case Op::EndRange:
        --c.depth;
        c.line("}");
        break;
      case Op::Index: break;  // read by its LOAD or STORE
      case Op::Load: {
        const UOp& ix = u.src(0);
        std::string elem = c[ix.src(0)] + "[" + c[ix.src(1)] + "]";
        if (u.dtype().is_vector()) {  // aligned n-wide access (kernel.h)
          vector_load_store(c, u);
          break;
        }
        if (emulated(u.dtype())) elem = std::string(from_bits(u.dtype())) + "(" + elem + ")";
        value("val", ix.num_src() == 3 ? c[ix.src(2)] + " ? " + elem + " : (" + T + ")0" : elem);
        break;
      }
      case Op::Store: {
        const UOp& ix = u.src(0);
        const DType vt = u.src(1).dtype();
        if (vt.is_vector()) {
          vector_load_store(c, u);
          break;
        }
        const std::string v = emulated(vt) ? std::string(to_bits(vt)) + "(" + c[u.src(1)] + ")" : c[u.src(1)];
        const std::string st = c[ix.src(0)] + "[" + c[ix.src(1)] + "] = " + v + ";";
        c.line(ix.num_src() == 3 ? "if (" + c[ix.src(2)] + ") " + st : st);
        break;
      }
      case Op::DefineReg: {
        std::string n = c.fresh("acc");
        c.line(T + " " + n + " = " + c[u.src(0)] + ";");
        c.name[u.get()] = n;
        break;
      }
      case Op::Assign:
        c.line(c[u.src(0)] + " = " + c[u.src(1)] + ";");
        c.name[u.get()] = c[u.src(0)];
        break;
      case Op::Cast:
        // An emulated 16-bit float rounds through float, as round_float does.
        // half <-> bfloat16 goes through float too (C++ has no direct conversion between them).
        if (emulated(u.dtype()))
          value("cast", std::string(rounder(u.dtype())) + "((float)(" + c[u.src(0)] + "))");
        else if (u.dtype().itemsize() == 2 && u.dtype().is_float() && u.src(0).dtype().itemsize() == 2 &&
                 u.src(0).dtype().is_float())
          value("cast", "(" + T + ")((float)(" + c[u.src(0)] + "))");
        else
          value("cast", "(" + T + ")(" + c[u.src(0)] + ")");
        break;
      case Op::Bitcast: {
        const DType from = u.src(0).dtype(), to = u.dtype();
        std::string x = c[u.src(0)], ft = type(from);
        if (emulated(from)) x = std::string(to_bits(from)) + "(" + x + ")", ft = "unsigned short";
        if (emulated(to)) {  // the source is 16 bits wide: its pattern as unsigned short
          value("cast", std::string(from_bits(to)) + "(" + bit_cast(d_, ft, "unsigned short", x) + ")");
        } else {
          value("cast", bit_cast(d_, ft, T, x));
        }
        break;
      }
      case Op::DefineVar: c.name[u.get()] = u.arg_as<VarArg>().name; break;
      case Op::DefineLocal:
      case Op::Barrier:
      case Op::Vectorize:
      case Op::Gep: render_opt_uop(c, u); break;
      default:
        SLUICE_CHECK_IN(Error, "render", is_alu(u.op())) << "cannot render " << op_name(u.op());
        value("alu", emulated(u.dtype()) && !exact_op(u.op())
                         ? std::string(rounder(u.dtype())) + "(" + alu_expr(c, u) + ")"
                         : alu_expr(c, u));
    }
  }
  return wrap(k, vector_typedefs(*this, k) + c.out);
}

}  // namespace sluice::render
