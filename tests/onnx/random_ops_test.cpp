// The ONNX random ops (frontend/onnx/ops_random.cpp, training Dropout) on every device present. Their
// numbers are not numpy's, so the suite's cases are skipped (runtime/expectations.cpp) and these tests
// check the distributions instead: 100,000 draws whose mean, variance, range and frequencies must lie
// within 6 standard errors of the distribution's (a false alarm about once in 10^8 runs per check), and
// that a seed reproduces its numbers while an unseeded op draws new ones on every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"
#include "frontend/onnx/model.h"
#include "runtime/device.h"
#include "tests/onnx/model_builder.h"

namespace sluice::onnx {
namespace {

using test::attr;
using test::attr_f;
using test::ModelBuilder;
using P = ::onnx::TensorProto;

constexpr int64_t kDraws = 100000;

struct Stats {
  double mean = 0, var = 0, min = INFINITY, max = -INFINITY;
};
Stats stats(const std::vector<double>& v) {
  Stats s;
  for (double x : v) s.mean += x, s.min = std::min(s.min, x), s.max = std::max(s.max, x);
  s.mean /= double(v.size());
  for (double x : v) s.var += (x - s.mean) * (x - s.mean);
  s.var /= double(v.size() - 1);
  return s;
}
// 6 standard errors of a mean of n draws with variance `var`.
double bound(double var, int64_t n) { return 6 * std::sqrt(var / double(n)); }

std::vector<double> values(const Value& v) { return v.tensor().cast(dtypes::float64).to_vector<double>(); }

// One op `op` with no inputs, output y of dtype `elem`; `set` adds the attributes.
template <class F>
Model source_model(const std::string& dev, const std::string& op, int elem, F set) {
  ModelBuilder mb(15);
  auto g = mb.graph();
  set(g.node(op, {}, {"y"}, "r"));
  g.output_any("y", elem);
  return Model::from_bytes(mb.bytes(), op + ".onnx", "", {.device = dev});
}

class OnnxRandom : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const DeviceInfo& d : list_devices())
      if (d.name == GetParam() && !d.available) GTEST_SKIP() << GetParam() << ": " << d.reason;
  }
  const std::string& dev() const { return GetParam(); }
};

TEST_P(OnnxRandom, UniformFillsItsRangeEvenly) {
  Model m = source_model(dev(), "RandomUniform", P::FLOAT, [](auto* n) {
    attr(n, "shape", std::vector<int64_t>{kDraws / 100, 100});
    attr_f(n, "low", -2), attr_f(n, "high", 3), attr_f(n, "seed", 7);
  });
  Value y = m.run({}).at(0);
  EXPECT_EQ(y.tensor().dtype(), dtypes::float32);
  EXPECT_EQ(y.tensor().shape(), (Shape{kDraws / 100, 100}));
  Stats s = stats(values(y));
  const double var = 25.0 / 12;  // (high - low)^2 / 12
  EXPECT_NEAR(s.mean, 0.5, bound(var, kDraws));
  EXPECT_NEAR(s.var, var, bound(std::pow(5.0, 4) / 180, kDraws));  // Var((x - mu)^2) = (h - l)^4 / 180
  EXPECT_GE(s.min, -2);
  EXPECT_LT(s.max, 3);
  EXPECT_LT(s.min, -1.99);  // both ends are reached
  EXPECT_GT(s.max, 2.99);
}

TEST_P(OnnxRandom, NormalHasItsMeanAndScale) {
  Model m = source_model(dev(), "RandomNormal", P::FLOAT, [](auto* n) {
    attr(n, "shape", std::vector<int64_t>{kDraws});
    attr_f(n, "mean", 1), attr_f(n, "scale", 2), attr_f(n, "seed", 3);
  });
  std::vector<double> v = values(m.run({}).at(0));
  Stats s = stats(v);
  EXPECT_NEAR(s.mean, 1, bound(4, kDraws));
  EXPECT_NEAR(s.var, 4, bound(2 * 16, kDraws));  // Var((x - mu)^2) = 2 sigma^4
  // The shape, not only the moments: P(|x - mean| < scale) = erf(1 / sqrt 2) = 0.6827.
  const double within =
      double(std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x - 1) < 2; }));
  EXPECT_NEAR(within / kDraws, std::erf(1 / std::sqrt(2.0)), bound(0.6827 * 0.3173, kDraws));
}

// Bernoulli of a (2, kDraws / 2) input whose rows are p = 0.2 and p = 0.9, plus p = 0 and p = 1 exactly.
TEST_P(OnnxRandom, BernoulliOnesComeAtTheirProbability) {
  ModelBuilder mb(15);
  auto g = mb.graph();
  g.input("p", P::FLOAT, {2, kDraws / 2});
  attr_f(g.node("Bernoulli", {"p"}, {"y"}), "seed", 11);
  g.output("y", P::FLOAT, {2, kDraws / 2});
  Model m = Model::from_bytes(mb.bytes(), "bernoulli.onnx", "", {.device = dev()});
  std::vector<float> p(size_t(kDraws), 0.2f);
  std::fill(p.begin() + kDraws / 2, p.end(), 0.9f);
  p[0] = 0, p[1] = 1;
  std::vector<double> y = values(m.run({{"p", Tensor::from(p, {2, kDraws / 2}, dev())}}).at(0));
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 1);
  for (int row = 0; row < 2; ++row) {
    const auto first = y.begin() + row * kDraws / 2 + 2;  // past the two fixed ones
    const double n = double(kDraws / 2 - 2), q = row == 0 ? 0.2 : 0.9;
    EXPECT_TRUE(std::all_of(first, first + long(n), [](double v) { return v == 0 || v == 1; }));
    EXPECT_NEAR(std::accumulate(first, first + long(n), 0.0) / n, q, bound(q * (1 - q), int64_t(n))) << row;
  }
}

// Multinomial: kDraws / 2 samples from each of two rows of log-probabilities.
TEST_P(OnnxRandom, MultinomialSamplesClassesAtTheirProbabilities) {
  ModelBuilder mb(15);
  auto g = mb.graph();
  g.input("logits", P::FLOAT, {2, 3});
  auto* n = g.node("Multinomial", {"logits"}, {"y"});
  attr(n, "sample_size", kDraws / 2), attr_f(n, "seed", 5);
  g.output("y", P::INT32, {2, kDraws / 2});
  Model m = Model::from_bytes(mb.bytes(), "multinomial.onnx", "", {.device = dev()});
  const std::vector<std::vector<double>> probs = {{0.1, 0.2, 0.7}, {0.5, 0.25, 0.25}};
  std::vector<float> logits;
  for (const auto& row : probs)
    for (double q : row) logits.push_back(float(std::log(q)) + 3);  // unnormalized: any offset
  Value y = m.run({{"logits", Tensor::from(logits, {2, 3}, dev())}}).at(0);
  std::vector<int32_t> k = y.tensor().to_vector<int32_t>();
  for (size_t row = 0; row < 2; ++row) {
    for (int32_t cls = 0; cls < 3; ++cls) {
      const auto first = k.begin() + long(row) * kDraws / 2;
      const double freq = double(std::count(first, first + kDraws / 2, cls)) / double(kDraws / 2);
      const double q = probs[row][size_t(cls)];
      EXPECT_NEAR(freq, q, bound(q * (1 - q), kDraws / 2)) << "row " << row << " class " << cls;
    }
  }
  EXPECT_TRUE(std::all_of(k.begin(), k.end(), [](int32_t v) { return v >= 0 && v < 3; }));
}

// Training Dropout with ratio 0.25 over ones: a quarter become 0, the rest 1 / 0.75, and the mask says
// which were kept.
TEST_P(OnnxRandom, TrainingDropoutDropsItsRatioAndRescales) {
  ModelBuilder mb(13);
  auto g = mb.graph();
  g.input("x", P::FLOAT, {kDraws}).input("training", P::BOOL, {});
  g.floats("ratio", {0.25f}, {});
  attr_f(g.node("Dropout", {"x", "ratio", "training"}, {"y", "mask"}), "seed", 2);
  g.output("y", P::FLOAT, {kDraws}).output("mask", P::BOOL, {kDraws});
  Model m = Model::from_bytes(mb.bytes(), "dropout.onnx", "", {.device = dev()});
  std::vector<Value> out = m.run({{"x", Tensor::ones({kDraws}, dtypes::float32, dev())},
                                  {"training", Tensor::full({}, true, dtypes::bool_, dev())}});
  std::vector<double> y = values(out.at(0)), mask = values(out.at(1));
  int64_t kept = 0;
  for (int64_t i = 0; i < kDraws; ++i) {
    ASSERT_EQ(y[size_t(i)], mask[size_t(i)] ? double(1 / 0.75f) : 0) << i;
    kept += mask[size_t(i)] != 0;
  }
  EXPECT_NEAR(double(kept) / kDraws, 0.75, bound(0.75 * 0.25, kDraws));
  // Inference mode is the identity.
  out = m.run({{"x", Tensor::ones({kDraws}, dtypes::float32, dev())},
               {"training", Tensor::full({}, false, dtypes::bool_, dev())}});
  Stats s = stats(values(out.at(0)));
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 1);
}

// A seed gives the same numbers in another model and on every run (which replays); another seed gives
// others.
TEST_P(OnnxRandom, ASeedReproducesItsNumbers) {
  auto uniform = [&](float seed) {
    return source_model(dev(), "RandomUniform", P::FLOAT, [&](auto* n) {
      attr(n, "shape", std::vector<int64_t>{1000});
      attr_f(n, "seed", seed);
    });
  };
  Model a = uniform(42), b = uniform(42), c = uniform(43);
  std::vector<double> first = values(a.run({}).at(0));
  std::vector<double> again = values(a.run({}).at(0));
  EXPECT_TRUE(a.last_run().replayed) << a.last_run().not_captured;
  EXPECT_EQ(again, first);
  EXPECT_EQ(values(b.run({}).at(0)), first);
  std::vector<double> other = values(c.run({}).at(0));
  int64_t same = 0;
  for (size_t i = 0; i < first.size(); ++i) same += first[i] == other[i];
  EXPECT_LT(same, 5);  // 24-bit values: a coincidence is about 1000 / 2^24 likely
}

// Without a seed every run draws new numbers, so no run is replayed; two nodes in one run differ too.
TEST_P(OnnxRandom, WithoutASeedEveryRunDrawsNewNumbers) {
  ModelBuilder mb(15);
  auto g = mb.graph();
  attr(g.node("RandomNormal", {}, {"y"}), "shape", std::vector<int64_t>{1000});
  attr(g.node("RandomNormal", {}, {"z"}), "shape", std::vector<int64_t>{1000});
  g.output_any("y", P::FLOAT).output_any("z", P::FLOAT);
  Model m = Model::from_bytes(mb.bytes(), "unseeded.onnx", "", {.device = dev()});
  std::vector<Value> r1 = m.run({});
  std::vector<double> y1 = values(r1.at(0)), z1 = values(r1.at(1));
  EXPECT_NE(m.last_run().not_captured.find("unseeded"), std::string::npos) << m.last_run().not_captured;
  std::vector<double> y2 = values(m.run({}).at(0));
  EXPECT_FALSE(m.last_run().replayed);
  EXPECT_NE(y1, y2);
  EXPECT_NE(y1, z1);
}

INSTANTIATE_TEST_SUITE_P(Devices, OnnxRandom, ::testing::Values("CPU", "VULKAN", "CL"),
                         [](const auto& info) { return info.param; });

// The output dtype: `dtype` when given, else float (RandomUniform/RandomNormal) or the input's (the
// Like forms, Bernoulli); integer outputs of Bernoulli hold 0 and 1. CPU only: float16 and float64 are
// not on every device.
TEST(OnnxRandomDTypes, FollowTheDTypeAttributeOrTheInput) {
  ModelBuilder mb(15);
  auto g = mb.graph();
  g.input("h", P::FLOAT16, {4, 5}).input("p", P::DOUBLE, {64});
  auto* n = g.node("RandomUniform", {}, {"u"});
  attr(n, "shape", std::vector<int64_t>{3}), attr(n, "dtype", int64_t(P::DOUBLE));
  g.node("RandomNormalLike", {"h"}, {"nl"});
  attr(g.node("RandomUniformLike", {"h"}, {"ul"}), "dtype", int64_t(P::FLOAT));
  g.node("Bernoulli", {"p"}, {"b"});
  attr(g.node("Bernoulli", {"p"}, {"bi"}), "dtype", int64_t(P::INT32));
  attr(g.node("Multinomial", {"p2"}, {"mi"}), "dtype", int64_t(P::INT64));
  g.floats("p2", {0, 0}, {1, 2});
  g.output("u", P::DOUBLE, {3}).output("nl", P::FLOAT16, {4, 5}).output("ul", P::FLOAT, {4, 5});
  g.output("b", P::DOUBLE, {64}).output("bi", P::INT32, {64}).output("mi", P::INT64, {1, 1});
  Model m = Model::from_bytes(mb.bytes(), "dtypes.onnx", "", {.device = "CPU"});
  std::vector<Value> out = m.run({{"h", Tensor::zeros({4, 5}, dtypes::float16, "CPU")},
                                  {"p", Tensor::full({64}, 0.5, dtypes::float64, "CPU")}});
  EXPECT_EQ(out.at(0).tensor().dtype(), dtypes::float64);
  EXPECT_EQ(out.at(1).tensor().dtype(), dtypes::float16);
  EXPECT_EQ(out.at(2).tensor().dtype(), dtypes::float32);
  EXPECT_EQ(out.at(3).tensor().dtype(), dtypes::float64);
  EXPECT_EQ(out.at(4).tensor().dtype(), dtypes::int32);
  EXPECT_EQ(out.at(5).tensor().dtype(), dtypes::int64);
  for (double v : values(out.at(4))) EXPECT_TRUE(v == 0 || v == 1) << v;
}

TEST(OnnxRandomDTypes, AnIntegerDTypeForUniformIsAClearError) {
  Model m = source_model("CPU", "RandomUniform", P::INT32, [](auto* n) {
    attr(n, "shape", std::vector<int64_t>{3}), attr(n, "dtype", int64_t(P::INT32));
  });
  try {
    m.run({});
    FAIL() << "no error";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype must be a float type, got int32"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice::onnx
