#include "conformance/grad_cases.h"

namespace sluice::conformance {

// A deterministic draw: distinct values, none on a kink (0, ties), spread over the domain.
std::vector<double> grad_case_values(int64_t n, Domain d, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(s >> 11) / double(1ull << 53);  // [0, 1)
    switch (d) {
      case Domain::Any: x = (u * 2 - 1) * 1.8 + (u < 0.5 ? -0.1 : 0.1); break;
      case Domain::Positive: x = 0.5 + 1.5 * u; break;
      case Domain::Unit: x = (u * 2 - 1) * 0.9; break;
      case Domain::Prob: x = 0.1 + 0.8 * u; break;
    }
  }
  return v;
}

// The index tensors of the cases that take one.
namespace {
Tensor ints(const std::vector<int32_t>& v, const Shape& s, const Tensor& like) {
  return Tensor::from(v, s, like.device());
}
Tensor labels(const Tensor& like) { return ints({2, 0, 3}, {3}, like); }
}  // namespace

const std::vector<GradCase>& grad_cases() {
  using V = const std::vector<Tensor>&;
  const Domain P = Domain::Positive, U = Domain::Unit, Pr = Domain::Prob;
  static const std::vector<GradCase> all = {
      // elementwise, with broadcasting
      {"add", {{{2, 3}}, {{3}}}, [](V x) { return x[0] + x[1]; }},
      {"sub", {{{2, 3}}, {{2, 1}}}, [](V x) { return x[0] - x[1]; }},
      {"mul", {{{2, 3}}, {{3}}}, [](V x) { return x[0] * x[1]; }},
      {"div", {{{2, 3}}, {{3}, P}}, [](V x) { return x[0] / x[1]; }},
      {"neg", {{{5}}}, [](V x) { return -x[0]; }},
      {"exp", {{{5}}}, [](V x) { return x[0].exp(); }},
      {"exp2", {{{5}}}, [](V x) { return x[0].exp2(); }},
      {"log", {{{5}, P}}, [](V x) { return x[0].log(); }},
      {"log2", {{{5}, P}}, [](V x) { return x[0].log2(); }},
      {"sqrt", {{{5}, P}}, [](V x) { return x[0].sqrt(); }},
      {"rsqrt", {{{5}, P}}, [](V x) { return x[0].rsqrt(); }},
      {"reciprocal", {{{5}, P}}, [](V x) { return x[0].reciprocal(); }},
      {"sin", {{{5}}}, [](V x) { return x[0].sin(); }},
      {"cos", {{{5}}}, [](V x) { return x[0].cos(); }},
      {"tan", {{{5}, U}}, [](V x) { return x[0].tan(); }},
      {"pow scalar", {{{5}, P}}, [](V x) { return x[0].pow(2.5); }},
      {"pow tensor", {{{5}, P}, {{5}}}, [](V x) { return x[0].pow(x[1]); }},
      {"square", {{{5}}}, [](V x) { return x[0].square(); }},
      {"abs", {{{6}}}, [](V x) { return x[0].abs(); }},
      {"maximum", {{{6}}, {{6}}}, [](V x) { return x[0].maximum(x[1]); }},
      {"minimum", {{{6}}, {{6}}}, [](V x) { return x[0].minimum(x[1]); }},
      {"where", {{{6}}, {{6}}}, [](V x) { return (x[0] > 0).where(x[0] * 2, x[1]); }},
      {"clip", {{{6}}}, [](V x) { return x[0].clip(-1, 1); }},
      {"lerp", {{{4}}, {{4}}, {{4}, Pr}}, [](V x) { return x[0].lerp(x[1], x[2]); }},
      // activations
      {"relu", {{{6}}}, [](V x) { return x[0].relu(); }},
      {"sigmoid", {{{6}}}, [](V x) { return x[0].sigmoid(); }},
      {"tanh", {{{6}}}, [](V x) { return x[0].tanh(); }},
      {"gelu", {{{6}}}, [](V x) { return x[0].gelu(); }},
      {"quick_gelu", {{{6}}}, [](V x) { return x[0].quick_gelu(); }},
      {"silu", {{{6}}}, [](V x) { return x[0].silu(); }},
      {"elu", {{{6}}}, [](V x) { return x[0].elu(); }},
      {"celu", {{{6}}}, [](V x) { return x[0].celu(0.5); }},
      {"selu", {{{6}}}, [](V x) { return x[0].selu(); }},
      {"leaky_relu", {{{6}}}, [](V x) { return x[0].leaky_relu(0.1); }},
      {"softplus", {{{6}}}, [](V x) { return x[0].softplus(); }},
      {"mish", {{{6}}}, [](V x) { return x[0].mish(); }},
      {"logsigmoid", {{{6}}}, [](V x) { return x[0].logsigmoid(); }},
      {"softsign", {{{6}}}, [](V x) { return x[0].softsign(); }},
      {"hardswish", {{{6}}}, [](V x) { return x[0].hardswish(); }},
      {"hardtanh", {{{6}}}, [](V x) { return x[0].hardtanh(-1, 1); }},
      {"erf", {{{6}}}, [](V x) { return x[0].erf(); }},
      // reductions
      {"sum axis", {{{2, 3, 2}}}, [](V x) { return x[0].sum({1}); }},
      {"mean", {{{2, 3}}}, [](V x) { return x[0].mean({0}, true); }},
      {"prod", {{{2, 3}, P}}, [](V x) { return x[0].prod({1}); }},
      {"max axis", {{{3, 4}}}, [](V x) { return x[0].max({1}); }},
      {"min all", {{{3, 4}}}, [](V x) { return x[0].min(); }},
      {"var", {{{3, 4}}}, [](V x) { return x[0].var({1}); }},
      {"std", {{{3, 4}}}, [](V x) { return x[0].std({0}, true, 0); }},
      {"logsumexp", {{{3, 4}}}, [](V x) { return x[0].logsumexp({1}); }},
      {"softmax", {{{3, 4}}}, [](V x) { return x[0].softmax(-1); }},
      {"log_softmax", {{{3, 4}}}, [](V x) { return x[0].log_softmax(0); }},
      {"cumsum", {{{2, 5}}}, [](V x) { return x[0].cumsum(1); }},
      {"cumprod", {{{5}, P}}, [](V x) { return x[0].cumprod(0); }},
      // movement and indexing
      {"reshape permute",
       {{{2, 3, 2}}},
       [](V x) {
         return x[0].reshape({3, 4}).permute({1, 0}) * 2;
       }},
      {"expand",
       {{{3, 1}}},
       [](V x) {
         return x[0].expand({2, 3, 4});
       }},
      {"pad constant",
       {{{2, 3}}},
       [](V x) {
         return x[0].pad({{1, 0}, {2, 1}}, 0.5);
       }},
      {"pad reflect",
       {{{2, 4}}},
       [](V x) {
         return x[0].pad({{0, 0}, {2, 1}}, 0, PadMode::Reflect);
       }},
      {"shrink flip",
       {{{4, 3}}},
       [](V x) {
         return x[0].shrink({{1, 3}, {0, 2}}).flip({0, 1});
       }},
      {"slice step",
       {{{6, 3}}},
       [](V x) {
         return x[0].slice({{1, std::nullopt, 2}, {std::nullopt, 2, 1}});
       }},
      {"repeat",
       {{{2, 2}}},
       [](V x) {
         return x[0].repeat({2, 3});
       }},
      {"roll", {{{2, 4}}}, [](V x) { return x[0].roll({1}, {1}); }},
      {"cat",
       {{{2, 3}}, {{1, 3}}},
       [](V x) {
         return cat({x[0], x[1] * 3}, 0);
       }},
      {"stack",
       {{{3}}, {{3}}},
       [](V x) {
         return stack({x[0], x[1]}, 1);
       }},
      {"tril", {{{3, 3}}}, [](V x) { return x[0].tril(); }},
      {"gather",
       {{{3, 4}}},
       [](V x) {
         return x[0].gather(1, ints({0, 3, 1, 1, 2, 2}, {3, 2}, x[0]));
       }},
      {"index_select",
       {{{4, 2}}},
       [](V x) {
         return x[0].index_select(0, ints({3, 1, 3}, {3}, x[0]));
       }},
      // linear algebra
      {"matmul", {{{2, 3}}, {{3, 4}}}, [](V x) { return x[0].matmul(x[1]); }},
      {"matmul batched", {{{2, 2, 3}}, {{3, 2}}}, [](V x) { return x[0].matmul(x[1]); }},
      {"einsum",
       {{{2, 3}}, {{3, 2}}},
       [](V x) {
         return Tensor::einsum("ij,jk->ki", {x[0], x[1]});
       }},
      // nn
      {"conv2d",
       {{{1, 2, 4, 4}}, {{3, 2, 3, 3}}, {{3}}},
       [](V x) { return x[0].conv2d(x[1], {.bias = x[2], .stride = {2}, .padding = {1}}); }},
      {"conv2d groups",
       {{{1, 4, 3, 3}}, {{2, 2, 2, 2}}},
       [](V x) { return x[0].conv2d(x[1], {.groups = 2, .dilation = {1}, .padding = {0}}); }},
      {"conv_transpose2d",
       {{{1, 2, 3, 3}}, {{2, 1, 2, 2}}},
       [](V x) { return x[0].conv_transpose2d(x[1], {.stride = {2}}); }},
      {"max_pool2d", {{{1, 1, 4, 4}}}, [](V x) { return x[0].max_pool2d(); }},
      {"avg_pool2d",
       {{{1, 1, 4, 4}}},
       [](V x) { return x[0].avg_pool2d({.kernel = {3}, .stride = {1}, .padding = {1}}); }},
      {"interpolate",
       {{{1, 1, 2, 3}}},
       [](V x) {
         return x[0].interpolate({3, 4});
       }},
      {"layernorm", {{{2, 5}}}, [](V x) { return x[0].layernorm(); }},
      {"rmsnorm", {{{2, 5}}}, [](V x) { return x[0].rmsnorm(); }},
      {"batchnorm",
       {{{2, 3, 2}}, {{3}}, {{3}}, {{3}}, {{3}, P}},
       [](V x) { return x[0].batchnorm(x[1], x[2], x[3], x[4]); }},
      {"attention",
       {{{1, 3, 2}}, {{1, 3, 2}}, {{1, 3, 2}}},
       [](V x) { return x[0].scaled_dot_product_attention(x[1], x[2], std::nullopt, true); }},
      // losses
      {"cross_entropy indices", {{{3, 4}}}, [](V x) { return x[0].cross_entropy(labels(x[0])); }},
      {"cross_entropy smoothed",
       {{{3, 4}}},
       [](V x) { return x[0].cross_entropy(labels(x[0]), Reduction::Sum, 0.1); }},
      {"cross_entropy probabilities", {{{3, 4}}, {{3, 4}, Pr}}, [](V x) { return x[0].cross_entropy(x[1]); }},
      {"nll_loss", {{{3, 4}}}, [](V x) { return x[0].log_softmax().nll_loss(labels(x[0])); }},
      {"sparse_categorical_crossentropy",
       {{{3, 4}}},
       [](V x) { return x[0].sparse_categorical_crossentropy(labels(x[0])); }},
      {"binary_cross_entropy", {{{4}, Pr}, {{4}, Pr}}, [](V x) { return x[0].binary_cross_entropy(x[1]); }},
      {"binary_cross_entropy_with_logits",
       {{{4}}, {{4}, Pr}},
       [](V x) { return x[0].binary_cross_entropy_with_logits(x[1]); }},
  };
  return all;
}

}  // namespace sluice::conformance
