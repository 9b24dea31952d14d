// Large matmuls whose column operand is read from panels (core/schedule/pack.h, on the CPU device) against
// plain loops on the host, on every device present: the result, a second run after the operand changed
// (the panels are packed again), and, on the CPU, that the pack kernel ran and the plain one did not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/device.h"
#include "core/codegen/heuristic.h"
#include "host_values.h"
#include "runtime/device.h"
#include "runtime/realize.h"
#include "runtime/tensor.h"
#include "test_devices.h"

namespace sluice {
namespace {

using testing_devices::devices_with_values;
using testing_values::expect_close;
using testing_values::values;

// relu(a @ b + bias), a: m x k, b: k x n, in double.
std::vector<double> naive(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& bias, int64_t m, int64_t k, int64_t n) {
  std::vector<double> out(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias[size_t(j)];
      for (int64_t r = 0; r < k; ++r) acc += double(a[size_t(i * k + r)]) * b[size_t(r * n + j)];
      out[size_t(i * n + j)] = acc > 0 ? acc : 0;
    }
  return out;
}

class MatmulPanels : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (std::string why = testing_devices::absent(GetParam()); !why.empty()) GTEST_SKIP() << why;
  }
};

// How many kernels the CPU device runs for one matmul: a pack kernel and the matmul where its tile packs.
size_t cpu_kernels() {
  std::unique_ptr<hcq::Device> cpu = cpu::open_device(0);
  return codegen::panel_width(cpu::target(*cpu).caps) > 0 ? 2 : 1;
}

// relu(a @ b + bias) with 256 rows, 512 reduction steps, 288 columns (nine panels of 32, or eighteen of 16),
// the bias and the relu fused after the reduction; `reduce_first` writes the product with the reduction
// axis before the column axis ((a[:, :, None] * b[None]).sum(1)).
void check(const std::string& dev, bool reduce_first) {
  const int64_t m = 256, k = 512, n = 288;
  std::vector<float> a = values(m * k, 1), b = values(k * n, 2), bias = values(n, 3);
  Tensor ta = Tensor::from(a, {m, k}, dev), tb = Tensor::from(b, {k, n}, dev),
         tbias = Tensor::from(bias, {n}, dev);
  tb.realize();
  auto product = [&] {
    Tensor p = reduce_first ? (ta.reshape({m, k, 1}) * tb.reshape({1, k, n})).sum({1}) : ta.matmul(tb);
    return (p + tbias).relu();
  };
  const std::string what = dev + (reduce_first ? ", reduction axis first" : "");
  RealizeReport rep;
  std::vector<UOp> forms = realizer(dev).realize({product()}, &rep);
  expect_close(Tensor(forms.at(0), dev).to_vector<float>(), naive(a, b, bias, m, k, n), what + ", first run");
  if (dev == "CPU") {
    ASSERT_EQ(rep.kernels.size(), cpu_kernels()) << what << ": a pack kernel, then the matmul";
  }

  // The operand written in place: the next product must read the new values (the panels are packed again).
  std::vector<float> b2 = values(k * n, 4);
  tb.assign(Tensor::from(b2, {k, n}, dev)).realize();
  forms = realizer(dev).realize({product()}, &rep);
  expect_close(Tensor(forms.at(0), dev).to_vector<float>(), naive(a, b2, bias, m, k, n),
               what + ", after the operand changed");
  if (dev == "CPU") { EXPECT_EQ(rep.kernels.size(), cpu_kernels()) << what << ", second run"; }
}

TEST_P(MatmulPanels, ALargeMatmulMatchesPlainLoopsAndPacksAgainWhenItsOperandChanges) {
  check(GetParam(), false);
}
TEST_P(MatmulPanels, ALargeProductWithItsReductionAxisFirstMatchesPlainLoops) { check(GetParam(), true); }

INSTANTIATE_TEST_SUITE_P(Devices, MatmulPanels, testing::ValuesIn(devices_with_values()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace sluice
