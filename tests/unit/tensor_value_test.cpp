// Values of the Tensor API's less obvious decompositions, through the reference evaluator against
// hand-computed results: Python-style mod and floor division, round half to even, argmax ties, cumulative
// ops (both stages), windows (conv, pool), slicing, pad modes, one-hot indexing and the random generator.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.h"
#include "runtime/reference.h"
#include "tests/unit/host_array_expect.h"

using namespace sluice;
namespace d = sluice::dtypes;
using testing_eval::floats;
using testing_eval::ints;

namespace {
Tensor f64(const std::vector<double>& v, const Shape& shape) { return Tensor::from(v, shape, "CPU"); }
Tensor f64(const std::vector<double>& v) { return f64(v, {int64_t(v.size())}); }
Tensor i32(const std::vector<int32_t>& v, const Shape& shape) { return Tensor::from(v, shape, "CPU"); }
Tensor i32(const std::vector<int32_t>& v) { return i32(v, {int64_t(v.size())}); }
Tensor iota(const Shape& shape) {  // 0, 1, 2, ... as float64
  std::vector<double> v(size_t(prod(shape)));
  std::iota(v.begin(), v.end(), 0.0);
  return f64(v, shape);
}
}  // namespace

TEST(TensorValue, ModAndFloorDivisionFollowTheDivisorsSign) {
  Tensor a = i32({-7, 7, -7, 7, 6}), b = i32({3, 3, -3, -3, -3});
  EXPECT_TRUE(ints(reference(a % b), d::int32, {5}, {2, 1, -1, -2, 0}));
  EXPECT_TRUE(ints(reference(a.floor_divide(b)), d::int32, {5}, {-3, 2, 2, -3, -2}));
  EXPECT_TRUE(ints(reference(a.div(b, Rounding::Trunc)), d::int32, {5}, {-2, 2, 2, -2, -2}));
  EXPECT_TRUE(floats(reference(f64({-7.5, 7.5}) % f64({2, -2})), d::float64, {2}, {0.5, -0.5}));
  EXPECT_TRUE(floats(reference(f64({-7.5, 7.5}).floor_divide(2)), d::float64, {2}, {-4, 3}));
  EXPECT_TRUE(ints(reference(Tensor::from(std::vector<uint8_t>{250}, {1}, "CPU") % 7), d::uint8, {1}, {5}));
}

TEST(TensorValue, RoundHalfToEven) {
  EXPECT_TRUE(
      floats(reference(f64({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 2.4, -2.6, 1e300}).round()),
             d::float64, {10}, {0, 2, 2, 0, -2, -2, 0, 2, -3, 1e300}));
  // floor(x + 0.5) would round this up: 0.49999997f + 0.5f is 1 in float32.
  EXPECT_TRUE(floats(reference(Tensor::from(std::vector<float>{0.49999997f, 3.5f}, {2}, "CPU").round()),
                     d::float32, {2}, {0, 4}));
  EXPECT_TRUE(floats(reference(f64({-1.5, 1.5, -0.25}).floor()), d::float64, {3}, {-2, 1, -1}));
  EXPECT_TRUE(floats(reference(f64({-1.5, 1.5, -0.25}).ceil()), d::float64, {3}, {-1, 2, -0.0}));
}

TEST(TensorValue, ArgmaxTakesTheFirstOfTies) {
  EXPECT_TRUE(ints(reference(f64({1, 3, 3, 2}).argmax()), d::int32, {}, {1}));
  Tensor m = f64({5, 1, 5, 0, 0, 0}, {2, 3});
  EXPECT_TRUE(ints(reference(m.argmax(1)), d::int32, {2}, {0, 0}));
  EXPECT_TRUE(ints(reference(m.argmax(0, true)), d::int32, {1, 3}, {0, 0, 0}));
  EXPECT_TRUE(ints(reference(m.argmin(-1)), d::int32, {2}, {1, 0}));
  EXPECT_TRUE(ints(reference(i32({2, 9, 9, 4}).argmax()), d::int32, {}, {1}));
}

TEST(TensorValue, CumulativeOps) {
  EXPECT_TRUE(floats(reference(f64({1, 2, 3, 4}).cumsum()), d::float64, {4}, {1, 3, 6, 10}));
  EXPECT_TRUE(floats(reference(f64({1, 2, 3, 4}).cumprod()), d::float64, {4}, {1, 2, 6, 24}));
  EXPECT_TRUE(floats(reference(f64({1, 3, 2, 5, 4}).cummax()), d::float64, {5}, {1, 3, 3, 5, 5}));
  EXPECT_TRUE(floats(reference(iota({2, 3}).cumsum(1)), d::float64, {2, 3}, {0, 1, 3, 3, 7, 12}));
  EXPECT_TRUE(ints(reference(i32({5, -2}, {2, 1}).cumsum(0)), d::int32, {2, 1}, {5, 3}));
  // Past 512 elements the sum runs in two stages (within blocks of 256, then across blocks).
  std::vector<int64_t> want(1000);
  for (int64_t i = 0; i < 1000; i++) want[size_t(i)] = i * (i + 1) / 2;
  EXPECT_TRUE(ints(reference(Tensor::arange(1000).cumsum()), d::int32, {1000}, want));
  std::vector<int64_t> running(600);
  for (int64_t i = 0; i < 600; i++)
    running[size_t(i)] = i % 7 == 3 ? i : (i == 0 ? 0 : running[size_t(i - 1)]);
  Tensor marks = (Tensor::arange(600) % 7 == 3).where(Tensor::arange(600), 0);
  EXPECT_TRUE(ints(reference(marks.cummax()), d::int32, {600}, running));
}

TEST(TensorValue, ArangeAndRanges) {
  EXPECT_TRUE(ints(reference(Tensor::arange(10, 0, -3)), d::int32, {4}, {10, 7, 4, 1}));
  EXPECT_TRUE(
      floats(reference(Tensor::arange(0, 1, 0.25, d::float64)), d::float64, {4}, {0, 0.25, 0.5, 0.75}));
  auto big = reference(Tensor::arange(1000));
  EXPECT_EQ(big.i[999], 999);
  EXPECT_EQ(std::accumulate(big.i.begin(), big.i.end(), int64_t(0)), 999 * 1000 / 2);
  EXPECT_TRUE(
      ints(reference(Tensor::ones({3, 3}, d::int32).tril()), d::int32, {3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1}));
  EXPECT_TRUE(ints(reference(Tensor::ones({2, 3}, d::int32).triu(1)), d::int32, {2, 3}, {0, 1, 1, 0, 0, 1}));
}

TEST(TensorValue, Conv2d) {
  Tensor x = iota({1, 1, 3, 3}) + 1, w = f64({1, 0, 0, 1}, {1, 1, 2, 2});
  EXPECT_TRUE(floats(reference(x.conv2d(w)), d::float64, {1, 1, 2, 2}, {6, 8, 12, 14}));
  EXPECT_TRUE(floats(reference(x.conv2d(w, {.bias = f64({10}), .stride = {2}, .padding = {1}})), d::float64,
                     {1, 1, 2, 2}, {11, 13, 17, 24}));
  EXPECT_TRUE(floats(reference(x.conv2d(f64({1, 1, 1, 1}, {1, 1, 2, 2}), {.dilation = {2}})), d::float64,
                     {1, 1, 1, 1}, {1 + 3 + 7 + 9}));
  Tensor two = iota({1, 2, 2, 2}) + 1;  // channels {1, 2, 3, 4} and {5, 6, 7, 8}
  EXPECT_TRUE(floats(reference(two.conv2d(f64({2, 3}, {2, 1, 1, 1}), {.groups = 2})), d::float64,
                     {1, 2, 2, 2}, {2, 4, 6, 8, 15, 18, 21, 24}));
  EXPECT_TRUE(
      floats(reference(two.conv2d(f64({1, 1}, {1, 2, 1, 1}))), d::float64, {1, 1, 2, 2}, {6, 8, 10, 12}));
}

TEST(TensorValue, ConvTranspose2d) {
  Tensor x = iota({1, 1, 2, 2}) + 1, w = Tensor::ones({1, 1, 2, 2}, d::float64, "CPU");
  EXPECT_TRUE(
      floats(reference(x.conv_transpose2d(w)), d::float64, {1, 1, 3, 3}, {1, 3, 2, 4, 10, 6, 3, 7, 4}));
  EXPECT_TRUE(floats(reference(x.conv_transpose2d(w, {.stride = {2}})), d::float64, {1, 1, 4, 4},
                     {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  EXPECT_TRUE(floats(reference(x.conv_transpose2d(w, {.padding = {1}})), d::float64, {1, 1, 1, 1}, {10}));
}

TEST(TensorValue, Pools) {
  Tensor x = iota({1, 1, 4, 4});
  EXPECT_TRUE(floats(reference(x.max_pool2d()), d::float64, {1, 1, 2, 2}, {5, 7, 13, 15}));
  EXPECT_TRUE(floats(reference(x.avg_pool2d()), d::float64, {1, 1, 2, 2}, {2.5, 4.5, 10.5, 12.5}));
  EXPECT_TRUE(floats(reference(x.max_pool2d({.kernel = {3}, .stride = {1}, .padding = {1}})), d::float64,
                     {1, 1, 4, 4}, {5, 6, 7, 7, 9, 10, 11, 11, 13, 14, 15, 15, 13, 14, 15, 15}));
  EXPECT_TRUE(floats(reference(-iota({1, 1, 2, 2}).max_pool2d({.kernel = {2}, .padding = {1}})), d::float64,
                     {1, 1, 2, 2}, {0, -1, -2, -3}));  // padding never wins a max
  EXPECT_TRUE(floats(reference(iota({1, 1, 3, 3}).max_pool2d({.kernel = {2}, .ceil_mode = true})), d::float64,
                     {1, 1, 2, 2}, {4, 5, 7, 8}));
  Tensor s = iota({1, 1, 2, 2}) + 1;
  EXPECT_TRUE(floats(reference(s.avg_pool2d({.kernel = {3}, .stride = {1}, .padding = {1}})), d::float64,
                     {1, 1, 2, 2}, {10.0 / 9, 10.0 / 9, 10.0 / 9, 10.0 / 9}));
  EXPECT_TRUE(floats(
      reference(s.avg_pool2d({.kernel = {3}, .stride = {1}, .padding = {1}, .count_include_pad = false})),
      d::float64, {1, 1, 2, 2}, {2.5, 2.5, 2.5, 2.5}));
  EXPECT_TRUE(floats(reference(iota({1, 1, 3, 3}).avg_pool2d({.kernel = {2}, .ceil_mode = true})), d::float64,
                     {1, 1, 2, 2}, {2, 3.5, 6.5, 8}));
}

TEST(TensorValue, SlicesWithSteps) {
  Tensor r = iota({10});
  EXPECT_TRUE(floats(reference(r.slice({{8, 1, -3}})), d::float64, {3}, {8, 5, 2}));
  EXPECT_TRUE(floats(reference(r.slice({{std::nullopt, std::nullopt, 3}})), d::float64, {4}, {0, 3, 6, 9}));
  EXPECT_TRUE(floats(reference(r.slice({{-2, std::nullopt, -4}})), d::float64, {3}, {8, 4, 0}));
  EXPECT_TRUE(floats(reference(iota({3, 4}).slice({{std::nullopt, std::nullopt, 2}, {-1, std::nullopt, -2}})),
                     d::float64, {2, 2}, {3, 1, 11, 9}));
  EXPECT_TRUE(floats(reference(iota({3, 4})[-1]), d::float64, {4}, {8, 9, 10, 11}));
  // Steps longer than the axis take one element, up to the extremes of int64 (Python's answers).
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(floats(reference(r.slice({{std::nullopt, std::nullopt, kMax}})), d::float64, {1}, {0}));
  EXPECT_TRUE(floats(reference(r.slice({{std::nullopt, std::nullopt, kMin}})), d::float64, {1}, {9}));
  EXPECT_TRUE(floats(reference(r.slice({{kMin, kMax, 11}})), d::float64, {1}, {0}));
  EXPECT_TRUE(floats(reference(r.slice({{kMax, kMin, -12}})), d::float64, {1}, {9}));
}

// The widest range randint takes is 2^32; a wider one (up to the whole of int64) is a clear error.
TEST(TensorValue, RandintRangeLimits) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  EXPECT_THROW(Tensor::randint({4}, kMin, kMax, 0, d::int64, "CPU"), ValueError);
  EXPECT_THROW(Tensor::randint({4}, -1, kMax, 0, d::int64, "CPU"), ValueError);
  auto r = reference(Tensor::randint({256}, -(int64_t(1) << 31), int64_t(1) << 31, 3, d::int64, "CPU"));
  EXPECT_EQ(r.i.size(), 256u);
}

TEST(TensorValue, PadModes) {
  Tensor x = f64({1, 2, 3});
  EXPECT_TRUE(
      floats(reference(x.pad({{2, 2}}, 0, PadMode::Reflect)), d::float64, {7}, {3, 2, 1, 2, 3, 2, 1}));
  EXPECT_TRUE(
      floats(reference(x.pad({{2, 2}}, 0, PadMode::Replicate)), d::float64, {7}, {1, 1, 1, 2, 3, 3, 3}));
  EXPECT_TRUE(
      floats(reference(x.pad({{2, 2}}, 0, PadMode::Circular)), d::float64, {7}, {2, 3, 1, 2, 3, 1, 2}));
  EXPECT_TRUE(floats(reference(x.pad({{2, 2}}, 9)), d::float64, {7}, {9, 9, 1, 2, 3, 9, 9}));
  EXPECT_TRUE(floats(reference(x.pad({{-1, 1}})), d::float64, {3}, {2, 3, 0}));
  EXPECT_TRUE(floats(reference(iota({2, 2}).pad({{1, 0}, {0, 1}}, 0, PadMode::Reflect)), d::float64, {3, 3},
                     {2, 3, 2, 0, 1, 0, 2, 3, 2}));
}

TEST(TensorValue, JoinRollRepeat) {
  EXPECT_TRUE(floats(reference(sluice::cat({f64({1, 2}), f64({3})})), d::float64, {3}, {1, 2, 3}));
  EXPECT_TRUE(
      floats(reference(sluice::stack({f64({1, 2}), f64({3, 4})}, 1)), d::float64, {2, 2}, {1, 3, 2, 4}));
  EXPECT_TRUE(floats(reference(f64({1, 2, 3, 4}).roll({1}, {0})), d::float64, {4}, {4, 1, 2, 3}));
  EXPECT_TRUE(floats(reference(f64({1, 2, 3, 4}).roll({-5}, {0})), d::float64, {4}, {2, 3, 4, 1}));
  EXPECT_TRUE(floats(reference(f64({1, 2}).repeat({2, 2})), d::float64, {2, 4}, {1, 2, 1, 2, 1, 2, 1, 2}));
  EXPECT_TRUE(ints(reference(sluice::cat({Tensor::from(std::vector<bool>{true}, {1}, "CPU"),
                                          Tensor::from(std::vector<bool>{false, true}, {2}, "CPU")})),
                   d::bool_, {3}, {1, 0, 1}));
}

TEST(TensorValue, OneHotIndexing) {
  Tensor table = f64({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_TRUE(floats(reference(table[i32({2, 0, -1, 2})]), d::float64, {4, 2}, {5, 6, 1, 2, 5, 6, 5, 6}));
  EXPECT_TRUE(floats(reference(table.index_select(1, i32({1, 1, 0}, {3, 1}))), d::float64, {3, 3, 1},
                     {2, 2, 1, 4, 4, 3, 6, 6, 5}));
  EXPECT_TRUE(floats(reference(f64({1, 2, 3, 4}, {2, 2}).gather(1, i32({0, 0, 1, 0}, {2, 2}))), d::float64,
                     {2, 2}, {1, 1, 4, 3}));
  EXPECT_TRUE(ints(reference(i32({0, 2}).one_hot(3)), d::int32, {2, 3}, {1, 0, 0, 0, 0, 1}));
  // Selection is by WHERE, so NaN and inf elsewhere in the table do not leak into the result.
  Tensor odd = f64({NAN, INFINITY, 7, 8}, {2, 2});
  EXPECT_TRUE(floats(reference(odd[i32({1})]), d::float64, {1, 2}, {7, 8}));
}

TEST(TensorValue, MatmulAndEinsum) {
  Tensor a = iota({2, 3}), b = iota({3, 2});
  std::vector<double> ab{10, 13, 28, 40};
  EXPECT_TRUE(floats(reference(a.matmul(b)), d::float64, {2, 2}, ab));
  EXPECT_TRUE(floats(reference(Tensor::einsum("ij,jk->ik", {a, b})), d::float64, {2, 2}, ab));
  EXPECT_TRUE(floats(reference(Tensor::einsum("ij,jk->ki", {a, b})), d::float64, {2, 2}, {10, 28, 13, 40}));
  EXPECT_TRUE(floats(reference(Tensor::einsum("ij->j", {a})), d::float64, {3}, {3, 5, 7}));
  EXPECT_TRUE(floats(reference(f64({1, 2, 3}).dot(f64({4, 5, 6}))), d::float64, {}, {32}));
}

TEST(TensorValue, StatisticsAndNormalization) {
  Tensor x = f64({1, 2, 3, 4});
  EXPECT_TRUE(floats(reference(x.var()), d::float64, {}, {5.0 / 3}));
  EXPECT_TRUE(floats(reference(x.std({}, false, 0)), d::float64, {}, {std::sqrt(1.25)}));
  EXPECT_TRUE(floats(reference(x.logsumexp()), d::float64, {},
                     {std::log(std::exp(1) + std::exp(2) + std::exp(3) + std::exp(4))}));
  auto ln = reference(x.layernorm(-1, 0));
  EXPECT_TRUE(floats(ln, d::float64, {4},
                     {-3 / std::sqrt(5.0), -1 / std::sqrt(5.0), 1 / std::sqrt(5.0), 3 / std::sqrt(5.0)}));
  EXPECT_TRUE(floats(reference(f64({0, 0}).softmax()), d::float64, {2}, {0.5, 0.5}));
  EXPECT_TRUE(ints(reference(i32({0, 3, 0}).any()), d::bool_, {}, {1}));
  EXPECT_TRUE(ints(reference(i32({0, 3, 0}).all()), d::bool_, {}, {0}));
}

TEST(TensorValue, AttentionAndLosses) {
  // Equal scores: a causal row i averages values 0..i.
  Tensor q = Tensor::zeros({1, 3, 2}, d::float64, "CPU"), v = f64({1, 3, 8}, {1, 3, 1});
  EXPECT_TRUE(floats(reference(q.scaled_dot_product_attention(q, v, std::nullopt, true)), d::float64,
                     {1, 3, 1}, {1, 2, 4}));
  Tensor logits = Tensor::zeros({2, 4}, d::float64, "CPU");
  EXPECT_TRUE(floats(reference(logits.sparse_categorical_crossentropy(i32({0, 3}))), d::float64, {},
                     {std::log(4.0)}));
  EXPECT_TRUE(floats(reference(logits.sparse_categorical_crossentropy(i32({0, 3}), 3, 0, Reduction::None)),
                     d::float64, {2}, {std::log(4.0), 0}));
  EXPECT_TRUE(floats(reference(logits.cross_entropy(i32({1, 2}))), d::float64, {}, {std::log(4.0)}));
  EXPECT_TRUE(floats(reference(logits.log_softmax().nll_loss(i32({1, 2}))), d::float64, {}, {std::log(4.0)}));
  EXPECT_TRUE(floats(reference(f64({0.5}).binary_cross_entropy(f64({1}))), d::float64, {}, {std::log(2.0)}));
  EXPECT_TRUE(floats(reference(f64({0}).binary_cross_entropy_with_logits(f64({1}))), d::float64, {},
                     {std::log(2.0)}));
}

TEST(TensorValue, Interpolate) {
  Tensor x = f64({0, 3}, {1, 2});
  EXPECT_TRUE(
      floats(reference(x.interpolate({4}, InterpolateMode::Nearest)), d::float64, {1, 4}, {0, 0, 3, 3}));
  EXPECT_TRUE(
      floats(reference(x.interpolate({4}, InterpolateMode::Linear, true)), d::float64, {1, 4}, {0, 1, 2, 3}));
  EXPECT_TRUE(floats(reference(x.interpolate({4})), d::float64, {1, 4}, {0, 0.75, 2.25, 3}));
}

TEST(TensorValue, PowSigns) {
  Tensor b = f64({-2, -2, 0, 2, -8});
  EXPECT_TRUE(floats(reference(b.pow(f64({3, 0.5, 0, -1, 1.0 / 3}))), d::float64, {5}, {-8, NAN, 1, 0.5, NAN},
                     1e-12));
  EXPECT_TRUE(ints(reference(i32({-3, 2}).pow(3)), d::int32, {2}, {-27, 8}));
  EXPECT_TRUE(floats(reference(b.pow(-2)), d::float64, {5}, {0.25, 0.25, INFINITY, 0.25, 1.0 / 64}));
}

TEST(TensorValue, ErfAndActivations) {
  EXPECT_TRUE(
      floats(reference(f64({0.5, -1, 0}).erf()), d::float64, {3}, {0.5204998778, -0.8427007929, 0}, 5e-7));
  EXPECT_TRUE(floats(reference(f64({-1, 0, 2, 7}).relu6()), d::float64, {4}, {0, 0, 2, 6}));
  EXPECT_TRUE(floats(reference(f64({-800, 800}).logsigmoid()), d::float64, {2}, {-800, 0}));
}

TEST(TensorValue, RandomNumbers) {
  auto u = reference(Tensor::rand({4096}, 1, d::float32, "CPU"));
  double mean = 0;
  for (double x : u.f) {
    ASSERT_GE(x, 0);
    ASSERT_LT(x, 1);
    mean += x / 4096;
  }
  EXPECT_NEAR(mean, 0.5, 0.02);
  EXPECT_NE(u.f, reference(Tensor::rand({4096}, 2, d::float32, "CPU")).f);
  EXPECT_EQ(u.f, reference(Tensor::rand({4096}, 1, d::float32, "CPU")).f);
  auto n = reference(Tensor::randn({4096}, 3, d::float32, "CPU"));
  double m = 0, sq = 0;
  for (double x : n.f) m += x / 4096, sq += x * x / 4096;
  EXPECT_NEAR(m, 0, 0.06);
  EXPECT_NEAR(std::sqrt(sq - m * m), 1, 0.06);
  auto r = reference(Tensor::randint({2000}, -3, 4, 5, d::int32, "CPU"));
  std::vector<int> seen(7);
  for (int64_t x : r.i) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 4);
    seen[size_t(x + 3)]++;
  }
  for (int c : seen) EXPECT_GT(c, 200);
  for (double x : reference(Tensor::rand({512}, 9, d::float16, "CPU")).f) ASSERT_LT(x, 1);
}
