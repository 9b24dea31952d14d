// ONNX ops: the loss family, NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (op.h).
// Inputs are (N, C, d1, ..., dk) scores against (N, d1, ..., dk) class indices.
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// The negative log-likelihood of the classes `target` picks from `log_prob`, each weighted by its class's
// weight (1 without weights) and 0 where target is ignore_index, then reduced: none, sum, or mean (the
// weighted sum over the sum of the weights). The pick is a one-hot mask along the class axis, so a target
// outside [0, C) (the suite's ignore_index -1 or 10) selects nothing instead of reading out of bounds.
Tensor nll_loss(OpContext& c, const Tensor& log_prob, const Tensor& target,
                const std::optional<Tensor>& weight) {
  Shape want = log_prob.shape();
  want.erase(want.begin() + 1);
  SLUICE_CHECK_IN(ShapeError, c.op(), target.shape() == want)
      << "target must be input's shape without axis 1, got " << target.str() << " for " << log_prob.str();
  SLUICE_CHECK_IN(DTypeError, c.op(), target.dtype().is_int())
      << "target must hold integers, got " << target.str();
  const int64_t classes = log_prob.shape(1);
  SLUICE_CHECK_IN(ShapeError, c.op(), !weight || weight->shape() == Shape{classes})
      << "weight must have shape (" << classes << "), got " << weight->str();
  const std::string reduction = c.attr_str("reduction", "mean");
  SLUICE_CHECK_IN(ValueError, c.op(), reduction == "none" || reduction == "sum" || reduction == "mean")
      << "reduction must be none, sum or mean, got '" << reduction << "'";

  Shape class_shape(size_t(log_prob.ndim()), 1);  // (1, C, 1, ..., 1)
  class_shape[1] = classes;
  Tensor class_ids = Tensor::arange(0, classes, 1, target.dtype(), log_prob.device()).reshape(class_shape);
  Tensor picks = target.unsqueeze(1).eq(class_ids);  // (N, C, d...)
  Tensor w = weight ? picks.where(weight->reshape(class_shape), 0).sum({1}).cast(log_prob.dtype())
                    : target.ones_like(log_prob.dtype());
  if (c.has_attr("ignore_index")) w = target.eq(c.attr_int("ignore_index")).where(0, w);
  Tensor loss = -picks.where(log_prob, 0).sum({1}).cast(log_prob.dtype()) * w;
  if (reduction == "none") return loss;
  if (reduction == "sum") return loss.sum();
  return loss.sum() / w.sum();
}

const Tensor& scores(OpContext& c) {  // input 0, which has a class axis
  const Tensor& x = c.in(0);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 2) << "input must have rank >= 2, got " << x.str();
  return x;
}

Values x_nll_loss(OpContext& c) { return {nll_loss(c, scores(c), c.in(1), c.opt(2))}; }

// The loss of log_softmax over the class axis; the second output, when asked for, is that log_softmax.
Values x_softmax_cross_entropy(OpContext& c) {
  Tensor log_prob = scores(c).log_softmax(1);
  return {nll_loss(c, log_prob, c.in(1), c.opt(2)), log_prob};
}

const OpDef kOps[] = {
    {"NegativeLogLikelihoodLoss", 12, x_nll_loss},
    {"SoftmaxCrossEntropyLoss", 12, x_softmax_cross_entropy},
};

}  // namespace

std::span<const OpDef> loss_ops() { return kOps; }

}  // namespace sluice::onnx
