// ONNX ops: reductions, arg-reductions, softmax and its kin, cumulative sums, top-k and normalizations
// (op.h). Every result keeps the input's dtype (a float32 mean of an int tensor is cast back, as numpy's
// reference does), except the int64 indices of ArgMax, ArgMin and TopK.
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// The axes of a Reduce*: an attribute until the opset that made them the optional input 1 (13 for
// ReduceSum, 18 for the others). Empty means every axis, or none at all with noop_with_empty_axes.
std::optional<Shape> reduce_axes(OpContext& c, int input_since) {
  Shape axes = c.opset() >= input_since ? (c.has(1) ? c.ints(1) : Shape{}) : c.attr_ints("axes", {});
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0)) return std::nullopt;
  return axes;
}

// x's shape without `axes` (all of them when empty): what keepdims=0 leaves.
Shape reduced_shape(const OpContext& c, const Tensor& x, const Shape& axes) {
  std::vector<bool> drop(size_t(x.ndim()), axes.empty());
  for (int64_t a : axes) {
    SLUICE_CHECK_IN(ShapeError, c.op(), a >= -x.ndim() && a < x.ndim())
        << "axis " << a << " is out of range for rank " << x.ndim();
    drop[size_t(a < 0 ? a + x.ndim() : a)] = true;
  }
  Shape out;
  for (size_t i = 0; i < drop.size(); ++i)
    if (!drop[i]) out.push_back(x.shape()[i]);
  return out;
}

// A Reduce* op: `pre` maps each element, `fold` reduces the axes (keeping them), `post` maps the result.
template <int input_since, class Pre, class Fold, class Post>
Values reduce_op(OpContext& c, Pre pre, Fold fold, Post post) {
  const Tensor& x = c.in(0);
  std::optional<Shape> axes = reduce_axes(c, input_since);
  if (!axes) return {x};  // noop_with_empty_axes: the input as it is
  Tensor r = post(fold(pre(x), *axes));
  if (!c.attr_int("keepdims", 1)) r = r.reshape(reduced_shape(c, x, *axes));
  return {r.cast(x.dtype())};
}

Tensor sum(const Tensor& x, const Shape& axes) { return x.sum(axes, true); }

#define REDUCE(name, since, pre, fold, post)                                                            \
  {                                                                                                     \
    name, 1, [](OpContext& c) -> Values {                                                               \
      return reduce_op<since>(                                                                          \
          c, [](const Tensor& x) { return pre; }, [](const Tensor& x, const Shape& a) { return fold; }, \
          [](const Tensor& x) { return post; });                                                        \
    }                                                                                                   \
  }

// ---------------------------------------------------------------- ArgMax, ArgMin

// The first extreme's index, or with select_last_index the last one's: the first in the flipped axis.
template <bool is_max>
Values x_arg(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = c.attr_int("axis", 0);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -x.ndim() && axis < x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  auto arg = [&](const Tensor& t) { return is_max ? t.argmax(axis, keep) : t.argmin(axis, keep); };
  if (!c.attr_int("select_last_index", 0)) return {arg(x).cast(dtypes::int64)};
  return {(x.shape(axis) - 1 - arg(x.flip({axis}))).cast(dtypes::int64)};
}

// ---------------------------------------------------------------- Softmax, LogSoftmax, Hardmax

// Before opset 13 these ops work on x coerced to 2-D at `axis` (default 1): rows are everything before
// it, columns everything from it on. Since 13 they work on the one axis (default -1).
template <class Fn>
Values along_axis(OpContext& c, Fn fn) {
  const Tensor& x = c.in(0);
  const bool coerce = c.opset() < 13;
  int64_t axis = c.attr_int("axis", coerce ? 1 : -1);
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -x.ndim() && axis < x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  if (axis < 0) axis += x.ndim();
  if (!coerce) return {fn(x, axis)};
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < x.ndim(); ++i) (i < axis ? rows : cols) *= x.shape(i);
  return {fn(x.reshape({rows, cols}), 1).reshape(x.shape())};
}

Tensor hardmax(const Tensor& x, int64_t axis) {  // 1 at the first maximum
  Tensor first = x.argmax(axis, true);
  Shape ramp_shape(size_t(x.ndim()), 1);
  ramp_shape[size_t(axis)] = x.shape(axis);
  Tensor ramp = Tensor::arange(0, x.shape(axis), 1, dtypes::int32, x.device()).reshape(ramp_shape);
  return first.eq(ramp).cast(x.dtype());
}

// ---------------------------------------------------------------- CumSum

Values x_cumsum(OpContext& c) {
  const Tensor& x = c.in(0);
  std::vector<int64_t> axis_in = c.ints(1);
  SLUICE_CHECK_IN(ValueError, c.op(), axis_in.size() == 1)
      << "axis must hold one value, got " << axis_in.size();
  int64_t axis = axis_in[0];
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() > 0 && axis >= -x.ndim() && axis < x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  if (axis < 0) axis += x.ndim();
  const bool reverse = c.attr_int("reverse", 0) != 0;
  Tensor t = reverse ? x.flip({axis}) : x;
  if (c.attr_int("exclusive", 0)) {  // each sum leaves its own element out: shift the axis right by one
    Bounds shift(size_t(x.ndim()), {0, 0});
    shift[size_t(axis)] = {1, -1};
    t = t.pad(shift);
  }
  t = t.cumsum(axis).cast(x.dtype());
  return {reverse ? t.flip({axis}) : t};
}

// ---------------------------------------------------------------- TopK

// Element i's place in the order: how many elements come before it (larger, or smaller with !largest;
// ties go to the lower index). Pairwise comparisons along the last axis, n^2 per row, all on the device.
Tensor order_rank(const Tensor& x, bool largest) {
  const int64_t n = x.shape(-1);
  Tensor xi = x.unsqueeze(-1), xj = x.unsqueeze(-2);  // [..., i, j]
  Tensor i = Tensor::arange(0, n, 1, dtypes::int32, x.device()).reshape({n, 1});
  Tensor j = i.reshape({1, n});
  Tensor before = (largest ? xj.gt(xi) : xj.lt(xi)).logical_or(xj.eq(xi).logical_and(j.lt(i)));
  return before.cast(dtypes::int32).sum({-1});
}

Values x_topk(OpContext& c) {
  const Tensor& x = c.in(0);
  // k was an attribute before opset 10
  std::vector<int64_t> k_in = c.opset() < 10 ? std::vector<int64_t>{c.attr_int("k")} : c.ints(1);
  int64_t axis = c.attr_int("axis", -1);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() > 0 && axis >= -x.ndim() && axis < x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  if (axis < 0) axis += x.ndim();
  SLUICE_CHECK_IN(ValueError, c.op(), k_in.size() == 1 && k_in[0] >= 0 && k_in[0] <= x.shape(axis))
      << "k must be one value in [0, " << x.shape(axis) << "], got " << k_in.size() << " values, first "
      << (k_in.empty() ? 0 : k_in[0]);
  const int64_t k = k_in[0], n = x.shape(axis);
  // Results come out in order whether or not `sorted` asks for it: any order is allowed without it.
  Tensor t = x.transpose(axis, -1);
  Tensor rank = order_rank(t, c.attr_int("largest", 1) != 0).unsqueeze(-1);                 // [..., n, 1]
  Tensor at = rank.eq(Tensor::arange(0, k, 1, dtypes::int32, x.device()).reshape({1, k}));  // [..., n, k]
  Tensor index = Tensor::arange(0, n, 1, dtypes::int32, x.device()).reshape({n, 1});
  Tensor values = at.where(t.unsqueeze(-1), 0).sum({-2}).cast(x.dtype());
  Tensor indices = at.where(index, 0).sum({-2}).cast(dtypes::int64);
  return {values.transpose(axis, -1), indices.transpose(axis, -1)};
}

// ---------------------------------------------------------------- normalizations

Values x_lp_normalization(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = c.attr_int("axis", -1), p = c.attr_int("p", 2);
  SLUICE_CHECK_IN(ValueError, c.op(), p == 1 || p == 2) << "p must be 1 or 2, got " << p;
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -x.ndim() && axis < x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  Tensor norm = p == 1 ? x.abs().sum({axis}, true) : (x * x).sum({axis}, true).sqrt();
  return {(x / norm).cast(x.dtype())};
}

Values x_mvn(OpContext& c) {  // (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), the moments over `axes`
  const Tensor& x = c.in(0);
  const Shape axes = c.attr_ints("axes", {0, 2, 3});
  Tensor mean = x.mean(axes, true);
  Tensor std = ((x * x).mean(axes, true) - mean * mean).sqrt();
  return {((x - mean) / (std + 1e-9)).cast(x.dtype())};
}

const OpDef kOps[] = {
    REDUCE("ReduceSum", 13, x, sum(x, a), x),
    REDUCE("ReduceMean", 18, x, x.mean(a, true), x),
    REDUCE("ReduceMax", 18, x, x.max(a, true), x),
    REDUCE("ReduceMin", 18, x, x.min(a, true), x),
    REDUCE("ReduceProd", 18, x, x.prod(a, true), x),
    REDUCE("ReduceL1", 18, x.abs(), sum(x, a), x),
    REDUCE("ReduceL2", 18, x.square(), sum(x, a), x.sqrt()),
    REDUCE("ReduceSumSquare", 18, x.square(), sum(x, a), x),
    REDUCE("ReduceLogSum", 18, x, sum(x, a), x.log()),
    REDUCE("ReduceLogSumExp", 18, x, x.logsumexp(a, true), x),
    {"ArgMax", 1, x_arg<true>},
    {"ArgMin", 1, x_arg<false>},
    {"Softmax", 1,
     [](OpContext& c) { return along_axis(c, [](const Tensor& x, int64_t a) { return x.softmax(a); }); }},
    {"LogSoftmax", 1,
     [](OpContext& c) { return along_axis(c, [](const Tensor& x, int64_t a) { return x.log_softmax(a); }); }},
    {"Hardmax", 1, [](OpContext& c) { return along_axis(c, hardmax); }},
    {"CumSum", 11, x_cumsum},
    {"TopK", 1, x_topk},
    {"LpNormalization", 1, x_lp_normalization},
    {"MeanVarianceNormalization", 9, x_mvn},
};

#undef REDUCE

}  // namespace

std::span<const OpDef> reduce_ops() { return kOps; }

}  // namespace sluice::onnx
