#include "renderers/cstyle.h"

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

std::string literal(const CStyleRenderer& r, const UOp& c) {
  const DType dt = c.dtype();
  char buf[64];
  if (dt.is_bool()) return c.const_int_value() ? "1" : "0";
  if (dt.is_float()) {
    const bool f32 = dt.scalar != Scalar::Float64;
    const double v = c.const_value();
    const Dialect& d = r.dialect();
    if (std::isnan(v)) return f32 ? d.nan : "__builtin_nan(\"\")";
    if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + (f32 ? d.infinity : "__builtin_inf()") + ")";
    std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (f32) s += "f";
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

// The C expression of an ALU op on already-named sources.
std::string alu_expr(Ctx& c, const UOp& u) {
  const Dialect& d = c.r.dialect();
  const DType dt = u.src(0).dtype();  // the operands' dtype (comparisons give bool)
  const std::string T = c.r.type(u.dtype()), U = utype(dt);
  auto s = [&](size_t i) { return c[u.src(i)]; };
  auto wrapped = [&](const char* op) {
    return "(" + T + ")((" + U + ")" + s(0) + " " + op + " (" + U + ")" + s(1) + ")";
  };
  auto math = [&](const char* fn) {
    return d.math_prefix + fn + (dt.scalar == Scalar::Float64 ? "" : d.float_fn_suffix) + "(" + s(0) + ")";
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
      const std::string m = "(" + s(0) + " < " + s(1) + " ? " + s(1) + " : " + s(0) + ")";
      if (!fl) return m;
      const std::string nan = dt.scalar == Scalar::Float64 ? "__builtin_nan(\"\")" : d.nan;
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
    case Op::Exp2: return math("exp2");
    case Op::Log2: return math("log2");
    case Op::Sin: return math("sin");
    case Op::Sqrt: return math("sqrt");
    case Op::Trunc: return math("trunc");
    case Op::Recip: return "(" + T + ")1 / " + s(0);
    default: break;
  }
  SLUICE_CHECK_IN(Error, "render", false) << "no C for " << op_name(u.op()) << " on " << dt.name();
  return {};
}

}  // namespace

std::string CStyleRenderer::type(DType dt) const {
  const DType b = dt.base();
  SLUICE_CHECK_IN(
      DTypeError, "render",
      (b.scalar != Scalar::Float16 || d_.native_half) && (b.scalar != Scalar::BFloat16 || d_.native_bf16))
      << b.name() << " is not supported by this renderer yet";
  for (const auto& [s, n] : d_.type_names)
    if (s == b.scalar) return n;
  return b.c_name();
}

std::string CStyleRenderer::render(const codegen::Kernel& k) const {
  Ctx c{*this, {}, {}, {}};
  for (const UOp& u : k.uops) {
    const std::string T = u.dtype().is_void() || u.dtype().is_ptr() ? "" : type(u.dtype());
    auto value = [&](const std::string& prefix, const std::string& expr) {
      std::string n = c.fresh(prefix);
      c.line("const " + T + " " + n + " = " + expr + ";");
      c.name[u.get()] = n;
    };
    switch (u.op()) {
      case Op::DefineGlobal: c.name[u.get()] = "data" + std::to_string(u.arg_as<int64_t>()); break;
      case Op::Const: c.name[u.get()] = literal(*this, u); break;
      case Op::Special: {
        const std::string& n = u.arg_as<VarArg>().name;  // "gidxN": launch dimension N
        c.line("const " + T + " " + n + " = " + d_.global_ids[size_t(n.back() - '0')] + ";");
        c.name[u.get()] = n;
        break;
      }
      case Op::Range: {
        std::string n = c.fresh("ridx");
        c.line("for (int " + n + " = 0; " + n + " < " + c[u.src(0)] + "; " + n + "++) {");
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
        const std::string elem = c[ix.src(0)] + "[" + c[ix.src(1)] + "]";
        value("val", ix.num_src() == 3 ? c[ix.src(2)] + " ? " + elem + " : (" + T + ")0" : elem);
        break;
      }
      case Op::Store: {
        const UOp& ix = u.src(0);
        const std::string st = c[ix.src(0)] + "[" + c[ix.src(1)] + "] = " + c[u.src(1)] + ";";
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
      case Op::Cast: value("cast", "(" + T + ")(" + c[u.src(0)] + ")"); break;
      case Op::Bitcast:  // a union reinterprets the bits without aliasing UB
        value("cast",
              "((union { " + type(u.src(0).dtype()) + " f; " + T + " t; }){.f = " + c[u.src(0)] + "}).t");
        break;
      default:
        SLUICE_CHECK_IN(Error, "render", is_alu(u.op())) << "cannot render " << op_name(u.op());
        value("alu", alu_expr(c, u));
    }
  }
  return wrap(k, c.out);
}

}  // namespace sluice::render
