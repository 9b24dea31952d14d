#pragma once
// Optimizers (DESIGN.md §5, "Training"): SGD (momentum, Nesterov, weight decay), Adam, AdamW and LAMB,
// with the update rules of PyTorch's (LAMB: the reference design's, which PyTorch lacks).
//
// An optimizer holds pointers to the parameters it updates (a module's members: they must outlive it)
// and its state (moments, step counts, the learning rate) as realized tensors on their device. step()
// writes every parameter that has a gradient its new value and realizes those writes (ASSIGNs into the
// parameters' and the state's own buffers) in one schedule, so the update runs on the device in place
// and costs no host round trip; step_lazy() returns the writes without realizing them, for a training
// step that sluice::jit captures whole (the JIT realizes what the step returns, and its replays update
// the same buffers). The parameter tensors themselves stay their buffers throughout, so they read the
// new values as soon as the writes are realized.
//
// Bad arguments throw: no parameters, a non-float one, parameters on several devices, a learning rate
// or a beta out of range — each naming the optimizer and the value.
#include <memory>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace sluice::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  void zero_grad();  // every parameter's (Tensor::zero_grad)
  void step();
  // The step's writes, lazy: return them from a jitted step so that it realizes them.
  std::vector<Tensor> step_lazy();

  const std::vector<Tensor*>& params() const { return params_; }
  double lr() const { return lr_value_; }
  void set_lr(double lr);  // takes effect at the next step, replays of a captured step included

 protected:
  // Realizes the parameters (they must be buffers to be updated in place); `name` is for errors.
  Optimizer(const char* name, std::vector<Tensor*> params, double lr);
  // A realized tensor of zeros shaped like parameter i: optimizer state.
  Tensor state_like(size_t i) const;
  // A realized float32 scalar on the parameters' device.
  Tensor scalar(double v) const;
  // A write of `value` into `target`'s buffer, made part of this step; reading the result reads the
  // new value (the scheduler orders the write first). `target` itself stays its buffer.
  Tensor write(const Tensor& target, const Tensor& value);
  // Called once per step before the parameters' updates (a step counter's increment).
  virtual void begin_step() {}
  // The new value of parameter `p` (index i) from its gradient `g`, its state written with write().
  // Runs in a NoGrad scope; lr_ is the learning rate as a float32 scalar tensor.
  virtual Tensor update(size_t i, const Tensor& p, const Tensor& g) = 0;

  const char* name_;
  std::vector<Tensor*> params_;
  std::string device_;
  double lr_value_;
  Tensor lr_;                   // float32 scalar, realized
  std::vector<Tensor> writes_;  // the step being built
};

struct SGDOptions {
  double lr = 1e-3, momentum = 0, weight_decay = 0;
  bool nesterov = false;
};
class SGD final : public Optimizer {
 public:
  SGD(std::vector<Tensor*> params, SGDOptions o = {});

 private:
  Tensor update(size_t i, const Tensor& p, const Tensor& g) override;
  SGDOptions o_;
  std::vector<Tensor> momentum_;  // one per parameter while momentum != 0
};

// Adam (weight decay as L2 on the gradient), AdamW (decoupled weight decay) and LAMB (the update scaled
// by the trust ratio |p| / |update| of each parameter) share their moments; `kind` picks the rule.
struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
};
class Adam : public Optimizer {
 public:
  enum class Kind { Adam, AdamW, Lamb };
  Adam(std::vector<Tensor*> params, AdamOptions o = {}, Kind kind = Kind::Adam);

 private:
  void begin_step() override;
  Tensor update(size_t i, const Tensor& p, const Tensor& g) override;
  AdamOptions o_;
  Kind kind_;
  std::vector<Tensor> m_, v_;
  Tensor beta1_t_, beta2_t_;      // beta^t: buffers
  Tensor beta1_now_, beta2_now_;  // beta^t of the step being built (their writes)
};
// AdamW's default weight decay is PyTorch's (0.01).
inline std::unique_ptr<Adam> adamw(std::vector<Tensor*> params, AdamOptions o = {.weight_decay = 0.01}) {
  return std::make_unique<Adam>(std::move(params), o, Adam::Kind::AdamW);
}
inline std::unique_ptr<Adam> lamb(std::vector<Tensor*> params, AdamOptions o = {.eps = 1e-6}) {
  return std::make_unique<Adam>(std::move(params), o, Adam::Kind::Lamb);
}

}  // namespace sluice::optim
