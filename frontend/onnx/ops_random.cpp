// ONNX ops: random numbers, from sluice's counter-based generator (runtime/tensor.h rand/randn), seeded
// by OpContext::seed(). The numbers are not numpy's or ONNX Runtime's: tests compare distributions.
#include "frontend/onnx/op.h"
#include "frontend/onnx/proto.h"

namespace sluice::onnx {
namespace {

DType float_out(OpContext& c, DType dt) {
  SLUICE_CHECK_IN(DTypeError, c.op(), dt.is_float())
      << "draws floats, so dtype must be a float type, got " << onnx_type_name(dt);
  return dt;
}

Shape shape_attr(OpContext& c) {
  const std::vector<int64_t> s = c.attr_ints("shape");
  for (int64_t d : s) SLUICE_CHECK_IN(ShapeError, c.op(), d >= 0) << "shape has a negative size " << d;
  return Shape(s.begin(), s.end());
}

Tensor uniform(OpContext& c, const Shape& shape, DType dt) {
  return Tensor::uniform(shape, c.attr_float("low", 0.0), c.attr_float("high", 1.0), c.seed(), dt,
                         c.device());
}
Tensor normal(OpContext& c, const Shape& shape, DType dt) {
  return Tensor::normal(shape, c.attr_float("mean", 0.0), c.attr_float("scale", 1.0), c.seed(), dt,
                        c.device());
}

// The `Like` forms take the input's shape, and its dtype unless `dtype` says otherwise.
Values x_uniform(OpContext& c) {
  return {uniform(c, shape_attr(c), float_out(c, c.attr_dtype("dtype", dtypes::float32)))};
}
Values x_uniform_like(OpContext& c) {
  return {uniform(c, c.in(0).shape(), float_out(c, c.attr_dtype("dtype", c.in(0).dtype())))};
}
Values x_normal(OpContext& c) {
  return {normal(c, shape_attr(c), float_out(c, c.attr_dtype("dtype", dtypes::float32)))};
}
Values x_normal_like(OpContext& c) {
  return {normal(c, c.in(0).shape(), float_out(c, c.attr_dtype("dtype", c.in(0).dtype())))};
}

// 1 where a uniform draw falls below the input's probability. Draws are float32 (float64 for float64
// probabilities), so a probability resolves to 2^-24 (2^-32).
Values x_bernoulli(OpContext& c) {
  const Tensor& p = c.in(0);
  SLUICE_CHECK_IN(DTypeError, c.op(), p.dtype().is_float()) << "input must be probabilities, got " << p.str();
  const DType draw = p.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor u = Tensor::rand(p.shape(), c.seed(), draw, c.device());
  return {u.lt(p.cast(draw)).cast(c.attr_dtype("dtype", p.dtype()))};
}

// sample_size classes per row of unnormalized log-probabilities (batch, classes), by inverting the
// softmax's running sum: the class of draw u is how many running sums lie at or below u (clamped to the
// last class against rounding).
Values x_multinomial(OpContext& c) {
  const Tensor& x = c.in(0);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() == 2 && x.dtype().is_float())
      << "input must be float (batch, classes), got " << x.str();
  const int64_t samples = c.attr_int("sample_size", 1), classes = x.shape(1);
  const DType out = c.attr_dtype("dtype", dtypes::int32);
  SLUICE_CHECK_IN(DTypeError, c.op(), out == dtypes::int32 || out == dtypes::int64)
      << "dtype must be int32 or int64, got " << onnx_type_name(out);
  SLUICE_CHECK_IN(ValueError, c.op(), samples >= 1 && classes >= 1)
      << "needs sample_size >= 1 and a class, got sample_size " << samples << " for " << x.str();
  const DType acc = x.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor cdf = x.cast(acc).softmax(1).cumsum(1).unsqueeze(1);                    // (B, 1, C)
  Tensor u = Tensor::rand({x.shape(0), samples, 1}, c.seed(), acc, c.device());  // (B, S, 1)
  Tensor k = cdf.le(u).cast(dtypes::int32).sum({2}).cast(dtypes::int32);         // (B, S)
  return {k.minimum(classes - 1).cast(out)};
}

const OpDef kOps[] = {
    {"RandomUniform", 1, x_uniform}, {"RandomUniformLike", 1, x_uniform_like},
    {"RandomNormal", 1, x_normal},   {"RandomNormalLike", 1, x_normal_like},
    {"Bernoulli", 15, x_bernoulli},  {"Multinomial", 7, x_multinomial},
};

}  // namespace

std::span<const OpDef> random_ops() { return kOps; }

}  // namespace sluice::onnx
