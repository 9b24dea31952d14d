#include "runtime/optim.h"

#include "base/error.h"

namespace sluice::optim {

// ---------------------------------------------------------------- Optimizer

Optimizer::Optimizer(const char* name, std::vector<Tensor*> params, double lr)
    : name_(name), params_(std::move(params)), lr_value_(lr), lr_(Tensor::zeros({})) {
  SLUICE_CHECK_IN(ValueError, name_, !params_.empty()) << "no parameters to optimize";
  device_ = params_[0]->device();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = *params_[i];
    SLUICE_CHECK_IN(DTypeError, name_, p.dtype().is_float())
        << "parameter " << i << " is " << p.dtype().name() << "; only float tensors are optimized";
    SLUICE_CHECK_IN(DeviceError, name_, p.device() == device_)
        << "parameter " << i << " is on " << p.device() << ", parameter 0 on " << device_;
  }
  SLUICE_CHECK_IN(ValueError, name_, lr >= 0) << "learning rate " << lr << " is negative";
  // Parameters are updated in place: each must be a buffer of its own. A lazy one is realized here.
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = *params_[i];
    if (!p.dense_buffer()) p.realize();
    SLUICE_CHECK_IN(ValueError, name_, p.dense_buffer())
        << "parameter " << i << " is a view into another tensor's buffer; give it one of its own "
        << "(contiguous())";
  }
  lr_ = scalar(lr);
}

Tensor Optimizer::state_like(size_t i) const {
  return Tensor::zeros(params_[i]->shape(), params_[i]->dtype(), device_).contiguous().realize();
}

Tensor Optimizer::scalar(double v) const {
  return Tensor::full({}, v, dtypes::float32, device_).contiguous().realize();
}

void Optimizer::set_lr(double lr) {
  SLUICE_CHECK_IN(ValueError, name_, lr >= 0) << "learning rate " << lr << " is negative";
  lr_value_ = lr;
  lr_.write(Tensor::full({}, lr, dtypes::float32, device_)).realize();
}

void Optimizer::zero_grad() {
  for (Tensor* p : params_) p->zero_grad();
}

Tensor Optimizer::write(const Tensor& target, const Tensor& value) {
  // Tensor::write, not assign, which would make `target` the write itself: the parameters and state must
  // stay their buffers for the next step (and for a jitted step, whose replays never rebuild them).
  writes_.push_back(target.write(value));
  return writes_.back();
}

std::vector<Tensor> Optimizer::step_lazy() {
  NoGrad no_grad;
  writes_.clear();
  begin_step();
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = *params_[i];
    if (const std::optional<Tensor> g = p.grad()) write(p, update(i, p, g->cast(p.dtype())));
  }
  return std::move(writes_);
}

void Optimizer::step() {
  std::vector<Tensor> writes = step_lazy();
  std::vector<Tensor*> all;
  for (Tensor& w : writes) all.push_back(&w);
  Tensor::realize_all(all);
}

// ---------------------------------------------------------------- SGD

SGD::SGD(std::vector<Tensor*> params, SGDOptions o) : Optimizer("SGD", std::move(params), o.lr), o_(o) {
  SLUICE_CHECK_IN(ValueError, "SGD", o.momentum >= 0 && o.weight_decay >= 0)
      << "momentum " << o.momentum << " and weight decay " << o.weight_decay << " must be >= 0";
  SLUICE_CHECK_IN(ValueError, "SGD", !o.nesterov || o.momentum > 0)
      << "Nesterov momentum needs a momentum > 0 (it is " << o.momentum << ")";
  if (o.momentum > 0)
    for (size_t i = 0; i < params_.size(); ++i) momentum_.push_back(state_like(i));
}

Tensor SGD::update(size_t i, const Tensor& p, const Tensor& g0) {
  Tensor g = o_.weight_decay ? g0 + p * o_.weight_decay : g0;
  if (o_.momentum > 0) {
    // PyTorch's buffer starts as the first gradient: momentum * 0 + g is exactly that.
    const Tensor b = write(momentum_[i], momentum_[i] * o_.momentum + g);
    g = o_.nesterov ? g + b * o_.momentum : b;
  }
  return p - g * lr_.cast(p.dtype());
}

// ---------------------------------------------------------------- Adam, AdamW, LAMB

namespace {
const char* adam_name(Adam::Kind k) {
  return k == Adam::Kind::Adam ? "Adam" : k == Adam::Kind::AdamW ? "AdamW" : "LAMB";
}
}  // namespace

Adam::Adam(std::vector<Tensor*> params, AdamOptions o, Kind kind)
    : Optimizer(adam_name(kind), std::move(params), o.lr),
      o_(o),
      kind_(kind),
      beta1_t_(scalar(1)),
      beta2_t_(scalar(1)),
      beta1_now_(beta1_t_),
      beta2_now_(beta2_t_) {
  SLUICE_CHECK_IN(ValueError, name_, o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1)
      << "betas (" << o.beta1 << ", " << o.beta2 << ") must be in [0, 1)";
  SLUICE_CHECK_IN(ValueError, name_, o.eps >= 0 && o.weight_decay >= 0)
      << "eps " << o.eps << " and weight decay " << o.weight_decay << " must be >= 0";
  for (size_t i = 0; i < params_.size(); ++i) m_.push_back(state_like(i)), v_.push_back(state_like(i));
}

void Adam::begin_step() {
  beta1_now_ = write(beta1_t_, beta1_t_ * o_.beta1);
  beta2_now_ = write(beta2_t_, beta2_t_ * o_.beta2);
}

Tensor Adam::update(size_t i, const Tensor& p, const Tensor& g0) {
  const DType dt = p.dtype();
  const Tensor g = kind_ == Kind::Adam && o_.weight_decay ? g0 + p * o_.weight_decay : g0;
  const Tensor m = write(m_[i], m_[i] * o_.beta1 + g * (1 - o_.beta1));
  const Tensor v = write(v_[i], v_[i] * o_.beta2 + g.square() * (1 - o_.beta2));
  const Tensor m_hat = m / (1 - beta1_now_).cast(dt), v_hat = v / (1 - beta2_now_).cast(dt);
  Tensor up = m_hat / (v_hat.sqrt() + o_.eps);
  if (kind_ != Kind::Adam && o_.weight_decay) up = up + p * o_.weight_decay;
  Tensor lr = lr_.cast(dt);
  if (kind_ == Kind::Lamb) {
    // The trust ratio |p| / |update|, 1 where either norm is 0.
    const Tensor pn = p.square().sum().sqrt(), un = up.square().sum().sqrt();
    lr = lr * ((pn > 0) & (un > 0)).where(pn / un, Tensor::ones({}, dt, device_));
  }
  return p - up * lr;
}

}  // namespace sluice::optim
