#pragma once
// The models the benchmarks and the renderer tests use (the figures the issues name): an MLP 784-512-10
// (batch 64), a small CNN (batch 64, 28x28x1), and GPT-2-small blocks (d=768, 12 heads, seq 128). Parameters
// are buffers without data made once per model, which is all a graph needs; forward() builds the lazy graph.
// A benchmark that times the kernels gives them data first (fill_normal): what an uninitialized buffer
// holds depends on what the allocator handed back, and on Intel cores an FMA on a denormal float takes a
// microcode assist (the CNN's second conv ran 6 or 62 ms depending on the process's history).
#include <cstdint>
#include <vector>

#include "runtime/tensor.h"

namespace sluice::bench {

inline Tensor param(const Shape& s) { return Tensor::empty(s, sluice::dtypes::float32, "CPU"); }

// Writes standard normal values into each tensor, in place (Tensor::randn, seeds seed, seed + 1, ...).
inline void fill_normal(const std::vector<Tensor*>& params, uint64_t seed = 1) {
  for (Tensor* t : params) t->assign(Tensor::randn(t->shape(), seed++, t->dtype(), t->device()));
  Tensor::realize_all(params);
}

struct Mlp {
  Tensor x = param({64, 784}), w1 = param({784, 512}), b1 = param({512}), w2 = param({512, 10}),
         b2 = param({10});
  Tensor forward() const { return (x.matmul(w1) + b1).relu().matmul(w2) + b2; }
  std::vector<Tensor*> params() { return {&x, &w1, &b1, &w2, &b2}; }
};

// 28x28x1 -> conv3x3 32 -> relu -> pool -> conv3x3 64 -> relu -> pool -> linear 10; the convs unpadded
// (26 and 11 output columns), or with padding 1 (28 and 14: the model the reference design's figure is for).
struct Cnn {
  int64_t pad = 0;
  Tensor x = param({64, 1, 28, 28}), c1 = param({32, 1, 3, 3}), c1b = param({32}), c2 = param({64, 32, 3, 3}),
         c2b = param({64}), w, b = param({10});
  explicit Cnn(int64_t padding = 0) : pad(padding), w(param({64 * (5 + 2 * pad) * (5 + 2 * pad), 10})) {}
  Tensor forward() const {
    Tensor h = x.conv2d(c1, {.bias = c1b, .padding = {pad}}).relu().max_pool2d();
    h = h.conv2d(c2, {.bias = c2b, .padding = {pad}}).relu().max_pool2d();
    return h.flatten(1).matmul(w) + b;
  }
  std::vector<Tensor*> params() { return {&x, &c1, &c1b, &c2, &c2b, &w, &b}; }
};

struct Block {  // GPT-2 small: d=768, 12 heads, pre-norm, causal attention, MLP 3072 with gelu
  static constexpr int64_t d = 768, heads = 12, hd = 64;
  Tensor ln1g = param({d}), ln1b = param({d}), wqkv = param({d, 3 * d}), bqkv = param({3 * d}),
         wo = param({d, d}), bo = param({d}), ln2g = param({d}), ln2b = param({d}), w1 = param({d, 4 * d}),
         b1 = param({4 * d}), w2 = param({4 * d, d}), b2 = param({d});
  Tensor forward(const Tensor& x) const {
    int64_t t = x.shape(1);
    Tensor qkv = (x.layernorm() * ln1g + ln1b).matmul(wqkv) + bqkv;
    std::vector<Tensor> parts = qkv.split(d, -1);
    auto heads_of = [&](const Tensor& p) { return p.reshape({1, t, heads, hd}).transpose(1, 2); };
    Tensor attn = heads_of(parts[0]).scaled_dot_product_attention(heads_of(parts[1]), heads_of(parts[2]),
                                                                  std::nullopt, true);
    Tensor h = x + (attn.transpose(1, 2).reshape({1, t, d}).matmul(wo) + bo);
    Tensor m = ((h.layernorm() * ln2g + ln2b).matmul(w1) + b1).gelu().matmul(w2) + b2;
    return h + m;
  }
  std::vector<Tensor*> params() {
    return {&ln1g, &ln1b, &wqkv, &bqkv, &wo, &bo, &ln2g, &ln2b, &w1, &b1, &w2, &b2};
  }
};

struct Gpt {
  Tensor x = param({1, 128, Block::d});
  std::vector<Block> blocks;
  explicit Gpt(int n) : blocks(size_t(n)) {}
  Tensor forward() const {
    Tensor h = x;
    for (const Block& b : blocks) h = b.forward(h);
    return h;
  }
  std::vector<Tensor*> params() {
    std::vector<Tensor*> all = {&x};
    for (Block& b : blocks)
      for (Tensor* p : b.params()) all.push_back(p);
    return all;
  }
};

}  // namespace sluice::bench
