// The composite op cases (op_cases.h): chains of ops over a few shared inputs on one device, in the manner
// of ggml's test-backend-ops. Inputs are deterministic, so differences come from the kernels.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "conformance/op_cases.h"

namespace sluice::conformance {
namespace {

// Deterministic host data in [lo, hi): the inputs stay exact, so differences come from the kernels.
std::vector<float> data(int64_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::vector<float> v;
  v.resize(size_t(n));
  uint32_t x = seed * 2654435761u + 12345;
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    f = lo + (hi - lo) * float(x % 10000) / 10000.0f;
  }
  return v;
}
Tensor randf(const std::string& dev, const Shape& shape, uint32_t seed, float lo = -2, float hi = 2) {
  return Tensor::from(data(prod(shape), seed, lo, hi), shape, dev);
}
Tensor randi(const std::string& dev, const Shape& shape, uint32_t seed, int lo = -50, int hi = 50) {
  std::vector<int32_t> v;
  for (float f : data(prod(shape), seed, float(lo), float(hi))) v.push_back(int32_t(std::floor(f)));
  return Tensor::from(v, shape, dev);
}

// The inputs most cases share, on one device.
struct In {
  explicit In(std::string d)
      : dev(std::move(d)),
        a(randf(dev, {4, 5}, 1)),
        b(randf(dev, {4, 5}, 2)),
        row(randf(dev, {5}, 3)),
        pos(randf(dev, {4, 5}, 4, 0.1f, 4)),
        ia(randi(dev, {4, 5}, 5)),
        ib(randi(dev, {4, 5}, 6, -6, 6)),
        sh(randi(dev, {4, 5}, 7, -2, 34)) {}
  std::string dev;
  Tensor a, b, row, pos, ia, ib, sh;
};

// A case over the shared inputs, named without its "ops/" prefix; float32 tolerance by default: one
// rounding per op, a few ops deep.
struct Composite {
  Composite(std::string n, std::function<Tensor(const In&)> f, double rt = 1e-5, double at = 1e-6,
            std::string dtype = "")
      : name(std::move(n)), build(std::move(f)), rtol(rt), atol(at), needs(std::move(dtype)) {}
  std::string name;
  std::function<Tensor(const In&)> build;
  double rtol, atol;
  std::string needs;
};

Composite loose(std::string name, std::function<Tensor(const In&)> f, double tol = 1e-4) {
  return {std::move(name), std::move(f), tol, tol};
}

std::vector<Composite> composites() {
  std::vector<Composite> v = {
      // elementwise float32, broadcasting
      {"add_broadcast", [](const In& d) { return d.a + d.row; }},
      {"sub_scalar", [](const In& d) { return d.a - 1.5f; }},
      {"mul", [](const In& d) { return d.a * d.b; }},
      {"div", [](const In& d) { return d.a / d.b; }},
      {"neg_abs", [](const In& d) { return (-d.a).abs(); }},
      {"maximum", [](const In& d) { return d.a.maximum(d.b); }},
      {"minimum", [](const In& d) { return d.a.minimum(d.row); }},
      {"maximum_nan", [](const In& d) { return (d.a / d.a.mul(0)).maximum(d.b); }},
      {"reciprocal", [](const In& d) { return d.pos.reciprocal(); }},
      loose("exp", [](const In& d) { return d.a.exp(); }),
      loose("log", [](const In& d) { return d.pos.log(); }),
      loose("sqrt", [](const In& d) { return d.pos.sqrt(); }),
      loose("sin_cos", [](const In& d) { return d.a.sin() + d.b.cos(); }),
      loose("pow", [](const In& d) { return d.pos.pow(d.b); }),
      loose("sigmoid_tanh_gelu", [](const In& d) { return d.a.sigmoid() + d.b.tanh() + d.a.gelu(); }),
      {"relu", [](const In& d) { return d.a.relu(); }},
      {"trunc_floor_ceil_round",
       [](const In& d) { return d.a.mul(3).trunc() + d.a.mul(3).floor() * 2 + d.b.ceil() * 4 + d.b.round(); }},
      {"where_cmp", [](const In& d) { return (d.a < d.b).where(d.a, d.b * 2); }},
      {"eq_ne", [](const In& d) { return (d.a.mul(2).round() == d.b.mul(2).round()).logical_or(d.a != d.a); }},
      {"isnan_isinf", [](const In& d) { return (d.a / d.a.mul(0)).isnan().logical_xor((d.a / 0.0f).isinf()); }},
      // int32: exact, wrapping, C division
      {"int_add_sub_mul", [](const In& d) { return d.ia * d.ia * d.ia * d.ia * d.ia * d.ia + d.ib - d.ia; }},
      {"int_div_mod", [](const In& d) { return d.ia.div(d.ib, Rounding::Trunc) + d.ia % d.ib * 100; }},  // x/0 undefined
      {"int_floor_divide", [](const In& d) { return d.ia.floor_divide(d.ib); }},
      {"int_max_min", [](const In& d) { return d.ia.maximum(d.ib) * 3 + d.ia.minimum(d.ib); }},
      {"int_bitwise", [](const In& d) { return (d.ia & d.ib) + (d.ia | 7) * 2 + (d.ia ^ d.ib); }},
      {"int_shifts", [](const In& d) { return (d.ia << d.sh) + (d.ia >> d.sh); }},  // shifts >= 32 undefined
      {"int_neg_cmp", [](const In& d) { return (-d.ia).lt(d.ib).where(d.ia, -d.ib); }},
      {"int_overflow", [](const In& d) { return (d.ia + 2147483600) * 3; }},
      // casts and other dtypes
      {"cast_float_int", [](const In& d) { return d.a.mul(10).cast(dtypes::int32); }},
      {"cast_int_float", [](const In& d) { return d.ia.cast(dtypes::float32) / 7.0f; }},
      {"cast_bool",
       [](const In& d) {
         return d.a.cast(dtypes::bool_).cast(dtypes::int32) + d.ia.cast(dtypes::bool_).cast(dtypes::int32);
       }},
      {"cast_int8_wrap", [](const In& d) { return d.ia.mul(9).cast(dtypes::int8); }},
      {"uint8_arith", [](const In& d) { return d.ia.cast(dtypes::uint8) * 7 + 200; }},
      {"int64_arith", [](const In& d) { return d.ia.cast(dtypes::int64) * 100000 * 100000 + d.ib; }, 0, 0, "int64"},
      {"float64", [](const In& d) { return d.a.cast(dtypes::float64) * d.b.cast(dtypes::float64) + 1e-12; }, 1e-12, 1e-15,
       "float64"},
      {"bitcast", [](const In& d) { return d.a.bitcast(dtypes::int32) ^ 1; }},
      {"float16", [](const In& d) { return d.a.cast(dtypes::float16) + 1; }, 1e-3, 1e-3, "float16"},
      // movement
      {"permute",
       [](const In& d) {
         return d.a.permute({1, 0}).contiguous();
       }},
      {"pad",
       [](const In& d) {
         return d.a.pad({{1, 2}, {0, 3}}, 0);
       }},
      {"pad_value",
       [](const In& d) {
         return d.a.pad({{1, 0}, {2, 1}}, 7.5f) * 2;
       }},
      {"shrink_flip",
       [](const In& d) {
         return d.a.shrink({{1, 3}, {0, 4}}).flip({0, 1});
       }},
      {"chain",
       [](const In& d) {
         return d.a.reshape({2, 10}).permute({1, 0}).pad({{1, 1}, {0, 2}}).flip({0}).shrink({{2, 9}, {1, 4}}) +
                1;
       }},
      {"expand",
       [](const In& d) {
         return d.row.reshape({1, 5}).expand({3, 5}) * randf(d.dev, {3, 1}, 8);
       }},
      {"cat_repeat",
       [](const In& d) {
         return sluice::cat({d.a, d.b}, 1).repeat({2, 1});
       }},
      // reductions
      {"sum_all", [](const In& d) { return d.a.sum(); }},
      {"sum_axis0", [](const In& d) { return d.a.sum({0}); }},
      {"sum_axis1_keepdim", [](const In& d) { return d.a.sum({1}, true); }},
      {"max_axis", [](const In& d) { return d.a.max({1}); }},
      {"min_all", [](const In& d) { return d.a.min(); }},
      {"prod", [](const In& d) { return d.pos.prod({0}); }},
      {"mean_3d",
       [](const In& d) {
         return randf(d.dev, {3, 4, 5}, 9).mean({0, 2});
       }},
      {"int_sum_max", [](const In& d) { return d.ia.sum({1}) + d.ia.max({1}); }},
      // A long reduction: 256 work-groups' items reduce 65540 elements each.
      {"sum_long_loop",
       [](const In& d) {
         return Tensor::from(std::vector<int32_t>(size_t(256 * 65540), 1), {256 * 65540}, d.dev).sum();
       }},
      {"sum_empty",
       [](const In& d) {
         return Tensor::zeros({3, 0}, dtypes::float32, d.dev).sum({1});
       }},
      {"reduce_then_ew", [](const In& d) { return (d.a - d.a.max({1}, true)).exp().sum({1}); }},
      loose("softmax", [](const In& d) { return d.a.softmax(); }),
      loose("log_softmax", [](const In& d) { return d.a.log_softmax(0); }),
      loose("layernorm",
            [](const In& d) {
              return randf(d.dev, {3, 16}, 10).layernorm();
            }),
      loose("matmul",
            [](const In& d) {
              return randf(d.dev, {8, 16}, 11).matmul(randf(d.dev, {16, 4}, 12));
            }),
      loose("matmul_batched",
            [](const In& d) {
              return randf(d.dev, {2, 3, 8}, 13).matmul(randf(d.dev, {8, 5}, 14));
            }),
      loose("conv2d",
            [](const In& d) {
              return randf(d.dev, {1, 2, 5, 5}, 15).conv2d(randf(d.dev, {3, 2, 3, 3}, 16), {.padding = {1}});
            }),
      loose("sdpa_causal",
            [](const In& d) {
              Tensor q = randf(d.dev, {1, 2, 8, 4}, 17), k = randf(d.dev, {1, 2, 8, 4}, 18), v2 = randf(d.dev, {1, 2, 8, 4}, 19);
              return q.scaled_dot_product_attention(k, v2, std::nullopt, true);
            }),
      loose("mlp_gelu",
            [](const In& d) {
              return (randf(d.dev, {4, 8}, 20).matmul(randf(d.dev, {8, 16}, 21)) + 1).gelu().matmul(randf(d.dev, {16, 3}, 22));
            }),
      loose("cumsum", [](const In& d) { return d.a.cumsum(1); }),
      {"argmax", [](const In& d) { return d.a.argmax(1); }},
      {"argmax_nan",  // the first NaN is the largest, whatever the device's max does with NaN
       [](const In& d) {
         const float nan = std::numeric_limits<float>::quiet_NaN();
         Tensor x = Tensor::from({1.f, nan, 3.f, nan, 2.f, 0.f, 5.f, -1.f, 2.f}, {3, 3}, d.dev);
         return sluice::stack({x.argmax(1), x.argmin(1), x.argmax(0)});
       }},
      {"arange", [](const In& d) { return Tensor::arange(0, 10, 3, std::nullopt, d.dev) * 2; }},
      {"arange_float", [](const In& d) { return Tensor::arange(0.5, 4, 0.25, std::nullopt, d.dev); }},
      loose("rand",
            [](const In& d) {
              return Tensor::rand({3, 7}, 42, dtypes::float32, d.dev);
            }),
      loose(
          "randn", [](const In& d) { return Tensor::randn({16}, 7, dtypes::float32, d.dev); }, 1e-3),
      // more activations
      loose("activations_a",
            [](const In& d) {
              return d.a.relu6() + d.a.leaky_relu(0.1) + d.a.elu() + d.a.celu(0.5) + d.a.selu() + d.a.quick_gelu();
            }),
      loose("activations_b",
            [](const In& d) {
              return d.a.silu() + d.a.mish() + d.a.softplus() + d.a.softsign() + d.a.logsigmoid() +
                     d.a.hardsigmoid() + d.a.hardswish() + d.a.hardtanh() + d.a.erf();
            }),
      loose("elementwise_more",
            [](const In& d) {
              return d.a.sign() + d.a.square() + d.pos.rsqrt() + d.a.exp2() + d.pos.log2() + d.a.mul(0.3).tan() +
                     d.a.clip(-1, 0.5) + d.a.lerp(d.b, 0.25) + d.pos.mod(0.7f);
            }),
      // more reductions
      loose("var_std", [](const In& d) { return d.a.var({1}) + d.a.std({0}).sum(); }),
      {"any_all", [](const In& d) { return (d.a > 1).any({1}).logical_and((d.a > -3).all({1})); }},
      {"argmin", [](const In& d) { return d.a.argmin(0); }},
      loose("logsumexp", [](const In& d) { return d.a.logsumexp({1}); }),
      loose("cumprod_cummax", [](const In& d) { return d.pos.mul(0.5f).cumprod(1) + d.a.cummax(1); }),
      // more movement
      {"squeeze_unsqueeze_transpose",
       [](const In& d) { return d.a.unsqueeze(0).unsqueeze(2).squeeze().transpose().contiguous(); }},
      {"roll_tril_triu", [](const In& d) { return d.a.roll({1, -2}, {0, 1}) + d.a.tril() * 2 + d.a.triu(1) * 3; }},
      {"split_chunk_stack",
       [](const In& d) {
         std::vector<Tensor> p = d.a.split(2, 1), c = d.b.chunk(2, 0);
         return p[0].stack({p[1]}, 0).sum({0}) + c[0].sum() + c[1].max();
       }},
      {"pad_modes",
       [](const In& d) {
         return d.a.pad({{1, 1}, {2, 2}}, 0, PadMode::Reflect) + d.a.pad({{1, 1}, {2, 2}}, 0, PadMode::Replicate) +
                d.a.pad({{1, 1}, {2, 2}}, 0, PadMode::Circular);
       }},
      {"slice_select",
       [](const In& d) { return d.a.slice({Slice{1, std::nullopt, 2}, Slice{std::nullopt, 4, 1}}) + d.a.select(1, 2).unsqueeze(1).shrink({{0, 2}, {0, 1}}); }},
      // indexing
      {"gather",
       [](const In& d) {
         return d.a.gather(1, Tensor::from(std::vector<int32_t>{0, 4, 2, 1, 3, 3, 0, 1}, {4, 2}, d.dev));
       }},
      {"index_select",
       [](const In& d) { return d.a.index_select(0, Tensor::from(std::vector<int32_t>{3, -1, 0}, {3}, d.dev)); }},
      {"one_hot_masked_fill",
       [](const In& d) {
         return Tensor::from(std::vector<int32_t>{0, 3, 1}, {3}, d.dev).one_hot(5) + d.ia.masked_fill(d.a > 0, 9).sum({0});
       }},
      // linear algebra and nn
      loose("einsum",
            [](const In& d) { return Tensor::einsum("ij,kj->ik", {d.a, d.b}) + Tensor::einsum("ij->j", {d.a}).sum(); }),
      loose("dot", [](const In& d) { return d.a.dot(d.b.transpose()); }),
      loose("conv_transpose2d",
            [](const In& d) {
              return randf(d.dev, {1, 2, 4, 4}, 23).conv_transpose2d(randf(d.dev, {2, 3, 3, 3}, 24), {.stride = {2}});
            }),
      loose("pools",
            [](const In& d) {
              Tensor x = randf(d.dev, {1, 2, 6, 6}, 25);
              return x.max_pool2d() + x.avg_pool2d();
            }),
      loose("interpolate",
            [](const In& d) { return randf(d.dev, {1, 1, 3, 4}, 26).interpolate({5, 7}, InterpolateMode::Linear); }),
      loose("rmsnorm_batchnorm",
            [](const In& d) {
              Tensor x = randf(d.dev, {2, 3, 4}, 27);
              return x.rmsnorm() + x.batchnorm(randf(d.dev, {3}, 28), randf(d.dev, {3}, 29), randf(d.dev, {3}, 30),
                                               randf(d.dev, {3}, 31, 0.5f, 2));
            }),
      // losses
      loose("cross_entropy",
            [](const In& d) {
              Tensor y = Tensor::from(std::vector<int32_t>{1, 0, 4, 2}, {4}, d.dev);
              return d.a.cross_entropy(y) + d.a.sparse_categorical_crossentropy(y, -1, 0.1) +
                     d.a.log_softmax().nll_loss(y);
            }),
      loose("binary_cross_entropy",
            [](const In& d) {
              Tensor p = d.a.sigmoid(), y = (d.b > 0).cast(dtypes::float32);
              return p.binary_cross_entropy(y) + d.a.binary_cross_entropy_with_logits(y);
            }),
      // creation and random
      loose("creation",
            [](const In& d) {
              return Tensor::full({4, 5}, 2.5, std::nullopt, d.dev) + Tensor::eye(4, 5, dtypes::float32, d.dev) +
                     Tensor::linspace(0, 1, 5, dtypes::float32, d.dev) + d.a.ones_like();
            }),
      loose("random_more",
            [](const In& d) {
              return Tensor::uniform({6}, -1, 1, 3, dtypes::float32, d.dev) +
                     Tensor::normal({6}, 2, 0.5, 4, dtypes::float32, d.dev) +
                     Tensor::randint({6}, 0, 10, 5, dtypes::int32, d.dev).cast(dtypes::float32);
            }, 1e-3),
  };
  return v;
}

}  // namespace

std::vector<OpCase> op_composites() {
  std::vector<OpCase> out;
  for (Composite& c : composites()) {
    auto f = std::move(c.build);
    out.push_back({"ops/" + c.name, "ops/composite", [f](const std::string& d) { return f(In(d)); }, c.rtol,
                   c.atol, false, c.needs});
  }
  return out;
}

}  // namespace sluice::conformance
