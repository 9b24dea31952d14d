// Tensor's gradients (tensor.h, "gradients"): the state a tensor that requires grad shares with its
// copies, the registry backward() finds them in, and the no-grad scope. The derivatives are core's
// (core/gradient/gradient.h).
#include <algorithm>
#include <mutex>

#include "core/gradient/gradient.h"
#include "runtime/tensor_internal.h"

namespace sluice {
namespace detail {

struct GradState {
  bool on = false;
  UOp uop;  // the tensor's node now: assign() and realize() move it
  std::string device;
  std::optional<Tensor> grad;
};

namespace {

// Every tensor that ever required grad, while one of its copies lives. backward() looks its nodes up in
// the graph it differentiates.
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<GradState>> states;

  void add(const std::shared_ptr<GradState>& s) {
    std::lock_guard lk(mu);
    std::erase_if(states, [](const std::weak_ptr<GradState>& w) { return w.expired(); });
    states.push_back(s);
  }
  std::vector<std::shared_ptr<GradState>> requiring() {
    std::lock_guard lk(mu);
    std::vector<std::shared_ptr<GradState>> out;
    for (const auto& w : states)
      if (auto s = w.lock(); s && s->on) out.push_back(std::move(s));
    return out;
  }
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: tensors may outlive static destruction
  return *r;
}

thread_local int no_grad_depth = 0;

}  // namespace

UOp without_grad(const UOp& u) {
  const Op op = u.op();
  const bool computes = is_alu(op) || op == Op::Cast || op == Op::ReduceAxis;
  return computes && u.dtype().is_float() ? u.detach() : u;
}

}  // namespace detail

NoGrad::NoGrad() { ++detail::no_grad_depth; }
NoGrad::~NoGrad() { --detail::no_grad_depth; }
bool NoGrad::active() { return detail::no_grad_depth > 0; }

void Tensor::set_uop(UOp uop) {
  uop_ = std::move(uop);
  if (grad_) grad_->uop = uop_;
}

Tensor& Tensor::requires_grad(bool on) {
  SLUICE_CHECK_IN(DTypeError, "requires_grad", !on || dtype().is_float())
      << "only float tensors have gradients; this tensor is " << dtype().name() << " of shape "
      << tuple_str(shape());
  if (!grad_) {
    if (!on) return *this;
    grad_ = std::make_shared<detail::GradState>();
    grad_->uop = uop_;
    grad_->device = device_;
    detail::registry().add(grad_);
  }
  grad_->on = on;
  return *this;
}

bool Tensor::requires_grad() const { return grad_ && grad_->on; }

std::optional<Tensor> Tensor::grad() const { return grad_ ? grad_->grad : std::nullopt; }

void Tensor::zero_grad() {
  if (grad_) grad_->grad.reset();
}

void Tensor::backward() {
  SLUICE_CHECK_IN(ValueError, "backward", numel() == 1)
      << "a tensor of shape " << tuple_str(shape()) << " (" << numel()
      << " elements) needs the gradient of its output: backward(gradient)";
  backward(Tensor::ones(shape(), dtype(), device_));
}

void Tensor::backward(const Tensor& gradient) {
  SLUICE_CHECK_IN(DTypeError, "backward", dtype().is_float())
      << "only float tensors have gradients; this tensor is " << dtype().name();
  SLUICE_CHECK_IN(ShapeError, "backward", gradient.shape() == shape())
      << "the gradient has shape " << tuple_str(gradient.shape()) << ", the tensor " << tuple_str(shape());
  SLUICE_CHECK_IN(DeviceError, "backward", gradient.device() == device_)
      << "the gradient is on " << gradient.device() << ", the tensor on " << device_;
  const std::vector<std::shared_ptr<detail::GradState>> states = detail::registry().requiring();
  std::vector<UOp> targets;
  targets.reserve(states.size());
  for (const auto& s : states) targets.push_back(s->uop);
  const std::vector<UOp> grads = sluice::gradient(uop_, gradient.cast(dtype()).uop(), targets);
  bool any = false;
  for (size_t i = 0; i < states.size(); ++i) {
    if (!grads[i]) continue;
    any = true;
    detail::GradState& s = *states[i];
    Tensor g(grads[i], s.device);
    s.grad = s.grad ? *s.grad + g : g;
  }
  SLUICE_CHECK_IN(ValueError, "backward", any)
      << "no tensor that requires grad reaches this tensor of shape " << tuple_str(shape())
      << " (mark the parameters with requires_grad(true))";
}

std::vector<Tensor> gradients(const Tensor& y, const std::vector<Tensor>& xs,
                              const std::optional<Tensor>& y_grad) {
  SLUICE_CHECK_IN(ValueError, "gradients", y_grad || y.numel() == 1)
      << "a tensor of shape " << tuple_str(y.shape()) << " (" << y.numel()
      << " elements) needs the gradient of its output";
  const Tensor g = y_grad ? *y_grad : Tensor::ones(y.shape(), y.dtype(), y.device());
  SLUICE_CHECK_IN(ShapeError, "gradients", g.shape() == y.shape())
      << "the gradient has shape " << tuple_str(g.shape()) << ", the tensor " << tuple_str(y.shape());
  std::vector<UOp> targets;
  for (const Tensor& x : xs) {
    SLUICE_CHECK_IN(DTypeError, "gradients", x.dtype().is_float())
        << "only float tensors have gradients; an input is " << x.dtype().name() << " of shape "
        << tuple_str(x.shape());
    targets.push_back(x.uop());
  }
  const std::vector<UOp> grads = gradient(y.uop(), g.cast(y.dtype()).uop(), targets);
  std::vector<Tensor> out;
  for (size_t i = 0; i < xs.size(); ++i)
    out.push_back(grads[i] ? Tensor(grads[i], xs[i].device()) : xs[i].zeros_like());
  return out;
}

}  // namespace sluice
