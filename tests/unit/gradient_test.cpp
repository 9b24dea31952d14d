// Gradients (core/gradient, Tensor::backward) against central finite differences, both sides computed in
// float64 by the reference evaluator (runtime/reference.h), which shares no code with the gradient rules:
// for every case, L = sum(f(inputs) * w) with a fixed random w, dL/dx from the gradient graph is compared
// with (L(x + h e_k) - L(x - h e_k)) / 2h for every element k of every input. The cases cover every
// differentiable op family of runtime/tensor.h; ties of max and min, the API's state (requires_grad,
// accumulation, zero_grad, NoGrad, detach) and its errors are tested by value.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>

#include "base/error.h"
#include "conformance/grad_cases.h"
#include "runtime/reference.h"
#include "tests/error_of.h"

namespace sluice {
namespace {

using conformance::Domain;
using conformance::grad_case_values;
using conformance::grad_cases;
using conformance::GradCase;

Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from(v, s, "CPU"); }
Tensor i32(const std::vector<int32_t>& v, const Shape& s) { return Tensor::from(v, s, "CPU"); }

double loss_of(const GradCase& c, const std::vector<std::vector<double>>& values,
               const std::vector<double>& w, Shape* out_shape = nullptr) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < values.size(); ++i) xs.push_back(f64(values[i], c.inputs[i].shape));
  Tensor y = c.f(xs);
  if (out_shape) *out_shape = y.shape();
  if (w.empty()) return 0;
  return reference((y * f64(w, y.shape())).sum()).f.at(0);
}

void check(const GradCase& c) {
  SCOPED_TRACE(c.name);
  std::vector<std::vector<double>> values;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    values.push_back(grad_case_values(prod(c.inputs[i].shape), c.inputs[i].domain, i + 1));
  Shape out;
  loss_of(c, values, {}, &out);
  const std::vector<double> w = grad_case_values(prod(out), Domain::Any, 99);

  std::vector<Tensor> xs;
  for (size_t i = 0; i < values.size(); ++i) xs.push_back(f64(values[i], c.inputs[i].shape));
  const Tensor loss = (c.f(xs) * f64(w, out)).sum();
  const std::vector<Tensor> grads = gradients(loss, xs);
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(grads[i].shape(), xs[i].shape());
    const eval::HostArray g = reference(grads[i]);
    for (size_t k = 0; k < values[i].size(); ++k) {
      auto plus = values, minus = values;
      plus[i][k] += h, minus[i][k] -= h;
      const double fd = (loss_of(c, plus, w) - loss_of(c, minus, w)) / (2 * h);
      EXPECT_NEAR(g.f[k], fd, 1e-6 + 1e-5 * std::abs(fd)) << "input " << i << ", element " << k;
    }
  }
}

class FiniteDifferences : public testing::TestWithParam<size_t> {};
TEST_P(FiniteDifferences, MatchTheGradient) { check(grad_cases()[GetParam()]); }
INSTANTIATE_TEST_SUITE_P(Gradient, FiniteDifferences, testing::Range<size_t>(0, grad_cases().size()),
                         [](const testing::TestParamInfo<size_t>& i) {
                           std::string n = grad_cases()[i.param].name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

std::vector<double> grad_values(const Tensor& loss, const Tensor& x) {
  return reference(gradients(loss, {x}).at(0)).f;
}

TEST(Gradient, MaxReductionSharesTheGradientAmongTiedMaxima) {
  Tensor x = f64({1, 3, 3, 2, 5, 5, 5, 0}, {2, 4});
  EXPECT_EQ(grad_values(x.max({1}).sum(), x),
            (std::vector<double>{0, 0.5, 0.5, 0, 1. / 3, 1. / 3, 1. / 3, 0}));
  EXPECT_EQ(grad_values(x.min({1}).sum(), x), (std::vector<double>{1, 0, 0, 0, 0, 0, 0, 1}));
}

TEST(Gradient, MaximumSplitsTheGradientOfATieInHalf) {
  Tensor a = f64({1, 2, 3}, {3}), b = f64({1, 5, 0}, {3});
  EXPECT_EQ(grad_values(a.maximum(b).sum(), a), (std::vector<double>{0.5, 0, 1}));
  EXPECT_EQ(grad_values(a.maximum(b).sum(), b), (std::vector<double>{0.5, 1, 0}));
}

TEST(Gradient, ACastPassesTheGradientBackInTheSourceDtype) {
  Tensor x = f64({1.5, -2.5}, {2});
  const Tensor g = gradients((x.cast(dtypes::float32) * 3).sum(), {x}).at(0);
  EXPECT_EQ(g.dtype(), dtypes::float64);
  EXPECT_EQ(reference(g).f, (std::vector<double>{3, 3}));
  Tensor i = i32({1, 2}, {2});
  EXPECT_EQ(reference(gradients((i.cast(dtypes::float64) * x).sum(), {x}).at(0)).f,
            (std::vector<double>{1, 2}));
}

TEST(Gradient, TruncationAndComparisonsPassZero) {
  Tensor x = f64({1.5, -2.5}, {2});
  EXPECT_EQ(grad_values((x.floor() + x.round() + x.trunc() + x.ceil()).sum(), x),
            (std::vector<double>{0, 0}));
  EXPECT_EQ(grad_values((x > 0).where(1.0, 2.0).sum() + x.sum(), x), (std::vector<double>{1, 1}));
}

TEST(Backward, AccumulatesIntoTheLeavesThatRequireGradUntilZeroed) {
  Tensor w = f64({1, 2, 3}, {3});
  w.requires_grad(true);
  Tensor other = f64({4, 5, 6}, {3});  // does not require grad: keeps none
  EXPECT_FALSE(w.grad());
  (w * other).sum().backward();
  ASSERT_TRUE(w.grad());
  EXPECT_EQ(reference(*w.grad()).f, (std::vector<double>{4, 5, 6}));
  EXPECT_FALSE(other.grad());
  (w * w).sum().backward();  // adds 2w
  EXPECT_EQ(reference(*w.grad()).f, (std::vector<double>{6, 9, 12}));
  Tensor copy = w;  // shares the gradient
  EXPECT_EQ(reference(*copy.grad()).f, (std::vector<double>{6, 9, 12}));
  w.zero_grad();
  EXPECT_FALSE(copy.grad());
}

TEST(Backward, StopsAtDetachAndInsideNoGrad) {
  Tensor w = f64({1, 2}, {2});
  w.requires_grad(true);
  Tensor y = (w * 3).detach() * w;  // only the second factor carries a gradient
  y.sum().backward();
  EXPECT_EQ(reference(*w.grad()).f, (std::vector<double>{3, 6}));
  w.zero_grad();
  std::optional<Tensor> extra;
  {
    NoGrad ng;
    extra = w * w;  // carries no gradient
  }
  (w * 2 + *extra).sum().backward();
  EXPECT_EQ(reference(*w.grad()).f, (std::vector<double>{2, 2}));
  EXPECT_FALSE(NoGrad::active());
}

TEST(Backward, GivesAGradientForANonScalarOutput) {
  Tensor w = f64({1, 2}, {2});
  w.requires_grad(true);
  (w * w).backward(f64({10, 100}, {2}));
  EXPECT_EQ(reference(*w.grad()).f, (std::vector<double>{20, 400}));
}

TEST(Backward, KeepsTheGradientStateThroughAssign) {
  Tensor w = f64({1, 2}, {2});
  w.requires_grad(true);
  w.assign(w * 0 + f64({3, 4}, {2}));
  (w * w).sum().backward();
  ASSERT_TRUE(w.grad());
  EXPECT_EQ(reference(*w.grad()).f, (std::vector<double>{6, 8}));
}

using testing_errors::error_of;

TEST(Backward, BadUsesAreClearErrors) {
  Tensor w = f64({1, 2}, {2});
  EXPECT_NE(error_of<ValueError>([&] {
              (w * 2).backward();
            }).find("[backward] a tensor of shape (2,) (2 elements) needs"),
            std::string::npos);
  EXPECT_NE(
      error_of<ValueError>([&] { (w * 2).sum().backward(); }).find("[backward] no tensor that requires grad"),
      std::string::npos);
  Tensor n = i32({1, 2}, {2});
  EXPECT_NE(error_of<DTypeError>([&] { n.requires_grad(true); }).find("[requires_grad] only float tensors"),
            std::string::npos);
  EXPECT_NE(error_of<DTypeError>([&] { n.sum().backward(); }).find("[backward] only float tensors"),
            std::string::npos);
  w.requires_grad(true);
  EXPECT_NE(error_of<ShapeError>([&] {
              (w * 2).backward(f64({1, 2, 3}, {3}));
            }).find("[backward] the gradient has shape (3,), the tensor (2,)"),
            std::string::npos);
  EXPECT_NE(
      error_of<DTypeError>([&] { gradients((w * 2).sum(), {n}); }).find("[gradients] only float tensors"),
      std::string::npos);
}

}  // namespace
}  // namespace sluice
