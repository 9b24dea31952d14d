// Reductions over axes (REDUCE_AXIS with ADD, MUL, MAX) and what is built from them: mean, var, argmax,
// softmax, cumulative ops.
#include "runtime/tensor_internal.h"

namespace sluice {

using detail::drop_axes;
using detail::OpScope;
using detail::reduce;
using detail::resolve_axes;

namespace {
// Sums accumulate in at least 32 bits (unsigned stays unsigned) and halves in float32.
DType sum_acc_dtype(DType dt) {
  if (dt.is_unsigned()) return least_upper_dtype({dt, dtypes::uint32});
  if (dt.is_int() || dt.is_bool()) return least_upper_dtype({dt, dtypes::int32});
  return least_upper_dtype({dt, dtypes::float32});
}

Tensor finish(const Tensor& r, const Shape& axes, bool keepdim) { return keepdim ? r : drop_axes(r, axes); }

int64_t reduced_count(const Tensor& t, const Shape& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= t.shape()[size_t(a)];
  return n;
}
}  // namespace

Tensor Tensor::sum(const Shape& axes, bool keepdim, std::optional<DType> acc_dtype) const {
  OpScope scope("sum");
  Shape ax = resolve_axes("sum", axes, ndim());
  Tensor r = reduce(cast(acc_dtype.value_or(sum_acc_dtype(dtype()))), Op::Add, ax);
  if (!acc_dtype && (dtype() == dtypes::float16 || dtype() == dtypes::bfloat16)) r = r.cast(dtype());
  return finish(r, ax, keepdim);
}
Tensor Tensor::prod(const Shape& axes, bool keepdim) const {
  OpScope scope("prod");
  Shape ax = resolve_axes("prod", axes, ndim());
  return finish(reduce(*this, Op::Mul, ax), ax, keepdim);
}
Tensor Tensor::max(const Shape& axes, bool keepdim) const {
  OpScope scope("max");
  Shape ax = resolve_axes("max", axes, ndim());
  return finish(reduce(*this, Op::Max, ax), ax, keepdim);
}
Tensor Tensor::min(const Shape& axes, bool keepdim) const {
  OpScope scope("min");
  return detail::inverse(detail::inverse(*this).max(axes, keepdim));
}

Tensor Tensor::mean(const Shape& axes, bool keepdim) const {
  OpScope scope("mean");
  Shape ax = resolve_axes("mean", axes, ndim());
  Tensor s = cast(sum_acc_dtype(dtype())).sum(axes, keepdim);
  return s.div(reduced_count(*this, ax)).cast(dtype().is_float() ? dtype() : dtypes::float32);
}
Tensor Tensor::var(const Shape& axes, bool keepdim, double correction) const {
  OpScope scope("var");
  Shape ax = resolve_axes("var", axes, ndim());
  Tensor squares = (*this - mean(axes, true)).square();
  return squares.sum(axes, keepdim).div(std::max(0.0, double(reduced_count(*this, ax)) - correction));
}
Tensor Tensor::std(const Shape& axes, bool keepdim, double correction) const {
  OpScope scope("std");
  return var(axes, keepdim, correction).sqrt();
}

Tensor Tensor::any(const Shape& axes, bool keepdim) const {
  OpScope scope("any");
  return cast(dtypes::bool_).max(axes, keepdim);
}
Tensor Tensor::all(const Shape& axes, bool keepdim) const {
  OpScope scope("all");
  return logical_not().any(axes, keepdim).logical_not();
}

// Marks the maxima, weights each with n - index (largest for the first) and takes the max of that.
Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  OpScope scope("argmax");
  if (!axis) return flatten().argmax(0);
  auto a = detail::resolve_axis("argmax", *axis, ndim());
  int64_t n = shape()[size_t(a)];
  SLUICE_CHECK_IN(ValueError, "argmax", n > 0)
      << "axis " << *axis << " of shape " << tuple_str(shape()) << " is empty: it has no largest element";
  // Built at the full shape, so the ramp is not a separate kernel read through an expand.
  Tensor countdown = n - detail::index_ramp(shape(), a, dtypes::int32, device_);
  Tensor weighted = eq(max({a}, true)).where(countdown, 0);
  if (!dtype().is_float()) return (n - weighted.max({a}, keepdim)).cast(dtypes::int32);
  // A NaN counts as the largest (as in the reference design and numpy): the first NaN, whatever the
  // device's max does with NaN. NaNs weigh n more than any other element.
  Tensor w = ne(*this).where(countdown + n, weighted).max({a}, keepdim);
  return (w > n).where(2 * n - w, n - w).cast(dtypes::int32);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  OpScope scope("argmin");
  if (!axis) return flatten().argmin(0);
  const int64_t a = detail::resolve_axis("argmin", *axis, ndim());
  SLUICE_CHECK_IN(ValueError, "argmin", shape()[size_t(a)] > 0)
      << "axis " << *axis << " of shape " << tuple_str(shape()) << " is empty: it has no smallest element";
  return detail::inverse(*this).argmax(axis, keepdim);
}

Tensor Tensor::softmax(int64_t axis) const {
  OpScope scope("softmax");
  Tensor m = *this - max({axis}, true).detach();
  Tensor e = m.exp();
  return e / e.sum({axis}, true);
}
Tensor Tensor::log_softmax(int64_t axis) const {
  OpScope scope("log_softmax");
  Tensor m = *this - max({axis}, true).detach();
  return m - m.exp().sum({axis}, true).log();
}
Tensor Tensor::logsumexp(const Shape& axes, bool keepdim) const {
  OpScope scope("logsumexp");
  Shape ax = resolve_axes("logsumexp", axes, ndim());
  Tensor m = max(axes, true);
  return finish((*this - m).exp().sum(axes, true).log() + m, ax, keepdim);
}

// ---------------------------------------------------------------- cumulative ops

namespace {
// Output i along `axis` reduces the window [i - n + 1, i] of the input padded in front with the op's
// identity: a pool of size n, one reduce kernel. include_initial shifts by one (identity first).
Tensor cumalu(const Tensor& t, int64_t axis, Op op, bool include_initial = false) {
  int64_t n = t.shape()[size_t(axis)];
  Tensor x = t.transpose(axis, -1);
  Bounds p(size_t(x.ndim()), {0, 0});
  p.back() = {n - int64_t(!include_initial), -int64_t(include_initial)};
  Tensor windows = detail::pool(x.pad(p, detail::reduce_identity(op, t.dtype())), {n}, {1}, {1});
  Tensor r = op == Op::Add ? windows.sum({-1}) : op == Op::Mul ? windows.prod({-1}) : windows.max({-1});
  return r.transpose(axis, -1);
}

// Long axes run as two stages (cumulative within blocks of 256, then across the blocks' totals), so the
// work stays O(n * 256) instead of O(n^2).
Tensor split_cumalu(const char* name, const Tensor& t, int64_t axis, Op op) {
  OpScope scope(name);
  if (t.ndim() == 0) return t;
  auto a = detail::resolve_axis(name, axis, t.ndim());
  int64_t n = t.shape()[size_t(a)];
  constexpr int64_t kSplit = 256;
  if (n == 0) return t;
  if (n <= 2 * kSplit) return cumalu(t, a, op);
  Tensor x = t.transpose(a, -1);
  Bounds p(size_t(x.ndim()), {0, 0});
  int64_t padded = (n + kSplit - 1) / kSplit * kSplit;
  p.back() = {padded - n, 0};
  Tensor blocks = x.pad(p, detail::reduce_identity(op, t.dtype())).unflatten(-1, {-1, kSplit});
  Tensor within = cumalu(blocks, blocks.ndim() - 1, op);
  Tensor totals = cumalu(within.select(-1, kSplit - 1), within.ndim() - 2, op, true);
  Shape to = totals.shape();
  to.push_back(kSplit);
  Tensor base = totals.unsqueeze(-1).expand(to);
  auto fix = [&](const Tensor& y) {
    Tensor f = y.flatten(-2);
    std::vector<Slice> keep(size_t(f.ndim()));
    keep.back() = Slice{-n, std::nullopt};
    return f.slice(keep).transpose(a, -1);
  };
  Tensor lo = fix(within), hi = fix(base);
  return op == Op::Add ? lo + hi : op == Op::Mul ? lo * hi : lo.maximum(hi);
}
}  // namespace

Tensor Tensor::cumsum(int64_t axis) const { return split_cumalu("cumsum", *this, axis, Op::Add); }
Tensor Tensor::cumprod(int64_t axis) const { return split_cumalu("cumprod", *this, axis, Op::Mul); }
Tensor Tensor::cummax(int64_t axis) const { return split_cumalu("cummax", *this, axis, Op::Max); }

}  // namespace sluice
