// Indexing by integer tensors. There are no data-dependent loads at the tensor level: an index becomes a
// one-hot mask (index == arange) that selects by WHERE and a sum collapses, as the reference design does.
#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

namespace {
void check_index(const char* op, const Tensor& index) {
  SLUICE_CHECK_IN(DTypeError, op, index.dtype().is_int())
      << "needs an integer index, got " << index.dtype().name();
}
}  // namespace

namespace detail {
Tensor one_hot_mask(const Tensor& index, int64_t n, bool wrap_negative) {
  // An index dtype too narrow for n - 1 cannot hold a value that large either: widen it, it loses nothing.
  Tensor idx = double(n - 1) <= index.dtype().max() ? index : index.cast(dtypes::int32);
  Shape s = idx.shape();
  s.push_back(n);
  Tensor col = idx.unsqueeze(-1), ramp = index_ramp(s, -1, idx.dtype(), idx.device());
  Tensor mask = col.eq(ramp);
  // Comparing with ramp - n too (instead of normalizing the index first) keeps the raw index the only
  // thing read through the broadcast.
  return wrap_negative && !idx.dtype().is_unsigned() ? mask.logical_or(col.eq(ramp - n)) : mask;
}
}  // namespace detail

Tensor Tensor::gather(int64_t axis, const Tensor& index) const {
  OpScope scope("gather");
  check_index("gather", index);
  auto a = detail::resolve_axis("gather", axis, ndim());
  SLUICE_CHECK_IN(ShapeError, "gather", index.ndim() == ndim())
      << "index " << tuple_str(index.shape()) << " and input " << tuple_str(shape()) << " differ in rank";
  Bounds keep;
  for (int64_t d = 0; d < ndim(); d++) {
    int64_t s = shape()[size_t(d)], i = index.shape()[size_t(d)];
    SLUICE_CHECK_IN(ShapeError, "gather", d == a || i <= s)
        << "index " << tuple_str(index.shape()) << " is larger than input " << tuple_str(shape())
        << " on axis " << d;
    keep.push_back({0, d == a ? s : i});
  }
  // The gathered axis moves last (size n), where the one-hot mask of each index selects from it.
  Tensor x = shrink(keep).unsqueeze(-1).transpose(-1, a);
  Tensor picked =
      detail::one_hot_mask(index, shape()[size_t(a)]).where(x, detail::const_tensor(device_, dtype(), 0));
  return detail::drop_axes(detail::reduce(picked, Op::Add, {picked.ndim() - 1}), {picked.ndim() - 1});
}

Tensor Tensor::index_select(int64_t axis, const Tensor& index) const {
  OpScope scope("index_select");
  check_index("index_select", index);
  auto a = size_t(detail::resolve_axis("index_select", axis, ndim()));
  int64_t n = shape()[a];
  const Shape& s = shape();
  Shape pre(s.begin(), s.begin() + long(a)), post(s.begin() + long(a) + 1, s.end()), view = pre, mask_view;
  view.insert(view.end(), index.shape().size(), 1);
  view.push_back(n);
  view.insert(view.end(), post.begin(), post.end());
  mask_view.assign(pre.size(), 1);
  mask_view.insert(mask_view.end(), index.shape().begin(), index.shape().end());
  mask_view.push_back(n);
  mask_view.insert(mask_view.end(), post.size(), 1);
  Tensor mask = detail::one_hot_mask(index, n, true).reshape(mask_view);
  Tensor picked = mask.where(reshape(view), detail::const_tensor(device_, dtype(), 0));
  // One term per output is nonzero, so summing in this dtype is exact.
  int64_t axis_n = int64_t(pre.size() + index.shape().size());
  return detail::drop_axes(detail::reduce(picked, Op::Add, {axis_n}), {axis_n});
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  OpScope scope("one_hot");
  check_index("one_hot", *this);
  SLUICE_CHECK_IN(ValueError, "one_hot", num_classes > 0) << "num_classes must be > 0, got " << num_classes;
  return detail::one_hot_mask(*this, num_classes).where(1, 0);
}

Tensor Tensor::masked_fill(const Tensor& mask, Number value) const {
  OpScope scope("masked_fill");
  return mask.where(detail::const_tensor(device_, dtype(), value), *this);
}

}  // namespace sluice
