#include "core/ir/alu.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace sluice {
namespace {

int bits_of(DType d) { return d.is_bool() ? 1 : 8 * d.itemsize(); }

std::optional<Scalar64> int_alu(Op op, DType in, std::span<const Scalar64> x) {
  const bool u = in.is_unsigned() || in.is_bool();
  const int64_t a = x[0].i, b = x.size() > 1 ? x[1].i : 0;
  const uint64_t ua = uint64_t(a), ub = uint64_t(b);
  auto wrap = [&](uint64_t v) { return Scalar64::of_int(wrap_int(in, int64_t(v))); };
  auto boolean = [](bool v) { return Scalar64::of_int(v); };
  // Sources hold already-wrapped values, so signed compares on int64 and unsigned on uint64 are exact.
  auto less = [&] { return u ? ua < ub : a < b; };
  switch (op) {
    case Op::Neg: return wrap(0 - ua);
    case Op::Add: return wrap(ua + ub);
    case Op::Sub: return wrap(ua - ub);
    case Op::Mul: return wrap(ua * ub);
    case Op::MulAcc: return wrap(ua * ub + uint64_t(x[2].i));
    case Op::IDiv:
    case Op::Mod: {
      if (b == 0) return std::nullopt;
      if (u) return wrap(op == Op::IDiv ? ua / ub : ua % ub);
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return std::nullopt;
      if (a == in.min_int() && b == -1) return std::nullopt;  // overflows the dtype: traps on x86
      return wrap(uint64_t(op == Op::IDiv ? a / b : a % b));
    }
    case Op::Max: return Scalar64::of_int(less() ? b : a);
    case Op::CmpLT: return boolean(less());
    case Op::CmpNE: return boolean(a != b);
    case Op::And: return wrap(ua & ub);
    case Op::Or: return wrap(ua | ub);
    case Op::Xor: return wrap(ua ^ ub);
    case Op::Shl:
      if (b < 0 || b >= bits_of(in)) return std::nullopt;
      return wrap(ua << b);
    case Op::Shr:
      if (b < 0 || b >= bits_of(in)) return std::nullopt;
      if (u) return wrap((in.itemsize() == 8 ? ua : ua & ((uint64_t(1) << bits_of(in)) - 1)) >> b);
      return wrap(uint64_t(a >> b));
    case Op::Where: return x[0].i ? x[1] : x[2];
    default: return std::nullopt;  // float-only ops (EXP2, SIN, ...) are not defined on integers
  }
}

std::optional<Scalar64> float_alu(Op op, DType in, std::span<const Scalar64> x) {
  const double a = x[0].f, b = x.size() > 1 ? x[1].f : 0;
  auto r = [&](double v) { return Scalar64::of_float(round_float(in, v)); };
  auto boolean = [](bool v) { return Scalar64::of_int(v); };
  switch (op) {
    case Op::Neg: return r(-a);
    case Op::Exp2: return r(std::exp2(a));
    case Op::Log2: return r(std::log2(a));
    case Op::Sin: return r(std::sin(a));
    case Op::Sqrt: return r(std::sqrt(a));
    case Op::Recip: return r(1.0 / a);
    case Op::Trunc: return r(std::trunc(a));
    case Op::Add: return r(a + b);
    case Op::Sub: return r(a - b);
    case Op::Mul: return r(a * b);
    case Op::FDiv: return r(a / b);
    case Op::MulAcc: return r(a * b + x[2].f);
    case Op::Max: return std::isnan(a) || std::isnan(b) ? r(NAN) : r(a < b ? b : a);
    case Op::CmpLT: return boolean(a < b);
    case Op::CmpNE: return boolean(a != b);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Scalar64> exec_alu(Op op, DType in, std::span<const Scalar64> x) {
  if (op == Op::Where) {  // the condition is bool; the branches carry the dtype
    return x[0].i ? x[1] : x[2];
  }
  if (in.is_float()) return float_alu(op, in.base(), x);
  if (in.is_int() || in.is_bool()) {
    if (in.is_bool() && (op == Op::Add || op == Op::Mul)) {  // bool arithmetic is OR / AND
      return Scalar64::of_int(op == Op::Add ? (x[0].i | x[1].i) : (x[0].i & x[1].i));
    }
    return int_alu(op, in.base(), x);
  }
  return std::nullopt;
}

std::optional<Scalar64> exec_cast(Scalar64 v, DType from, DType to) {
  from = from.base(), to = to.base();
  if (to.is_float()) {
    double d = from.is_float() ? v.f : from.scalar == Scalar::UInt64 ? double(uint64_t(v.i)) : double(v.i);
    return Scalar64::of_float(round_float(to, d));
  }
  if (to.is_bool()) return Scalar64::of_int(from.is_float() ? v.f != 0 : v.i != 0);
  if (!to.is_int()) return std::nullopt;
  if (!from.is_float()) return Scalar64::of_int(wrap_int(to, v.i));
  // float -> int: truncate; undefined in C when the value does not fit the target.
  double t = std::trunc(v.f);
  if (!(t >= to.min() && t <= to.max())) return std::nullopt;
  if (to.scalar == Scalar::UInt64 && t >= 9223372036854775808.0)
    return Scalar64::of_int(int64_t(uint64_t(t)));
  if (t >= 9223372036854775808.0) return std::nullopt;
  return Scalar64::of_int(int64_t(t));
}

std::optional<Scalar64> exec_bitcast(Scalar64 v, DType from, DType to) {
  from = from.base(), to = to.base();
  if (from.itemsize() != to.itemsize() || from.is_bool() || to.is_bool()) return std::nullopt;
  uint64_t raw;
  switch (from.scalar) {
    case Scalar::Float16: raw = float_to_half_bits(float(v.f)); break;
    case Scalar::BFloat16: raw = float_to_bf16_bits(float(v.f)); break;
    case Scalar::Float32: raw = std::bit_cast<uint32_t>(float(v.f)); break;
    case Scalar::Float64: raw = std::bit_cast<uint64_t>(v.f); break;
    default:
      raw = uint64_t(v.i) & (from.itemsize() == 8 ? ~uint64_t(0) : (uint64_t(1) << 8 * from.itemsize()) - 1);
  }
  switch (to.scalar) {
    case Scalar::Float16: return Scalar64::of_float(half_bits_to_float(uint16_t(raw)));
    case Scalar::BFloat16: return Scalar64::of_float(bf16_bits_to_float(uint16_t(raw)));
    case Scalar::Float32: return Scalar64::of_float(std::bit_cast<float>(uint32_t(raw)));
    case Scalar::Float64: return Scalar64::of_float(std::bit_cast<double>(raw));
    default: return Scalar64::of_int(wrap_int(to, int64_t(raw)));
  }
}

}  // namespace sluice
