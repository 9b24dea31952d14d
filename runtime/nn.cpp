#include "runtime/nn.h"

#include <cmath>
#include <set>

#include "base/error.h"

namespace sluice::nn {
namespace {

// A parameter: realized now (so an optimizer updates it in place) and requiring grad.
Tensor trained(Tensor t) {
  t = t.contiguous();
  t.realize();
  t.requires_grad(true);
  return t;
}

std::string shape_str(const Shape& s) { return tuple_str(s); }

// PyTorch's default weight of a linear or convolution layer: kaiming_uniform with a = sqrt(5), which is
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
Tensor default_weight(const Shape& shape, uint64_t seed, const std::string& device) {
  return trained(kaiming_uniform(shape, 2 * seed, std::sqrt(5.0), device));
}
// Its bias: the same bound, drawn from the layer's second seed.
Tensor default_bias(const Tensor& weight, int64_t out, uint64_t seed, const std::string& device) {
  const double b = 1 / std::sqrt(double(fans(weight.shape()).first));
  return trained(Tensor::uniform({out}, -b, b, 2 * seed + 1, dtypes::float32, device));
}

void check_groups(const char* layer, int64_t groups, int64_t in, int64_t out) {
  SLUICE_CHECK_IN(ValueError, layer, groups >= 1 && in % groups == 0 && out % groups == 0)
      << "groups " << groups << " must divide the channels in " << in << " and out " << out;
}

}  // namespace

// ---------------------------------------------------------------- initializers

std::pair<int64_t, int64_t> fans(const Shape& shape) {
  SLUICE_CHECK_IN(ShapeError, "fans", shape.size() >= 2)
      << "a weight needs (out, in, ...) dimensions, got shape " << shape_str(shape);
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

Tensor kaiming_uniform(const Shape& shape, uint64_t seed, double a, const std::string& device) {
  const double bound = std::sqrt(2 / (1 + a * a)) * std::sqrt(3.0 / double(fans(shape).first));
  return Tensor::uniform(shape, -bound, bound, seed, dtypes::float32, device);
}
Tensor kaiming_normal(const Shape& shape, uint64_t seed, double a, const std::string& device) {
  const double std = std::sqrt(2 / (1 + a * a)) / std::sqrt(double(fans(shape).first));
  return Tensor::normal(shape, 0, std, seed, dtypes::float32, device);
}
Tensor xavier_uniform(const Shape& shape, uint64_t seed, double gain, const std::string& device) {
  const auto [in, out] = fans(shape);
  const double bound = gain * std::sqrt(6.0 / double(in + out));
  return Tensor::uniform(shape, -bound, bound, seed, dtypes::float32, device);
}
Tensor xavier_normal(const Shape& shape, uint64_t seed, double gain, const std::string& device) {
  const auto [in, out] = fans(shape);
  return Tensor::normal(shape, 0, gain * std::sqrt(2.0 / double(in + out)), seed, dtypes::float32, device);
}

// ---------------------------------------------------------------- Module

void Module::param(const std::string& name, Tensor& t) { tensors_.push_back({name, &t, true, kind_}); }
void Module::buffer(const std::string& name, Tensor& t) { tensors_.push_back({name, &t, false, kind_}); }
void Module::child(const std::string& name, Module& m) { children_.emplace_back(name, &m); }

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Entry>>& out) {
  for (const Entry& e : tensors_) out.emplace_back(prefix + e.name, e);
  for (auto& [name, m] : children_) m->collect(prefix + name + ".", out);
}

std::vector<Tensor*> Module::parameters() {
  std::vector<std::pair<std::string, Entry>> all;
  collect("", all);
  std::vector<Tensor*> out;
  for (auto& [key, e] : all)
    if (e.trained) out.push_back(e.tensor);
  return out;
}

std::vector<std::pair<std::string, Tensor*>> Module::named_tensors() {
  std::vector<std::pair<std::string, Entry>> all;
  collect("", all);
  std::vector<std::pair<std::string, Tensor*>> out;
  for (auto& [key, e] : all) out.emplace_back(key, e.tensor);
  return out;
}

std::map<std::string, Tensor> Module::state_dict() {
  std::map<std::string, Tensor> out;
  for (auto& [key, t] : named_tensors()) out.emplace(key, *t);
  return out;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state) {
  std::vector<std::pair<std::string, Entry>> mine;
  collect("", mine);
  // Every check before the first write: a failed load changes nothing.
  std::vector<std::string> missing, unexpected;
  std::set<std::string> known;
  for (const auto& [key, e] : mine) {
    known.insert(key);
    auto it = state.find(key);
    if (it == state.end()) {
      missing.push_back(key);
      continue;
    }
    const Tensor& t = *e.tensor;
    SLUICE_CHECK_IN(ValueError, "load_state_dict", it->second.shape() == t.shape())
        << e.kind << " '" << key << "': the state has shape " << shape_str(it->second.shape())
        << ", the layer " << shape_str(t.shape());
    SLUICE_CHECK_IN(ValueError, "load_state_dict", it->second.dtype() == t.dtype())
        << e.kind << " '" << key << "': the state is " << it->second.dtype().name() << ", the layer "
        << t.dtype().name();
  }
  for (const auto& [key, t] : state)
    if (!known.count(key)) unexpected.push_back(key);
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& k : v) s += (s.empty() ? "'" : ", '") + k + "'";
    return s;
  };
  SLUICE_CHECK_IN(ValueError, "load_state_dict", missing.empty() && unexpected.empty())
      << kind_ << ": " << (missing.empty() ? "" : "missing " + list(missing))
      << (missing.empty() || unexpected.empty() ? "" : "; ")
      << (unexpected.empty() ? "" : "unexpected " + list(unexpected));
  std::vector<Tensor*> written;
  for (auto& [key, e] : mine) {
    e.tensor->assign(state.at(key).to(e.tensor->device()));
    written.push_back(e.tensor);
  }
  Tensor::realize_all(written);
}

void Module::update(const Tensor& target, const Tensor& value) const {
  updates_.push_back(target.write(value));
}

std::vector<Tensor> Module::take_updates() {
  std::vector<Tensor> out = std::move(updates_);
  updates_.clear();
  for (auto& [name, m] : children_)
    for (Tensor& t : m->take_updates()) out.push_back(std::move(t));
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, m] : children_) m->train(on);
}

// ---------------------------------------------------------------- layers

Linear::Linear(int64_t in, int64_t out, bool has_bias, uint64_t seed, const std::string& device)
    : weight(default_weight({out, in}, seed, device)) {
  kind_ = "Linear";
  param("weight", weight);
  if (has_bias) {
    bias = default_bias(weight, out, seed, device);
    param("bias", *bias);
  }
}

Tensor Linear::operator()(const Tensor& x) const {
  Tensor y = x.matmul(weight.transpose());
  return bias ? y + *bias : y;
}

Conv2d::Conv2d(int64_t in, int64_t out, int64_t kernel, Conv2dOptions o, const std::string& device)
    : weight(default_weight({out, in / o.groups, kernel, kernel}, o.seed, device)), o_(o) {
  kind_ = "Conv2d";
  check_groups(kind_, o.groups, in, out);
  param("weight", weight);
  if (o.bias) {
    bias = default_bias(weight, out, o.seed, device);
    param("bias", *bias);
  }
}

Tensor Conv2d::operator()(const Tensor& x) const {
  return x.conv2d(weight, {.bias = bias,
                           .groups = o_.groups,
                           .stride = {o_.stride},
                           .dilation = {o_.dilation},
                           .padding = {o_.padding}});
}

LayerNorm::LayerNorm(const Shape& shape, double eps, const std::string& device)
    : weight(trained(Tensor::ones(shape, dtypes::float32, device))),
      bias(trained(Tensor::zeros(shape, dtypes::float32, device))),
      shape_(shape),
      eps_(eps) {
  kind_ = "LayerNorm";
  param("weight", weight);
  param("bias", bias);
}

Tensor LayerNorm::operator()(const Tensor& x) const {
  SLUICE_CHECK_IN(ShapeError, "LayerNorm", x.ndim() >= int64_t(shape_.size()))
      << "input of shape " << shape_str(x.shape()) << " has fewer axes than the normalized shape "
      << shape_str(shape_);
  Shape axes;
  for (int64_t i = x.ndim() - int64_t(shape_.size()); i < x.ndim(); ++i) axes.push_back(i);
  const Tensor centered = x - x.mean(axes, true);
  return centered * (centered.square().mean(axes, true) + eps_).rsqrt() * weight + bias;
}

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, int64_t kernel, ConvTranspose2dOptions o,
                                 const std::string& device)
    // PyTorch computes its fans from the weight as stored, (in, out / groups, k, k).
    : weight(default_weight({in, out / o.groups, kernel, kernel}, o.seed, device)), o_(o) {
  kind_ = "ConvTranspose2d";
  check_groups(kind_, o.groups, in, out);
  param("weight", weight);
  if (o.bias) {
    bias = default_bias(weight, out, o.seed, device);
    param("bias", *bias);
  }
}

Tensor ConvTranspose2d::operator()(const Tensor& x) const {
  return x.conv_transpose2d(weight, {.bias = bias,
                                     .groups = o_.groups,
                                     .stride = {o_.stride},
                                     .dilation = {o_.dilation},
                                     .padding = {o_.padding},
                                     .output_padding = {o_.output_padding}});
}

BatchNorm::BatchNorm(int64_t channels, double eps, double momentum, const std::string& device)
    : weight(trained(Tensor::ones({channels}, dtypes::float32, device))),
      bias(trained(Tensor::zeros({channels}, dtypes::float32, device))),
      running_mean(Tensor::zeros({channels}, dtypes::float32, device).contiguous().realize()),
      running_var(Tensor::ones({channels}, dtypes::float32, device).contiguous().realize()),
      num_batches_tracked(Tensor::zeros({}, dtypes::int64, device).contiguous().realize()),
      eps_(eps),
      momentum_(momentum) {
  kind_ = "BatchNorm";
  param("weight", weight);
  param("bias", bias);
  buffer("running_mean", running_mean);
  buffer("running_var", running_var);
  buffer("num_batches_tracked", num_batches_tracked);
}

Tensor BatchNorm::operator()(const Tensor& x) const {
  SLUICE_CHECK_IN(ShapeError, "BatchNorm", x.ndim() >= 2 && x.shape(1) == weight.shape(0))
      << "input of shape " << shape_str(x.shape()) << " for " << weight.shape(0) << " channels on axis 1";
  Shape axes{0}, per_channel(size_t(x.ndim()), 1);
  for (int64_t i = 2; i < x.ndim(); ++i) axes.push_back(i);
  per_channel[1] = x.shape(1);
  auto channel = [&](const Tensor& t) { return t.reshape(per_channel); };
  if (!training())
    return (x - channel(running_mean)) * channel((running_var + eps_).rsqrt() * weight) + channel(bias);
  const Tensor mean = x.mean(axes), var = (x - channel(mean)).square().mean(axes);
  {
    // The running variance is the unbiased one, as PyTorch keeps it.
    const double n = double(x.numel() / x.shape(1));
    NoGrad no_grad;
    update(running_mean, running_mean * (1 - momentum_) + mean.detach() * momentum_);
    update(running_var,
           running_var * (1 - momentum_) + var.detach() * (momentum_ * n / std::max(n - 1, 1.0)));
    update(num_batches_tracked, num_batches_tracked + 1);
  }
  return (x - channel(mean)) * channel((var + eps_).rsqrt() * weight) + channel(bias);
}

RMSNorm::RMSNorm(int64_t dim, double eps, const std::string& device)
    : weight(trained(Tensor::ones({dim}, dtypes::float32, device))), eps_(eps) {
  kind_ = "RMSNorm";
  param("weight", weight);
}

Tensor RMSNorm::operator()(const Tensor& x) const { return x.rmsnorm(-1, eps_) * weight; }

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps, const std::string& device)
    : weight(trained(Tensor::ones({channels}, dtypes::float32, device))),
      bias(trained(Tensor::zeros({channels}, dtypes::float32, device))),
      groups_(groups),
      eps_(eps) {
  kind_ = "GroupNorm";
  SLUICE_CHECK_IN(ValueError, "GroupNorm", groups >= 1 && channels % groups == 0)
      << groups << " groups must divide " << channels << " channels";
  param("weight", weight);
  param("bias", bias);
}

Tensor GroupNorm::operator()(const Tensor& x) const {
  SLUICE_CHECK_IN(ShapeError, "GroupNorm", x.ndim() >= 2 && x.shape(1) == weight.shape(0))
      << "input of shape " << shape_str(x.shape()) << " for " << weight.shape(0) << " channels on axis 1";
  const Tensor g = x.reshape({x.shape(0), groups_, -1});
  const Tensor c = g - g.mean({2}, true);
  Shape per_channel(size_t(x.ndim()), 1);
  per_channel[1] = x.shape(1);
  const Tensor normed = (c * (c.square().mean({2}, true) + eps_).rsqrt()).reshape(x.shape());
  return normed * weight.reshape(per_channel) + bias.reshape(per_channel);
}

Embedding::Embedding(int64_t num, int64_t dim, uint64_t seed, const std::string& device)
    : weight(trained(Tensor::randn({num, dim}, seed, dtypes::float32, device))) {
  kind_ = "Embedding";
  param("weight", weight);
}

Tensor Embedding::operator()(const Tensor& indices) const {
  Shape out = indices.shape();
  out.push_back(weight.shape(1));
  return weight.index_select(0, indices.flatten()).reshape(out);
}

Dropout::Dropout(double p, uint64_t seed, const std::string& device)
    : p_(p), seed_(seed), counter_(Tensor::zeros({}, dtypes::uint32, device).contiguous()) {
  kind_ = "Dropout";
  SLUICE_CHECK_IN(ValueError, kind_, p >= 0 && p <= 1) << "probability " << p << " is not in [0, 1]";
  counter_.realize();
}

Tensor Dropout::operator()(const Tensor& x) const {
  if (!training() || p_ == 0) return x;
  if (!has_updates()) {  // the step's first call
    calls_ = 0;
    update(counter_, counter_ + 1);
  }
  const uint64_t seed = seed_ + 0x9E3779B97F4A7C15ull * calls_++;
  const Tensor keep = Tensor::rand(x.shape(), seed, counter_) >= p_;
  return keep.where(x * (1 / (1 - p_)), 0);
}

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions o,
                                       const std::string& device)
    : in_proj_weight(trained(xavier_uniform({3 * embed_dim, embed_dim}, 2 * o.seed, 1, device))),
      out_proj(embed_dim, embed_dim, o.bias, 2 * o.seed + 1, device),
      heads_(num_heads),
      o_(o) {
  kind_ = "MultiheadAttention";
  SLUICE_CHECK_IN(ValueError, kind_, num_heads >= 1 && embed_dim % num_heads == 0)
      << "embed_dim " << embed_dim << " is not a multiple of num_heads " << num_heads;
  param("in_proj_weight", in_proj_weight);
  if (o.bias) {
    in_proj_bias = trained(Tensor::zeros({3 * embed_dim}, dtypes::float32, device));
    param("in_proj_bias", *in_proj_bias);
    out_proj.bias->assign(Tensor::zeros({embed_dim}, dtypes::float32, device)).realize();
  }
  child("out_proj", out_proj);
}

Tensor MultiheadAttention::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const std::optional<Tensor>& attn_mask,
                                      const std::optional<Tensor>& key_padding_mask, bool is_causal) const {
  const int64_t e = in_proj_weight.shape(1), d = e / heads_;
  const bool batched = query.ndim() == 3;
  SLUICE_CHECK_IN(ShapeError, kind_,
                  (query.ndim() == 2 || batched) && key.ndim() == query.ndim() &&
                      value.ndim() == query.ndim() && query.shape(-1) == e && key.shape(-1) == e &&
                      value.shape(-1) == e && key.shape() == value.shape())
      << "needs query (L, N, E) or (L, E) and key, value (S, N, E) or (S, E) with E = " << e << ", got "
      << shape_str(query.shape()) << ", " << shape_str(key.shape()) << ", " << shape_str(value.shape());
  // Everything as (N, L, E).
  auto batch_first = [&](const Tensor& t) {
    return !batched ? t.unsqueeze(0) : o_.batch_first ? t : t.transpose(0, 1);
  };
  const std::vector<Tensor> w = in_proj_weight.chunk(3);
  std::vector<Tensor> b;
  if (in_proj_bias) b = in_proj_bias->chunk(3);
  // (N, T, E) -> (N, heads, T, d)
  auto project = [&](const Tensor& t, size_t i) {
    Tensor y = batch_first(t).matmul(w[i].transpose());
    if (in_proj_bias) y = y + b[i];
    return y.reshape({y.shape(0), y.shape(1), heads_, d}).transpose(1, 2);
  };
  const Tensor q = project(query, 0), k = project(key, 1), v = project(value, 2);
  const int64_t n = q.shape(0), l = q.shape(2), s = k.shape(2);
  // One additive mask (N or 1, heads or 1, L, S) from PyTorch's "true = masked out" bool masks.
  std::optional<Tensor> mask;
  auto additive = [&](const Tensor& m) {
    return m.dtype() == dtypes::bool_ ? m.where(Tensor::full({}, -INFINITY, q.dtype(), q.device()), 0.0) : m;
  };
  if (is_causal && !attn_mask)  // PyTorch takes is_causal as a hint about attn_mask; alone, it is the mask
    mask = additive(Tensor::ones({l, s}, dtypes::bool_, q.device()).triu(1));
  const Shape per_query{l, s}, per_head{n * heads_, l, s}, per_key = batched ? Shape{n, s} : Shape{s};
  if (attn_mask) {
    SLUICE_CHECK_IN(ShapeError, kind_, attn_mask->shape() == per_query || attn_mask->shape() == per_head)
        << "attn_mask must be " << shape_str(per_query) << " or " << shape_str(per_head) << ", got "
        << shape_str(attn_mask->shape());
    mask = additive(attn_mask->ndim() == 3 ? attn_mask->reshape({n, heads_, l, s}) : *attn_mask);
  }
  if (key_padding_mask) {
    SLUICE_CHECK_IN(ShapeError, kind_, key_padding_mask->shape() == per_key)
        << "key_padding_mask must be " << shape_str(per_key) << ", got "
        << shape_str(key_padding_mask->shape());
    const Tensor kp = additive(key_padding_mask->reshape({n, 1, 1, s}));
    mask = mask ? *mask + kp : kp;
  }
  const Tensor o = q.scaled_dot_product_attention(k, v, mask).transpose(1, 2).reshape({n, l, e});
  const Tensor y = out_proj(o);
  return !batched ? y.reshape({l, e}) : o_.batch_first ? y : y.transpose(0, 1);
}

}  // namespace sluice::nn
