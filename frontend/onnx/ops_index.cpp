// ONNX ops: gathering and scattering by index tensors, one-hot, and the selections whose output shape
// depends on the data (NonZero, Compress, Unique) (op.h). Indices are data: each becomes a one-hot mask
// (a comparison with an index ramp) that a WHERE and a reduction turn into the result, so everything runs
// on the device. Only the sizes of data-dependent outputs are read on the host. Negative indices count
// from the end of their axis.
#include <cmath>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// axis in [-rank, rank) as a non-negative axis.
int64_t norm_axis(const OpContext& c, int64_t axis, int64_t rank) {
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -rank && axis < rank)
      << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

void check_indices(const OpContext& c, const Tensor& index) {
  SLUICE_CHECK_IN(DTypeError, c.op(), index.dtype().is_int())
      << "indices must be integers, got " << index.dtype().name();
}

// 0, 1, ..., n - 1 as int64, laid along axis `axis` of a rank-`rank` view (size 1 elsewhere).
Tensor ramp(const OpContext& c, int64_t n, int64_t axis = 0, int64_t rank = 1) {
  Shape view(size_t(rank), 1);
  view[size_t(axis)] = n;
  return Tensor::arange(0, n, 1, dtypes::int64, c.device()).reshape(view);
}

// Indices into an axis of size n as int64, negatives wrapped.
Tensor wrapped(const Tensor& index, int64_t n) {
  Tensor i = index.cast(dtypes::int64);
  return i.lt(0).where(i + n, i);
}

// The flat index into `dims` (row-major) of each index tuple along the last axis of `index`.
Tensor linear_index(const Tensor& index, const Shape& dims) {
  Tensor lin =
      Tensor::zeros(Shape(index.shape().begin(), index.shape().end() - 1), dtypes::int64, index.device());
  for (size_t j = 0; j < dims.size(); ++j)
    lin = lin * dims[j] + wrapped(index.select(-1, int64_t(j)), dims[j]);
  return lin;
}

// x is (B..., P, R...) with `batch` leading B axes; lin (B..., M...) holds indices into P. The result
// (B..., M..., R...) takes x[b..., lin[b..., m...], r...]: each index's one-hot row over P selects, and a sum
// over P (one term nonzero) collapses it.
Tensor take(const OpContext& c, const Tensor& x, size_t batch, const Tensor& lin) {
  const Shape& s = x.shape();
  const size_t m = lin.shape().size() - batch, r = s.size() - batch - 1;
  const int64_t p = s[batch];
  Shape x_view(s.begin(), s.begin() + long(batch)), lin_view(lin.shape());
  x_view.insert(x_view.end(), m, 1);
  x_view.insert(x_view.end(), s.begin() + long(batch), s.end());
  lin_view.insert(lin_view.end(), r + 1, 1);
  const auto axis = int64_t(batch + m);
  Tensor mask = lin.reshape(lin_view).eq(ramp(c, p, axis, axis + 1 + int64_t(r)));
  Tensor picked = mask.where(x.reshape(x_view), Tensor::zeros({}, x.dtype(), c.device()));
  return picked.sum({axis}).cast(x.dtype());
}

// ---------------------------------------------------------------- gathers

Values x_gather(OpContext& c) {
  const Tensor &x = c.in(0), &index = c.in(1);
  check_indices(c, index);
  return {x.index_select(norm_axis(c, c.attr_int("axis", 0), x.ndim()), index)};
}

Values x_gather_elements(OpContext& c) {
  const Tensor &x = c.in(0), &index = c.in(1);
  check_indices(c, index);
  const int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.ndim());
  return {x.gather(axis, wrapped(index, x.shape(axis)))};
}

// The last axis of indices holds k coordinates into x's dims after the batch_dims leading ones it shares
// with indices; the output is indices.shape[:-1] + x.shape[batch_dims + k:].
Values x_gather_nd(OpContext& c) {
  const Tensor &x = c.in(0), &index = c.in(1);
  check_indices(c, index);
  const int64_t batch = c.attr_int("batch_dims", 0);
  const int64_t k = index.ndim() > 0 ? index.shape(-1) : 0;
  bool fits = batch >= 0 && batch < index.ndim() && batch + k <= x.ndim();
  for (int64_t d = 0; fits && d < batch; ++d) fits = index.shape(d) == x.shape(d);
  SLUICE_CHECK_IN(ShapeError, c.op(), fits) << "indices " << tuple_str(index.shape()) << " with batch_dims "
                                            << batch << " do not index data " << tuple_str(x.shape());
  const Shape& s = x.shape();
  const Shape dims(s.begin() + batch, s.begin() + batch + k);
  Shape view(s.begin(), s.begin() + batch);
  view.push_back(prod(dims));
  view.insert(view.end(), s.begin() + batch + k, s.end());
  return {take(c, x.reshape(view), size_t(batch), linear_index(index, dims))};
}

// ---------------------------------------------------------------- scatters

enum class Combine : uint8_t { None, Add, Mul, Max, Min };

Combine combine_of(const OpContext& c) {
  const std::string r = c.attr_str("reduction", "none");
  if (r == "none") return Combine::None;
  if (r == "add") return Combine::Add;
  if (r == "mul") return Combine::Mul;
  if (r == "max") return Combine::Max;
  SLUICE_CHECK_IN(ValueError, c.op(), r == "min")
      << "reduction must be none, add, mul, max or min, got " << r;
  return Combine::Min;
}

// What a reduction starts from where no update lands: it leaves the reduced value unchanged.
Number neutral(Combine how, DType dt) {
  if (how == Combine::Mul) return 1;
  if (how != Combine::Max && how != Combine::Min) return 0;
  const bool low = how == Combine::Max;
  if (dt.is_float()) return low ? -INFINITY : INFINITY;
  if (dt.is_bool()) return !low;
  return low ? Number(dt.min_int()) : Number(dt.max_uint());
}

// data with the updates scattered into it. mask says which update lands on which element: it has the
// updates' index axes, with `axis` among them, and broadcasts against updates and against data on the
// other axes; folding `axis` away leaves data's shape (with `axis` kept as size 1). Without a reduction the
// last update to an element wins, as the reference's loop in index order has it.
Tensor scatter(const OpContext& c, const Tensor& data, Tensor mask, const Tensor& updates, int64_t axis,
               Combine how) {
  if (how == Combine::None) {
    const Tensor order = ramp(c, mask.shape(axis), axis, mask.ndim());
    mask = mask.logical_and(order.eq(mask.where(order, -1).max({axis}, true)));
  }
  Tensor u = mask.where(updates, Tensor::full({}, neutral(how, data.dtype()), data.dtype(), c.device()));
  Tensor hit = mask.any({axis}, true);
  Tensor folded = (how == Combine::Mul   ? u.prod({axis}, true)
                   : how == Combine::Max ? u.max({axis}, true)
                   : how == Combine::Min ? u.min({axis}, true)
                                         : u.sum({axis}, true))
                      .cast(data.dtype());
  Tensor d = data.reshape(folded.shape());
  Tensor merged = how == Combine::None  ? folded
                  : how == Combine::Add ? d + folded
                  : how == Combine::Mul ? d * folded
                  : how == Combine::Max ? d.maximum(folded)
                                        : d.minimum(folded);
  return hit.where(merged.cast(data.dtype()), d).reshape(data.shape());
}

// updates[i...] goes to data at i... with coordinate `axis` replaced by indices[i...].
Values scatter_elements(OpContext& c, Combine how) {
  const Tensor &data = c.in(0), &index = c.in(1), &updates = c.in(2);
  check_indices(c, index);
  const int64_t axis = norm_axis(c, c.attr_int("axis", 0), data.ndim()), rank = data.ndim();
  bool fits = index.shape() == updates.shape() && index.ndim() == rank;
  for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || index.shape(d) <= data.shape(d);
  SLUICE_CHECK_IN(ShapeError, c.op(), fits)
      << "indices " << tuple_str(index.shape()) << " and updates " << tuple_str(updates.shape())
      << " do not fit data " << tuple_str(data.shape()) << " on axis " << axis;
  const int64_t n = data.shape(axis);
  // Each update's target as a one-hot row over a new last axis, which then takes the place of `axis`.
  Tensor mask = wrapped(index, n).unsqueeze(-1).eq(ramp(c, n, rank, rank + 1));
  Bounds grow;  // indices may cover only part of data on the other axes
  for (int64_t d = 0; d < rank; ++d) grow.push_back({0, d == axis ? 0 : data.shape(d) - index.shape(d)});
  grow.push_back({0, 0});
  // data as (..., 1 at axis, ..., n): the updates' axis `axis` folds onto it
  Shape perm(size_t(rank + 1));
  for (int64_t d = 0; d <= rank; ++d) perm[size_t(d)] = d == axis ? rank : d == rank ? axis : d;
  Tensor data_t = data.unsqueeze(-1).permute(perm);
  Tensor out = scatter(c, data_t, mask.pad(grow), updates.unsqueeze(-1).pad(grow), axis, how);
  return {out.permute(perm).squeeze(-1)};
}

// The last axis of indices holds k coordinates into data's leading dims; updates[m...] replaces (or
// combines with) the slice data[indices[m...]].
Values x_scatter_nd(OpContext& c) {
  const Tensor &data = c.in(0), &index = c.in(1), &updates = c.in(2);
  check_indices(c, index);
  const int64_t k = index.ndim() > 0 ? index.shape(-1) : -1;
  const Shape& s = data.shape();
  Shape want(index.shape().begin(), index.shape().end() - (k >= 0));
  const int64_t m = prod(want);
  if (k >= 0 && k <= data.ndim()) want.insert(want.end(), s.begin() + k, s.end());
  SLUICE_CHECK_IN(ShapeError, c.op(), k >= 0 && k <= data.ndim() && updates.shape() == want)
      << "indices " << tuple_str(index.shape()) << " and updates " << tuple_str(updates.shape())
      << " do not fit data " << tuple_str(s);
  const Shape dims(s.begin(), s.begin() + k), rest(s.begin() + k, s.end());
  const int64_t p = prod(dims);
  // (m, p, 1...): update i lands on row lin[i] of data viewed as (1, p, rest...)
  Shape mask_view{m, p}, update_view{m, 1}, data_view{1, p};
  mask_view.insert(mask_view.end(), rest.size(), 1);
  update_view.insert(update_view.end(), rest.begin(), rest.end());
  data_view.insert(data_view.end(), rest.begin(), rest.end());
  Tensor mask = linear_index(index, dims).reshape({m, 1}).eq(ramp(c, p, 1, 2)).reshape(mask_view);
  Tensor out = scatter(c, data.reshape(data_view), mask, updates.reshape(update_view), 0, combine_of(c));
  return {out.reshape(s)};
}

// ---------------------------------------------------------------- one-hot

// off where the index differs from the position along the new axis, on where it matches.
Values x_one_hot(OpContext& c) {
  const Tensor &index = c.in(0), &values = c.in(2);
  eval::HostArray depth_in = c.host(1);
  SLUICE_CHECK_IN(ValueError, c.op(), depth_in.numel() == 1 && values.numel() == 2)
      << "depth must be one value and values two (off, on), got " << depth_in.numel() << " and "
      << values.numel();
  const auto depth = int64_t(depth_in.value(0));
  SLUICE_CHECK_IN(ValueError, c.op(), depth > 0) << "depth must be positive, got " << depth_in.value(0);
  const int64_t rank = index.ndim() + 1, axis = norm_axis(c, c.attr_int("axis", -1), rank);
  // Float indices truncate, as the reference's cast does.
  Tensor mask = wrapped(index, depth).unsqueeze(axis).eq(ramp(c, depth, axis, rank));
  Tensor v = values.reshape({2});
  return {mask.where(v.select(0, 1), v.select(0, 0))};
}

// ---------------------------------------------------------------- data-dependent shapes

// The positions of the true elements of a 1-D mask, in order, as int64. Their number is read on the host
// (it is the output's size); the k-th position is how many running counts of trues stay at most k.
Tensor true_positions(OpContext& c, const Tensor& mask) {
  Tensor running = mask.cast(dtypes::int64).cumsum(0);
  const int64_t n = mask.numel(), count = n == 0 ? 0 : c.host(running.select(0, -1)).i.at(0);
  return running.reshape({1, n}).le(ramp(c, count, 0, 2)).cast(dtypes::int64).sum({1}).cast(dtypes::int64);
}

Values x_non_zero(OpContext& c) {  // (rank, count): the coordinates of the nonzero elements, in order
  const Tensor& x = c.in(0);
  Tensor pos = true_positions(c, x.reshape({x.numel()}).cast(dtypes::bool_));
  const Shape& s = x.shape().empty() ? Shape{1} : x.shape();  // a scalar counts as 1-D, as numpy has it
  std::vector<Tensor> coords;
  int64_t stride = x.numel();
  for (int64_t dim : s) {
    stride = dim == 0 ? 0 : stride / dim;
    coords.push_back(stride == 0 ? pos : pos.div(stride, Rounding::Trunc).mod(dim));
  }
  return {stack(coords, 0)};
}

// The slices along axis (or elements of the flattened input) where condition is true; a condition
// shorter than the axis leaves the rest out.
Values x_compress(OpContext& c) {
  const bool flat = !c.has_attr("axis");
  const Tensor x = flat ? c.in(0).reshape({c.in(0).numel()}) : c.in(0);
  const int64_t axis = flat ? 0 : norm_axis(c, c.attr_int("axis"), x.ndim());
  Tensor cond = c.in(1).reshape({c.in(1).numel()}).cast(dtypes::bool_);
  if (cond.numel() > x.shape(axis)) cond = cond.shrink({{0, x.shape(axis)}});
  return {x.index_select(axis, true_positions(c, cond))};
}

// Rows of x: its elements, or its slices along axis (each flattened in order, as the sort compares them),
// as (n, len).
Tensor unique_rows(const Tensor& x, std::optional<int64_t> axis) {
  if (!axis) return x.reshape({x.numel(), 1});
  Shape perm{*axis};
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (d != *axis) perm.push_back(d);
  const int64_t n = x.shape(*axis);
  return x.permute(perm).reshape({n, n == 0 ? 0 : x.numel() / n});
}

// Whether row j of rows precedes row i in lexicographic order, as (j, i): the first position where they
// differ decides.
Tensor row_less(const Tensor& rows) {
  const int64_t n = rows.shape(0), len = rows.shape(1);
  Tensor a = rows.reshape({n, 1, len}), b = rows.reshape({1, n, len});
  Tensor differ = a.ne(b);
  Tensor first_diff = differ.logical_and(differ.cast(dtypes::int32).cumsum(2).eq(1));
  return first_diff.logical_and(a.lt(b)).any({2});
}

// The distinct elements (or slices along axis) of x, sorted or in order of first occurrence, with the
// index of each one's first occurrence, each element's place among them, and how often each occurs. All
// from pairwise comparisons (n^2 for n elements); only the number of distinct ones is read on the host.
Values x_unique(OpContext& c) {
  const Tensor& x = c.in(0);
  const std::optional<int64_t> axis =
      c.has_attr("axis") ? std::optional(norm_axis(c, c.attr_int("axis"), x.ndim())) : std::nullopt;
  const Tensor rows = unique_rows(x, axis);
  const int64_t n = rows.shape(0), len = rows.shape(1);
  Tensor same = rows.reshape({n, 1, len}).eq(rows.reshape({1, n, len})).all({2});  // (i, j)
  Tensor i_col = ramp(c, n, 0, 2), j_row = ramp(c, n, 1, 2);
  Tensor first = same.logical_and(j_row.lt(i_col)).any({1}).logical_not();  // no earlier row equals it
  const int64_t count = n == 0 ? 0 : c.host(first.cast(dtypes::int64).sum()).i.at(0);
  // before (j, i): the value of row j comes before that of row i in the output's order
  Tensor before =
      c.attr_int("sorted", 1) ? row_less(rows) : i_col.lt(same.where(j_row, n).min({1}).reshape({1, n}));
  Tensor place = first.reshape({n, 1}).logical_and(before).cast(dtypes::int64).sum({0}).cast(dtypes::int64);
  Tensor at = place.reshape({1, n}).eq(ramp(c, count, 0, 2));  // (k, i): row i is the k-th distinct one
  Tensor index = at.logical_and(first.reshape({1, n})).where(j_row, 0).sum({1}).cast(dtypes::int64);
  Tensor counts = at.cast(dtypes::int64).sum({1}).cast(dtypes::int64);
  Tensor y = axis ? x.index_select(*axis, index) : x.reshape({n}).index_select(0, index);
  return {y, index, place, counts};
}

const OpDef kOps[] = {
    {"Gather", 1, x_gather},
    {"GatherElements", 11, x_gather_elements},
    {"GatherND", 11, x_gather_nd},
    {"Scatter", 9, [](OpContext& c) { return scatter_elements(c, Combine::None); }},
    {"ScatterElements", 11, [](OpContext& c) { return scatter_elements(c, combine_of(c)); }},
    {"ScatterND", 11, x_scatter_nd},
    {"OneHot", 9, x_one_hot},
    {"NonZero", 9, x_non_zero},
    {"Compress", 9, x_compress},
    {"Unique", 11, x_unique},
};

}  // namespace

std::span<const OpDef> index_ops() { return kOps; }

}  // namespace sluice::onnx
