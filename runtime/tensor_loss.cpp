// Loss functions over logits, log-probabilities and probabilities.
#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

namespace {
Tensor reduce_loss(const Tensor& t, Reduction r) {
  return r == Reduction::Mean ? t.mean() : r == Reduction::Sum ? t.sum() : t;
}
void check_labels(const char* op, const Tensor& y) {
  SLUICE_CHECK_IN(DTypeError, op, y.dtype().is_int())
      << "needs integer class labels, got " << y.dtype().name();
}
}  // namespace

Tensor Tensor::cross_entropy(const Tensor& y, Reduction reduction, double label_smoothing) const {
  OpScope scope("cross_entropy");
  SLUICE_CHECK_IN(ValueError, "cross_entropy", label_smoothing >= 0 && label_smoothing <= 1)
      << "label_smoothing must be in [0, 1], got " << label_smoothing;
  SLUICE_CHECK_IN(ShapeError, "cross_entropy", ndim() >= 2)
      << "needs (N, C, ...) logits, got " << tuple_str(shape());
  // Class indices become one-hot targets in the logits' float dtype, so smoothing them keeps that precision.
  Tensor target = y;
  if (y.ndim() < ndim()) {
    check_labels("cross_entropy", y);
    Tensor hot = y.one_hot(shape()[1]);  // (N, d1.., C) -> (N, C, d1..)
    Shape order{0, hot.ndim() - 1};
    for (int64_t i = 1; i < hot.ndim() - 1; i++) order.push_back(i);
    target = hot.permute(order).cast(least_upper_float(dtype()));
  }
  SLUICE_CHECK_IN(ShapeError, "cross_entropy", target.shape() == shape())
      << "targets " << tuple_str(y.shape()) << " do not match logits " << tuple_str(shape());
  if (label_smoothing > 0) target = (1 - label_smoothing) * target + label_smoothing / double(shape()[1]);
  return reduce_loss(-(log_softmax(1) * target).sum({1}), reduction);
}

// The one-hot mask of the labels picks each row's log-probability; ignored labels leave their rows out of
// both the sum and the count.
Tensor Tensor::sparse_categorical_crossentropy(const Tensor& y, int64_t ignore_index, double label_smoothing,
                                               Reduction reduction) const {
  OpScope scope("sparse_categorical_crossentropy");
  check_labels("sparse_categorical_crossentropy", y);
  SLUICE_CHECK_IN(ValueError, "sparse_categorical_crossentropy", label_smoothing >= 0 && label_smoothing <= 1)
      << "label_smoothing must be in [0, 1], got " << label_smoothing;
  Shape labels(shape().begin(), shape().end() - (ndim() > 0 ? 1 : 0));
  SLUICE_CHECK_IN(ShapeError, "sparse_categorical_crossentropy", ndim() >= 1 && y.shape() == labels)
      << "labels " << tuple_str(y.shape()) << " do not match logits " << tuple_str(shape());
  Tensor log_probs = log_softmax(-1), counted = y.ne(ignore_index);
  Tensor picked = detail::one_hot_mask(y, shape(-1)).logical_and(counted.unsqueeze(-1));
  Tensor unreduced = (log_probs * picked).sum({-1});
  // Without smoothing its mean reduction is skipped, not multiplied by 0 (which would keep NaNs and a
  // kernel).
  if (label_smoothing > 0)
    unreduced = (1 - label_smoothing) * unreduced + label_smoothing * (log_probs.mean({-1}) * counted);
  if (reduction == Reduction::Mean) return -(unreduced.sum() / counted.sum());
  return -(reduction == Reduction::Sum ? unreduced.sum() : unreduced);
}

Tensor Tensor::nll_loss(const Tensor& y, const std::optional<Tensor>& weight,
                        std::optional<int64_t> ignore_index, Reduction reduction) const {
  OpScope scope("nll_loss");
  check_labels("nll_loss", y);
  SLUICE_CHECK_IN(ShapeError, "nll_loss", ndim() >= 2 && y.ndim() == ndim() - 1)
      << "labels " << tuple_str(y.shape()) << " do not match log-probabilities " << tuple_str(shape());
  Tensor w = weight ? weight->index_select(0, y) : y.ones_like(dtype());
  if (ignore_index) w = w * y.ne(*ignore_index);
  Tensor nll = -gather(1, y.unsqueeze(1)).squeeze(1) * w;
  return reduction == Reduction::Mean ? nll.sum() / w.sum() : reduce_loss(nll, reduction);
}

Tensor Tensor::binary_cross_entropy(const Tensor& y, Reduction reduction) const {
  OpScope scope("binary_cross_entropy");
  return reduce_loss(-y * log() - (1 - y) * (1 - *this).log(), reduction);
}

Tensor Tensor::binary_cross_entropy_with_logits(const Tensor& y, Reduction reduction) const {
  OpScope scope("binary_cross_entropy_with_logits");
  return reduce_loss(-(y * logsigmoid() + (1 - y) * (-*this).logsigmoid()), reduction);
}

}  // namespace sluice
