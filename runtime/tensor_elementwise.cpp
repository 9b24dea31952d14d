// Elementwise ops: arithmetic, math functions, rounding, comparisons, logic and bits, built from the ALU
// primitives (EXP2 LOG2 SIN SQRT RECIP NEG TRUNC, ADD SUB MUL FDIV IDIV MOD MAX CMPLT CMPNE AND OR XOR SHL
// SHR, WHERE) the way the reference design builds its Tensor methods.
#include <cmath>
#include <limits>
#include <numbers>

#include "runtime/tensor_internal.h"

namespace sluice {

using detail::alu;
using detail::broadcasted;
using detail::number_tensor;
using detail::OpScope;

namespace {
constexpr double kLn2 = std::numbers::ln2;

Tensor to_float(const Tensor& t) { return t.cast(least_upper_float(t.dtype())); }

Tensor binary(const char* name, Op op, const Tensor& x, const Tensor& y) {
  OpScope scope(name);
  auto [a, b] = broadcasted(name, x, y);
  return alu(op, a, b);
}

void check_bitwise(const char* name, const Tensor& t) {
  SLUICE_CHECK_IN(DTypeError, name, t.dtype().is_int() || t.dtype().is_bool())
      << "needs integer or bool tensors, got " << t.dtype().name();
}
}  // namespace

// A Number operand becomes a tensor by the promotion rule (tensor.h) and takes the Tensor path.
#define SLUICE_NUMBER_OVERLOAD(METHOD)      \
  Tensor Tensor::METHOD(Number y) const {   \
    OpScope scope(#METHOD);                 \
    return METHOD(number_tensor(*this, y)); \
  }
SLUICE_NUMBER_OVERLOAD(add)
SLUICE_NUMBER_OVERLOAD(sub)
SLUICE_NUMBER_OVERLOAD(mul)
SLUICE_NUMBER_OVERLOAD(mod)
SLUICE_NUMBER_OVERLOAD(maximum)
SLUICE_NUMBER_OVERLOAD(minimum)
SLUICE_NUMBER_OVERLOAD(lt)
SLUICE_NUMBER_OVERLOAD(le)
SLUICE_NUMBER_OVERLOAD(gt)
SLUICE_NUMBER_OVERLOAD(ge)
SLUICE_NUMBER_OVERLOAD(eq)
SLUICE_NUMBER_OVERLOAD(ne)
SLUICE_NUMBER_OVERLOAD(bitwise_and)
SLUICE_NUMBER_OVERLOAD(bitwise_or)
SLUICE_NUMBER_OVERLOAD(bitwise_xor)
#undef SLUICE_NUMBER_OVERLOAD

// ---------------------------------------------------------------- arithmetic

Tensor Tensor::add(const Tensor& y) const { return binary("add", Op::Add, *this, y); }
Tensor Tensor::sub(const Tensor& y) const { return binary("sub", Op::Sub, *this, y); }
Tensor Tensor::mul(const Tensor& y) const { return binary("mul", Op::Mul, *this, y); }

Tensor Tensor::div(Number y, Rounding rounding) const {
  OpScope scope("div");
  return div(number_tensor(*this, y), rounding);
}
Tensor Tensor::div(const Tensor& y, Rounding rounding) const {
  OpScope scope("div");
  auto [a, b] = broadcasted("div", *this, y);
  if (rounding == Rounding::None || !a.dtype().is_int()) {
    Tensor q = alu(Op::FDiv, to_float(a), to_float(b));
    return rounding == Rounding::None ? q : rounding == Rounding::Trunc ? q.trunc() : q.floor();
  }
  Tensor q = alu(Op::IDiv, a, b);  // C: toward zero
  if (rounding == Rounding::Trunc) return q;
  // Floor is one less where the division was inexact and the signs differ (the remainder's sign is a's).
  Tensor r = alu(Op::Mod, a, b);
  return r.ne(0).logical_and(r.lt(0).ne(b.lt(0))).where(q - 1, q);
}

Tensor Tensor::mod(const Tensor& y) const {
  OpScope scope("mod");
  auto [a, b] = broadcasted("mod", *this, y);
  SLUICE_CHECK_IN(DTypeError, "mod", !a.dtype().is_bool()) << "needs numbers, got bool";
  if (a.dtype().is_float()) return a - a.div(b, Rounding::Floor) * b;
  Tensor r = alu(Op::Mod, a, b);  // C: the sign of a; Python's result takes the sign of b
  if (a.dtype().is_unsigned()) return r;
  return r.ne(0).logical_and(r.lt(0).ne(b.lt(0))).where(r + b, r);
}

Tensor Tensor::pow(Number e) const {
  OpScope scope("pow");
  Tensor ex = number_tensor(*this, e);
  DType dt = least_upper_dtype({dtype(), ex.dtype()});
  double v = e.as_double();
  // Whole exponents multiply exactly (square and multiply); negative ones invert a float result.
  if (v == std::trunc(v) && std::abs(v) <= double(1 << 30) && (v >= 0 || dt.is_float())) {
    std::optional<Tensor> result;
    Tensor base = cast(dt);
    for (auto n = int64_t(std::abs(v)); n > 0; n >>= 1) {
      if (n & 1) result = result ? *result * base : base;
      if (n > 1) base = base * base;
    }
    if (!result) return base.ones_like();
    return v < 0 ? result->reciprocal() : *result;
  }
  if (v == 0.5 && dt.is_float()) return cast(dt).sqrt();
  return pow(ex);
}

// b ** e = exp2(e * log2|b|), with the sign of a negative base fixed up for odd integer exponents, NaN for
// fractional ones, and 0 ** 0 = 1. Integer results round back to the integer dtype.
Tensor Tensor::pow(const Tensor& exponent) const {
  OpScope scope("pow");
  auto [base, ex] = broadcasted("pow", *this, exponent);
  Tensor b = to_float(base), e = to_float(ex);
  Tensor mag = (e * b.abs().log2()).exp2();
  Tensor odd = (e - (e * 0.5).floor() * 2).eq(1);
  Tensor negative = b.lt(0).where(
      e.ne(e.trunc()).where(std::numeric_limits<double>::quiet_NaN(), odd.where(mag.neg(), mag)), mag);
  Tensor ret = b.eq(0).logical_and(e.eq(0)).where(1.0, negative);
  return base.dtype().is_float() ? ret : ret.round().cast(base.dtype());
}

Tensor Tensor::maximum(const Tensor& y) const { return binary("maximum", Op::Max, *this, y); }
Tensor Tensor::minimum(const Tensor& y) const {
  OpScope scope("minimum");
  auto [a, b] = broadcasted("minimum", *this, y);
  return detail::inverse(alu(Op::Max, detail::inverse(a), detail::inverse(b)));
}

Tensor Tensor::neg() const {
  OpScope scope("neg");
  return dtype().is_bool() ? logical_not() : alu(Op::Neg, *this);
}
Tensor Tensor::abs() const {
  OpScope scope("abs");
  if (dtype().is_unsigned() || dtype().is_bool()) return *this;
  return lt(0).where(neg(), *this);
}
Tensor Tensor::sign() const {
  OpScope scope("sign");
  if (dtype().is_bool()) return *this;
  // + x*0 carries NaN through.
  return ne(0).where(lt(0).where(full_like(-1), full_like(1)), full_like(0)) + *this * 0;
}
Tensor Tensor::square() const {
  OpScope scope("square");
  return *this * *this;
}

// ---------------------------------------------------------------- math functions (computed in float)

#define SLUICE_FLOAT_UNARY(METHOD, OP) \
  Tensor Tensor::METHOD() const {      \
    OpScope scope(#METHOD);            \
    return alu(OP, to_float(*this));   \
  }
SLUICE_FLOAT_UNARY(reciprocal, Op::Recip)
SLUICE_FLOAT_UNARY(sqrt, Op::Sqrt)
SLUICE_FLOAT_UNARY(exp2, Op::Exp2)
SLUICE_FLOAT_UNARY(log2, Op::Log2)
SLUICE_FLOAT_UNARY(sin, Op::Sin)
#undef SLUICE_FLOAT_UNARY

Tensor Tensor::rsqrt() const {
  OpScope scope("rsqrt");
  return sqrt().reciprocal();
}
Tensor Tensor::exp() const {
  OpScope scope("exp");
  return (to_float(*this) * (1 / kLn2)).exp2();
}
Tensor Tensor::log() const {
  OpScope scope("log");
  return log2() * kLn2;
}
Tensor Tensor::cos() const {
  OpScope scope("cos");
  return (std::numbers::pi / 2 - to_float(*this)).sin();
}
Tensor Tensor::tan() const {
  OpScope scope("tan");
  return sin() / cos();
}

// ---------------------------------------------------------------- rounding (integers are already whole)

Tensor Tensor::trunc() const {
  OpScope scope("trunc");
  return dtype().is_float() ? alu(Op::Trunc, *this) : *this;
}
Tensor Tensor::floor() const {
  OpScope scope("floor");
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return t.gt(*this).where(t - 1, t);
}
Tensor Tensor::ceil() const {
  OpScope scope("ceil");
  if (!dtype().is_float()) return *this;
  Tensor t = trunc();
  return t.lt(*this).where(t + 1, t);
}
// x - floor(x) is exact, so ties are seen exactly (floor(x + 0.5) is not: 0.49999997f + 0.5f rounds to 1).
Tensor Tensor::round() const {
  OpScope scope("round");
  if (!dtype().is_float()) return *this;
  Tensor f = floor(), frac = *this - f;
  Tensor odd = (f - (f * 0.5).floor() * 2).ne(0);
  return frac.gt(0.5).logical_or(frac.eq(0.5).logical_and(odd)).where(f + 1, f);
}

Tensor Tensor::isnan() const {
  OpScope scope("isnan");
  return ne(*this);
}
Tensor Tensor::isinf(bool detect_positive, bool detect_negative) const {
  OpScope scope("isinf");
  if (!dtype().is_float()) return full_like(false, dtypes::bool_);
  constexpr double inf = std::numeric_limits<double>::infinity();
  return eq(inf)
      .logical_and(full_like(detect_positive, dtypes::bool_))
      .logical_or(eq(-inf).logical_and(full_like(detect_negative, dtypes::bool_)));
}

Tensor Tensor::clip(std::optional<Number> min, std::optional<Number> max) const {
  OpScope scope("clip");
  SLUICE_CHECK_IN(ValueError, "clip", min || max) << "needs a min or a max";
  Tensor t = *this;
  if (min) t = t.maximum(*min);
  if (max) t = t.minimum(*max);
  return t;
}

Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  OpScope scope("lerp");
  return *this + (end - *this) * weight;
}
Tensor Tensor::lerp(const Tensor& end, Number weight) const {
  OpScope scope("lerp");
  return *this + (end - *this) * weight;
}

Tensor Tensor::where(const Tensor& x, const Tensor& y) const {
  OpScope scope("where");
  auto [a, b] = broadcasted("where", x, y);
  auto [c, a2] = broadcasted("where", cast(dtypes::bool_), a, false);
  return alu(Op::Where, c, a2, detail::broadcast_to("where", b, c.shape()));
}
Tensor Tensor::where(const Tensor& x, Number y) const {
  OpScope scope("where");
  return where(x, number_tensor(x, y));
}
Tensor Tensor::where(Number x, const Tensor& y) const {
  OpScope scope("where");
  return where(number_tensor(y, x), y);
}
Tensor Tensor::where(Number x, Number y) const {
  OpScope scope("where");
  return where(detail::const_tensor(device(), x.default_dtype(), x),
               detail::const_tensor(device(), y.default_dtype(), y));
}

// ---------------------------------------------------------------- comparisons

Tensor Tensor::lt(const Tensor& y) const { return binary("lt", Op::CmpLT, *this, y); }
Tensor Tensor::gt(const Tensor& y) const { return binary("gt", Op::CmpLT, y, *this); }
Tensor Tensor::ne(const Tensor& y) const { return binary("ne", Op::CmpNE, *this, y); }
Tensor Tensor::eq(const Tensor& y) const {
  OpScope scope("eq");
  return ne(y).logical_not();
}
// Floats need the (x < y) | (x == y) form: NaN <= x is false, while !(NaN > x) would be true.
Tensor Tensor::le(const Tensor& y) const {
  OpScope scope("le");
  auto [a, b] = broadcasted("le", *this, y);
  return a.dtype().is_float() ? a.lt(b).logical_or(a.eq(b)) : b.lt(a).logical_not();
}
Tensor Tensor::ge(const Tensor& y) const {
  OpScope scope("ge");
  return y.le(*this);
}

// ---------------------------------------------------------------- logic and bits

Tensor Tensor::logical_not() const {
  OpScope scope("logical_not");
  Tensor b = cast(dtypes::bool_);
  return alu(Op::CmpNE, b, detail::const_tensor(device(), dtypes::bool_, true, b.shape()));
}
Tensor Tensor::logical_and(const Tensor& y) const {
  return binary("logical_and", Op::And, cast(dtypes::bool_), y.cast(dtypes::bool_));
}
Tensor Tensor::logical_or(const Tensor& y) const {
  return binary("logical_or", Op::Or, cast(dtypes::bool_), y.cast(dtypes::bool_));
}
Tensor Tensor::logical_xor(const Tensor& y) const {
  return binary("logical_xor", Op::Xor, cast(dtypes::bool_), y.cast(dtypes::bool_));
}

namespace {
Tensor bitwise(const char* name, Op op, const Tensor& x, const Tensor& y) {
  OpScope scope(name);
  auto [a, b] = broadcasted(name, x, y);
  check_bitwise(name, a);
  return alu(op, a, b);
}
Tensor shift(const char* name, Op op, const Tensor& x, const Tensor& y) {
  OpScope scope(name);
  SLUICE_CHECK_IN(DTypeError, name, x.dtype().is_int() && y.dtype().is_int())
      << "needs integer tensors, got " << x.dtype().name() << " and " << y.dtype().name();
  auto [a, b] = broadcasted(name, x, y, false);
  return alu(op, a, b.cast(a.dtype()));
}
}  // namespace

Tensor Tensor::bitwise_and(const Tensor& y) const { return bitwise("bitwise_and", Op::And, *this, y); }
Tensor Tensor::bitwise_or(const Tensor& y) const { return bitwise("bitwise_or", Op::Or, *this, y); }
Tensor Tensor::bitwise_xor(const Tensor& y) const { return bitwise("bitwise_xor", Op::Xor, *this, y); }
Tensor Tensor::bitwise_not() const {
  OpScope scope("bitwise_not");
  check_bitwise("bitwise_not", *this);
  return dtype().is_bool() ? logical_not() : alu(Op::Xor, *this, full_like(-1));  // -1: all bits set
}
Tensor Tensor::lshift(const Tensor& y) const { return shift("lshift", Op::Shl, *this, y); }
Tensor Tensor::rshift(const Tensor& y) const { return shift("rshift", Op::Shr, *this, y); }
Tensor Tensor::lshift(Number y) const {
  OpScope scope("lshift");
  return lshift(detail::const_tensor(device(), y.default_dtype(), y));
}
Tensor Tensor::rshift(Number y) const {
  OpScope scope("rshift");
  return rshift(detail::const_tensor(device(), y.default_dtype(), y));
}

// ---------------------------------------------------------------- operators

#define SLUICE_TENSOR_OPERATOR(OP, METHOD)                                     \
  Tensor operator OP(const Tensor& a, const Tensor& b) { return a.METHOD(b); } \
  Tensor operator OP(const Tensor& a, Number b) { return a.METHOD(b); }        \
  Tensor operator OP(Number a, const Tensor& b) {                              \
    OpScope scope(#METHOD);                                                    \
    return number_tensor(b, a).METHOD(b);                                      \
  }
SLUICE_TENSOR_OPERATOR(+, add)
SLUICE_TENSOR_OPERATOR(-, sub)
SLUICE_TENSOR_OPERATOR(*, mul)
SLUICE_TENSOR_OPERATOR(/, div)
SLUICE_TENSOR_OPERATOR(%, mod)
SLUICE_TENSOR_OPERATOR(&, bitwise_and)
SLUICE_TENSOR_OPERATOR(|, bitwise_or)
SLUICE_TENSOR_OPERATOR(^, bitwise_xor)
SLUICE_TENSOR_OPERATOR(<, lt)
SLUICE_TENSOR_OPERATOR(<=, le)
SLUICE_TENSOR_OPERATOR(>, gt)
SLUICE_TENSOR_OPERATOR(>=, ge)
SLUICE_TENSOR_OPERATOR(==, eq)
SLUICE_TENSOR_OPERATOR(!=, ne)
#undef SLUICE_TENSOR_OPERATOR
Tensor operator<<(const Tensor& a, const Tensor& b) { return a.lshift(b); }
Tensor operator<<(const Tensor& a, Number b) { return a.lshift(b); }
Tensor operator>>(const Tensor& a, const Tensor& b) { return a.rshift(b); }
Tensor operator>>(const Tensor& a, Number b) { return a.rshift(b); }
Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator~(const Tensor& a) { return a.bitwise_not(); }

}  // namespace sluice
