#pragma once
// nn (DESIGN.md §5, "Training"): layers as small classes that hold their parameters as realized tensors
// requiring grad, with PyTorch's default initializations, names and state_dict keys, so a model trained
// there loads here (safetensors.h) and the reverse. A layer is called like a function: y = layer(x).
//
// Module is the base: a layer registers its parameters (trained: requires grad, handed to an optimizer by
// parameters()) and buffers (state that is not trained, as a BatchNorm's running statistics) by name;
// a model registers its layers as children, whose names prefix their tensors' ("conv1.weight").
// state_dict() gives every tensor by name; load_state_dict() copies values in, after checking that the
// names match exactly (missing and unexpected names listed) and that every shape and dtype matches —
// ValueError naming the layer, the key and both shapes otherwise; nothing is changed by a failed load.
//
// Initializers are seeded: the same seed gives the same weights on every device.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tensor.h"

namespace sluice::nn {

// Fans as PyTorch computes them: shape (out, in, k...) has fan_in = in * prod(k), fan_out = out * prod(k).
std::pair<int64_t, int64_t> fans(const Shape& shape);
// U(-b, b) with b = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + a^2)) (PyTorch's kaiming_uniform_;
// its layers use a = sqrt(5), which gives b = 1 / sqrt(fan_in)).
Tensor kaiming_uniform(const Shape& shape, uint64_t seed, double a = 0,
                       const std::string& device = default_device());
Tensor kaiming_normal(const Shape& shape, uint64_t seed, double a = 0,
                      const std::string& device = default_device());
Tensor xavier_uniform(const Shape& shape, uint64_t seed, double gain = 1,
                      const std::string& device = default_device());
Tensor xavier_normal(const Shape& shape, uint64_t seed, double gain = 1,
                     const std::string& device = default_device());

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  std::vector<Tensor*> parameters();                             // what an optimizer updates, in order
  std::vector<std::pair<std::string, Tensor*>> named_tensors();  // parameters and buffers, by key
  std::map<std::string, Tensor> state_dict();
  void load_state_dict(const std::map<std::string, Tensor>& state);
  // Training mode (the default) or evaluation mode, for this module and its children: BatchNorm uses
  // batch statistics and Dropout drops only while training.
  void train(bool on = true);
  void eval() { train(false); }
  bool training() const { return training_; }
  // The writes of buffers that forward calls made since the last call (BatchNorm's running statistics,
  // ASSIGNs into their own buffers), this module's and its children's: realize them with the step, or
  // return them from a jitted step as an optimizer's step_lazy() writes are.
  std::vector<Tensor> take_updates();

 protected:
  // Registration, in the order the layer's tensors should appear. A registered tensor must stay at its
  // address (a member of the layer).
  void param(const std::string& name, Tensor& t);
  void buffer(const std::string& name, Tensor& t);
  void child(const std::string& name, Module& m);
  const char* kind_ = "Module";  // the layer's class, for errors
  // A write of `value` into buffer `target` (which stays its buffer), kept for take_updates().
  void update(const Tensor& target, const Tensor& value) const;
  bool has_updates() const { return !updates_.empty(); }  // this module's own, not yet taken

 private:
  struct Entry {
    std::string name;
    Tensor* tensor;
    bool trained;
    const char* kind;  // the layer that registered it, for errors
  };
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Entry>>& out);
  std::vector<Entry> tensors_;
  std::vector<std::pair<std::string, Module*>> children_;
  bool training_ = true;
  mutable std::vector<Tensor> updates_;
};

// y = x @ weight.T + bias; weight (out, in), bias (out).
class Linear : public Module {
 public:
  Linear(int64_t in, int64_t out, bool bias = true, uint64_t seed = 0,
         const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;
};

struct Conv2dOptions {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
  uint64_t seed = 0;
};
// NCHW convolution; weight (out, in / groups, k, k).
class Conv2d : public Module {
 public:
  Conv2d(int64_t in, int64_t out, int64_t kernel, Conv2dOptions o = {},
         const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;

 private:
  Conv2dOptions o_;
};

// The transposed convolution (the gradient of Conv2d's input); weight (in, out / groups, k, k).
struct ConvTranspose2dOptions {
  int64_t stride = 1, padding = 0, output_padding = 0, dilation = 1, groups = 1;
  bool bias = true;
  uint64_t seed = 0;
};
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in, int64_t out, int64_t kernel, ConvTranspose2dOptions o = {},
                  const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  Tensor weight;
  std::optional<Tensor> bias;

 private:
  ConvTranspose2dOptions o_;
};

// Batch normalization over axis 1 of (N, C, ...) inputs (PyTorch's BatchNorm1d/2d/3d). Training: the
// batch's mean and biased variance normalize, and the running averages move by `momentum` toward the
// batch mean and the unbiased variance (take_updates()); evaluation: the running averages normalize.
class BatchNorm : public Module {
 public:
  BatchNorm(int64_t channels, double eps = 1e-5, double momentum = 0.1,
            const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  double eps_, momentum_;
};

// Normalizes over the last len(shape) axes, with a learned scale and shift (PyTorch's LayerNorm).
class LayerNorm : public Module {
 public:
  LayerNorm(const Shape& shape, double eps = 1e-5, const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  Tensor weight, bias;

 private:
  Shape shape_;
  double eps_;
};

// x / sqrt(mean(x^2) + eps) * weight over the last axis.
class RMSNorm : public Module {
 public:
  RMSNorm(int64_t dim, double eps = 1e-6, const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  Tensor weight;

 private:
  double eps_;
};

// Normalizes each of `groups` groups of channels (axis 1) over its channels and the spatial axes.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t groups, int64_t channels, double eps = 1e-5,
            const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;
  Tensor weight, bias;

 private:
  int64_t groups_;
  double eps_;
};

// Rows of a (num, dim) table picked by integer indices of any shape.
class Embedding : public Module {
 public:
  Embedding(int64_t num, int64_t dim, uint64_t seed = 0, const std::string& device = default_device());
  Tensor operator()(const Tensor& indices) const;
  Tensor weight;
};

// Zeroes each element with probability p while training and scales the others by 1 / (1 - p); the identity
// in evaluation mode. The mask is drawn from (seed, a counter on the device) and the first call of a step
// advances the counter through take_updates(), so every step draws new masks, a replayed jitted step
// included; later calls before the update is taken draw from further seeds.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, uint64_t seed = 0, const std::string& device = default_device());
  Tensor operator()(const Tensor& x) const;

 private:
  double p_;
  uint64_t seed_;
  Tensor counter_;              // not in the state_dict: PyTorch's Dropout has none
  mutable uint64_t calls_ = 0;  // since the counter's pending update
};

struct MultiheadAttentionOptions {
  bool bias = true;
  bool batch_first = false;  // (N, L, E) inputs; PyTorch's default is (L, N, E)
  uint64_t seed = 0;
};
// PyTorch's nn.MultiheadAttention (same parameters, initialization and state_dict keys: in_proj_weight
// (3E, E), in_proj_bias, out_proj.weight, out_proj.bias), for query/key/value of one embedding size E and
// without dropout on the attention weights; returns the output only. Masks mean what they mean there: a
// bool attn_mask (L, S) or (N * heads, L, S) and key_padding_mask (N, S) are true where a position may NOT
// be attended; a float attn_mask is added to the scores. Unbatched (L, E) inputs work too.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions o = {},
                     const std::string& device = default_device());
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                    const std::optional<Tensor>& attn_mask = std::nullopt,
                    const std::optional<Tensor>& key_padding_mask = std::nullopt,
                    bool is_causal = false) const;
  Tensor in_proj_weight;
  std::optional<Tensor> in_proj_bias;
  Linear out_proj;

 private:
  int64_t heads_;
  MultiheadAttentionOptions o_;
};

}  // namespace sluice::nn
