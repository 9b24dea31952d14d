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

using testing_values::expect_close;
using testing_devices::devices_with_values;
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

// 256 rows, 512 reduction steps, 288 columns (nine panels of 32, or eighteen of 16), a bias and a relu fused
// after the reduction.
TEST_P(MatmulPanels, ALargeMatmulMatchesPlainLoopsAndPacksAgainWhenItsOperandChanges) {
  const std::string& dev = GetParam();
  const int64_t m = 256, k = 512, n = 288;
  std::vector<float> a = values(m * k, 1), b = values(k * n, 2), bias = values(n, 3);
  Tensor ta = Tensor::from(a, {m, k}, dev), tb = Tensor::from(b, {k, n}, dev),
         tbias = Tensor::from(bias, {n}, dev);
  tb.realize();
  RealizeReport rep;
  Tensor y = (ta.matmul(tb) + tbias).relu();
  std::vector<UOp> forms = realizer(dev).realize({y}, &rep);
  expect_close(Tensor(forms.at(0), dev).to_vector<float>(), naive(a, b, bias, m, k, n), dev + ", first run");
  if (dev == "CPU") {
    std::unique_ptr<hcq::Device> cpu = cpu::open_device(0);
    if (codegen::panel_width(cpu::target(*cpu).caps) > 0) {
      ASSERT_EQ(rep.kernels.size(), 2u) << "a pack kernel, then the matmul";
      EXPECT_EQ(rep.kernels[0].name.rfind("E_", 0), 0u) << rep.kernels[0].name;
      EXPECT_EQ(rep.kernels[1].name.rfind("r_", 0), 0u) << rep.kernels[1].name;
    }
  }

  // The same schedule's operand written in place: the next product must read the new values.
  std::vector<float> b2 = values(k * n, 4);
  tb.assign(Tensor::from(b2, {k, n}, dev)).realize();
  Tensor y2 = (ta.matmul(tb) + tbias).relu();
  expect_close(y2.to_vector<float>(), naive(a, b2, bias, m, k, n), dev + ", after the operand changed");
}

INSTANTIATE_TEST_SUITE_P(Devices, MatmulPanels, testing::ValuesIn(devices_with_values()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace sluice
