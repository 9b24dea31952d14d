// ONNX ops: elementwise arithmetic, math functions, activations, comparisons, logic and casts (op.h).
// Binary ops broadcast as numpy does (Tensor's own rule); ONNX gives both operands one type.
#include <cmath>
#include <numbers>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// A float base to a scalar exponent the model fixes (fixed_by_model: an initializer, a Constant, no model
// input) takes the exponent on the host: x ** 2 is then x * x and x ** 0.5 a square root
// (Tensor::pow(Number)), not exp2(e * log2|x|) with the sign fix-ups for a negative base (Silero VAD's
// spectrum magnitude: 11 us -> under 1 us per chunk on a CPU). Only where that changes nothing else: an
// exponent of no more dimensions than the base (the result keeps the base's shape) and not negative
// (1 / x^n would overflow in float16 where x^-n does not).
Values x_pow(OpContext& c) {  // the exponent may have another type; the result has the base's
  const Tensor &x = c.in(0), &e = c.in(1);
  if (x.dtype().is_float() && e.numel() == 1 && e.ndim() <= x.ndim() && fixed_by_model(e, c.run_state()))
    if (const double v = c.floats(1)[0]; v >= 0) return {x.pow(Number(v)).cast(x.dtype())};
  return {x.pow(e).cast(x.dtype())};
}

Values x_div(OpContext& c) {  // integers: the float quotient truncated, as the reference casts it back
  const Tensor &a = c.in(0), &b = c.in(1);
  return {a.dtype().is_float() ? a.div(b) : a.div(b, Rounding::Trunc)};
}

Values x_mod(OpContext& c) {
  const Tensor &a = c.in(0), &b = c.in(1);
  if (!c.attr_int("fmod", 0)) return {a.mod(b)};  // sign of the divisor (Python)
  if (!a.dtype().is_float()) return {a - a.div(b, Rounding::Trunc) * b};
  return {a - (a / b).trunc() * b};  // C fmod: sign of the dividend
}

// atan on the whole line: |x| > 1 folds through atan(x) = pi/2 - atan(1/x), then t > tan(pi/12) through
// atan(t) = pi/6 + atan((t*sqrt3 - 1) / (sqrt3 + t)); on |t| <= 0.268 the series to t^11 is within 1e-8.
Tensor atan(const Tensor& x) {
  const double s3 = std::numbers::sqrt3;
  Tensor a = x.abs();
  Tensor big = a.gt(1);
  Tensor t = big.where(a.reciprocal(), a);
  Tensor mid = t.gt(0.2679491924311227);
  Tensor u = mid.where((t * s3 - 1) / (t + s3), t);
  Tensor u2 = u * u;
  Tensor p = u * (1 + u2 * (-1.0 / 3 + u2 * (1.0 / 5 + u2 * (-1.0 / 7 + u2 * (1.0 / 9 - u2 * (1.0 / 11))))));
  Tensor r = mid.where(p + std::numbers::pi / 6, p);
  r = big.where(std::numbers::pi / 2 - r, r);
  return x.lt(0).where(-r, r);
}
Tensor asin(const Tensor& x) {  // atan(x / sqrt(1 - x^2)); |x| = 1 gives +-pi/2 through atan(+-inf)
  return atan(x / (1 - x * x).sqrt());
}

Values x_clip(OpContext& c) {
  Tensor x = c.in(0);
  if (c.opset() < 11) {  // min and max were attributes
    const double lo = c.attr_float("min", -INFINITY), hi = c.attr_float("max", INFINITY);
    if (std::isinf(lo) && std::isinf(hi)) return {x};  // no bounds: Tensor::clip wants at least one
    return {x.clip(std::isinf(lo) ? std::nullopt : std::optional<Number>(lo),
                   std::isinf(hi) ? std::nullopt : std::optional<Number>(hi))};
  }
  if (auto lo = c.opt(1)) x = x.maximum(lo->cast(x.dtype()));
  if (auto hi = c.opt(2)) x = x.minimum(hi->cast(x.dtype()));
  return {x};
}

// Max, Min, Sum, Mean: any number of inputs, broadcast together.
template <int kind>
Values x_variadic(OpContext& c) {
  Tensor acc = c.in(0);
  for (size_t i = 1; i < c.size(); ++i) {
    const Tensor& y = c.in(i);
    acc = kind == 0 ? acc.maximum(y) : kind == 1 ? acc.minimum(y) : acc + y;
  }
  if (kind == 3) acc = acc / double(c.size());
  return {acc};
}

Values x_cast(OpContext& c) {
  const DType to = c.attr_dtype("to");
  return {c.in(0).cast(to)};
}

// Inference (and ratio 0): the identity, with an all-true mask. Training: each element kept when a uniform
// draw is at least `ratio`, and scaled by 1 / (1 - ratio); the mask says which were kept.
Values x_dropout(OpContext& c) {
  const Tensor& x = c.in(0);
  bool training = c.has(2) && c.ints(2).at(0) != 0;
  double ratio = c.opset() < 12 ? c.attr_float("ratio", 0.5) : c.has(1) ? c.floats(1).at(0) : 0.5;
  if (!training || ratio == 0) return {x, Tensor::full(x.shape(), true, dtypes::bool_, c.device())};
  SLUICE_CHECK_IN(ValueError, c.op(), ratio > 0 && ratio <= 1) << "ratio must be in [0, 1], got " << ratio;
  const DType draw = x.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor keep = Tensor::rand(x.shape(), c.seed(), draw, c.device()).ge(ratio);
  return {keep.where(x * (ratio < 1 ? 1 / (1 - ratio) : 0.0), 0).cast(x.dtype()), keep};
}

// Before opset 7 a 1-D slope holds one value per channel (axis 1); since, it broadcasts as numpy does.
Values x_prelu(OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor slope = c.in(1);
  if (c.opset() < 7 && slope.ndim() == 1 && x.ndim() >= 2) {
    Shape per_channel(size_t(x.ndim() - 1), 1);
    per_channel[0] = slope.numel();
    slope = slope.reshape(per_channel);
  }
  return {x.lt(0).where(x * slope, x)};
}

Values x_bitshift(OpContext& c) {
  const std::string dir = c.attr_str("direction");
  SLUICE_CHECK_IN(ValueError, c.op(), dir == "LEFT" || dir == "RIGHT")
      << "direction must be LEFT or RIGHT, got '" << dir << "'";
  return {dir == "LEFT" ? c.in(0).lshift(c.in(1)) : c.in(0).rshift(c.in(1))};
}

Values x_gelu(OpContext& c) {
  const Tensor& x = c.in(0);
  if (c.attr_str("approximate", "none") == "tanh") return {x.gelu()};
  return {x * 0.5 * (1 + (x * std::numbers::sqrt2 / 2).erf())};
}

// One row per op: the table reads as a table.
// clang-format off
#define UNARY(name, expr) \
  { name, 1, [](OpContext& c) -> Values { const Tensor& x = c.in(0); return {expr}; } }
#define BINARY(name, expr) \
  { name, 1, [](OpContext& c) -> Values { const Tensor &a = c.in(0), &b = c.in(1); return {expr}; } }

const OpDef kOps[] = {
    BINARY("Add", a + b),
    BINARY("Sub", a - b),
    BINARY("Mul", a * b),
    {"Div", 1, x_div},
    {"Pow", 1, x_pow},
    {"Mod", 10, x_mod},
    UNARY("Neg", -x),
    UNARY("Abs", x.abs()),
    UNARY("Sign", x.sign()),
    UNARY("Reciprocal", x.reciprocal()),
    UNARY("Sqrt", x.sqrt()),
    UNARY("Exp", x.exp()),
    UNARY("Log", x.log()),
    UNARY("Sin", x.sin()),
    UNARY("Cos", x.cos()),
    UNARY("Tan", x.tan()),
    UNARY("Atan", atan(x)),
    UNARY("Asin", asin(x)),
    UNARY("Acos", std::numbers::pi / 2 - asin(x)),
    UNARY("Sinh", (x.exp() - (-x).exp()) * 0.5),
    UNARY("Cosh", (x.exp() + (-x).exp()) * 0.5),
    UNARY("Asinh", (x + (x * x + 1).sqrt()).log()),
    UNARY("Acosh", (x + (x * x - 1).sqrt()).log()),
    UNARY("Atanh", ((1 + x) / (1 - x)).log() * 0.5),
    UNARY("Tanh", x.tanh()),
    UNARY("Erf", x.erf()),
    UNARY("Floor", x.floor()),
    UNARY("Ceil", x.ceil()),
    UNARY("Round", x.round()),  // half to even, as the spec says
    UNARY("IsNaN", x.isnan()),
    {"IsInf", 10, [](OpContext& c) -> Values {
       return {c.in(0).isinf(c.attr_int("detect_positive", 1) != 0, c.attr_int("detect_negative", 1) != 0)};
     }},
    UNARY("Relu", x.relu()),
    UNARY("Sigmoid", x.sigmoid()),
    UNARY("Softsign", x.softsign()),
    UNARY("Softplus", x.softplus()),
    UNARY("Mish", x.mish()),
    {"LeakyRelu", 6, [](OpContext& c) -> Values { return {c.in(0).leaky_relu(c.attr_float("alpha", 0.01))}; }},
    {"Elu", 6, [](OpContext& c) -> Values { return {c.in(0).elu(c.attr_float("alpha", 1.0))}; }},
    {"Celu", 12, [](OpContext& c) -> Values { return {c.in(0).celu(c.attr_float("alpha", 1.0))}; }},
    {"Selu", 6, [](OpContext& c) -> Values {
       return {c.in(0).selu(c.attr_float("alpha", 1.67326319217681884765625),
                            c.attr_float("gamma", 1.05070102214813232421875))};
     }},
    {"ThresholdedRelu", 10, [](OpContext& c) -> Values {
       const Tensor& x = c.in(0);
       return {x.gt(c.attr_float("alpha", 1.0)).where(x, 0)};
     }},
    {"HardSigmoid", 6, [](OpContext& c) -> Values {
       return {(c.in(0) * c.attr_float("alpha", 0.2) + c.attr_float("beta", 0.5)).clip(0, 1)};
     }},
    UNARY("HardSwish", x * (x / 6 + 0.5).clip(0, 1)),
    {"PRelu", 1, x_prelu},
    {"Shrink", 9, [](OpContext& c) -> Values {
       const Tensor& x = c.in(0);
       const double l = c.attr_float("lambd", 0.5), bias = c.attr_float("bias", 0.0);
       return {x.lt(-l).where(x + bias, x.gt(l).where(x - bias, x.zeros_like()))};
     }},
    {"Gelu", 20, x_gelu},
    {"Clip", 6, x_clip},
    {"Max", 8, x_variadic<0>},
    {"Min", 8, x_variadic<1>},
    {"Sum", 8, x_variadic<2>},
    {"Mean", 8, x_variadic<3>},
    BINARY("Equal", a.eq(b)),
    BINARY("Less", a.lt(b)),
    BINARY("LessOrEqual", a.le(b)),
    BINARY("Greater", a.gt(b)),
    BINARY("GreaterOrEqual", a.ge(b)),
    UNARY("Not", x.logical_not()),
    BINARY("And", a.logical_and(b)),
    BINARY("Or", a.logical_or(b)),
    BINARY("Xor", a.logical_xor(b)),
    BINARY("BitwiseAnd", a.bitwise_and(b)),
    BINARY("BitwiseOr", a.bitwise_or(b)),
    BINARY("BitwiseXor", a.bitwise_xor(b)),
    UNARY("BitwiseNot", x.bitwise_not()),
    {"BitShift", 11, x_bitshift},
    {"Where", 9, [](OpContext& c) -> Values { return {c.in(0).where(c.in(1), c.in(2))}; }},
    {"Cast", 6, x_cast},
    {"CastLike", 15, [](OpContext& c) -> Values { return {c.in(0).cast(c.in(1).dtype())}; }},
    {"Identity", 1, [](OpContext& c) -> Values { return {c.value(0)}; }},
    {"Dropout", 7, x_dropout},
};
// clang-format on

#undef UNARY
#undef BINARY

}  // namespace

std::span<const OpDef> elementwise_ops() { return kOps; }

}  // namespace sluice::onnx
