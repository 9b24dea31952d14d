// Reading a view of a realized tensor (Realizer::read, #21 item 6): the host receives only the view's
// elements, in the tensor's own dtype, on every device present. Expected values are index arithmetic done
// here, not computed by sluice.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hcq/device.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/tensor.h"
#include "test_devices.h"

namespace sluice {
namespace {

using testing_devices::absent;
using testing_devices::device_names;
bool has_values(const std::string& device) { return device != "NULL"; }  // NULL runs no kernels

class ReadView : public testing::TestWithParam<std::string> {};

// 4 elements of a 256 MiB float tensor: reading them used to copy the whole buffer to the host and widen
// it to doubles (768 MiB); now the view is gathered on the device and 16 bytes come back.
TEST_P(ReadView, FewElementsOfABigTensorCopyOnlyThoseBytes) {
  const std::string dev = GetParam();
  if (std::string why = absent(dev); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  constexpr int64_t kRows = 8192, kCols = 8192;  // 2^26 floats: 256 MiB
  Tensor big = Tensor::arange(0, kRows * kCols, 1, dtypes::float32, dev).reshape({kRows, kCols}).realize();
  const float r1c5 = float(kCols + 5), r2c5 = float(2 * kCols + 5);

  const uint64_t before = bytes_copied_out();
  std::vector<float> corner = big.shrink({{1, 3}, {5, 7}}).to_vector<float>();
  EXPECT_EQ(bytes_copied_out() - before, 4 * sizeof(float));

  // Permuted, strided and padded views of it, and printing one, cost their own size too.
  const uint64_t before_views = bytes_copied_out();
  std::vector<float> t = big.transpose().shrink({{5, 7}, {1, 3}}).to_vector<float>();
  std::vector<float> strided = big.slice({{1, 5, 2}, {5, 9, 3}}).to_vector<float>();
  std::vector<float> padded = big.shrink({{1, 2}, {5, 7}}).pad({{0, 0}, {1, 0}}, -1).to_vector<float>();
  const std::string printed = big.shrink({{2, 3}, {5, 7}}).values_str();
  EXPECT_EQ(bytes_copied_out() - before_views, (4 + 4 + 3 + 2) * sizeof(float));

  if (!has_values(dev)) return;
  EXPECT_EQ(corner, (std::vector<float>{r1c5, r1c5 + 1, r2c5, r2c5 + 1}));
  EXPECT_EQ(t, (std::vector<float>{r1c5, r2c5, r1c5 + 1, r2c5 + 1}));
  const float r3c5 = float(3 * kCols + 5);
  EXPECT_EQ(strided, (std::vector<float>{r1c5, r1c5 + 3, r3c5, r3c5 + 3}));
  EXPECT_EQ(padded, (std::vector<float>{-1, r1c5, r1c5 + 1}));
  EXPECT_EQ(printed, "Tensor([[16389, 16390]], dtype=float, device=" + dev + ")");
}

// int64 values above 2^53 (where a double has no exact value) read back exactly through every kind of view.
TEST_P(ReadView, Int64ViewsOfEveryMovementKindReadExactly) {
  const std::string dev = GetParam();
  if (std::string why = absent(dev); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  if (!open_device(dev).properties().int64) GTEST_SKIP() << dev << " reports no int64 support";
  constexpr int64_t kBase = (int64_t(1) << 60) + 1;  // + k is odd past 2^53: a double would round it
  constexpr int64_t A = 2, B = 3, C = 4;
  std::vector<int64_t> host(A * B * C);
  for (int64_t k = 0; k < A * B * C; ++k) host[size_t(k)] = kBase + k;
  Tensor x = Tensor::from(host, {A, B, C}, dev).realize();
  auto at = [&](int64_t i, int64_t j, int64_t k) { return kBase + (i * B + j) * C + k; };
  const int64_t fill = (int64_t(1) << 55) + 3;

  struct Case {
    std::string name;
    Tensor view;
    std::vector<int64_t> want;
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, Tensor v, std::function<void(std::vector<int64_t>&)> fill_want) {
    std::vector<int64_t> w;
    fill_want(w);
    cases.push_back({std::move(name), std::move(v), std::move(w)});
  };
  add("shrink", x.shrink({{1, 2}, {1, 3}, {2, 4}}), [&](auto& w) {
    for (int64_t j = 1; j < 3; ++j)
      for (int64_t k = 2; k < 4; ++k) w.push_back(at(1, j, k));
  });
  add("permute", x.permute({2, 0, 1}), [&](auto& w) {
    for (int64_t k = 0; k < C; ++k)
      for (int64_t i = 0; i < A; ++i)
        for (int64_t j = 0; j < B; ++j) w.push_back(at(i, j, k));
  });
  add("expand", x.shrink({{0, 1}, {2, 3}, {0, C}}).expand({3, 1, C}).reshape({3, C}), [&](auto& w) {
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t k = 0; k < C; ++k) w.push_back(at(0, 2, k));
  });
  add("pad", x.shrink({{1, 2}, {0, 1}, {0, C}}).pad({{0, 0}, {0, 0}, {1, 2}}, fill), [&](auto& w) {
    w.push_back(fill);
    for (int64_t k = 0; k < C; ++k) w.push_back(at(1, 0, k));
    w.push_back(fill), w.push_back(fill);
  });
  add("reshape of a permute", x.permute({1, 0, 2}).reshape({B, A * C}), [&](auto& w) {
    for (int64_t j = 0; j < B; ++j)
      for (int64_t i = 0; i < A; ++i)
        for (int64_t k = 0; k < C; ++k) w.push_back(at(i, j, k));
  });
  add("flip", x.flip({0, 2}), [&](auto& w) {
    for (int64_t i = A - 1; i >= 0; --i)
      for (int64_t j = 0; j < B; ++j)
        for (int64_t k = C - 1; k >= 0; --k) w.push_back(at(i, j, k));
  });
  add("strided slice", x.slice({{}, {0, 3, 2}, {1, 4, 2}}), [&](auto& w) {
    for (int64_t i = 0; i < A; ++i)
      for (int64_t j = 0; j < 3; j += 2)
        for (int64_t k = 1; k < 4; k += 2) w.push_back(at(i, j, k));
  });
  add("dense", x, [&](auto& w) { w = host; });
  std::vector<std::vector<int64_t>> got;
  for (Case& c : cases) got.push_back(c.view.to_vector<int64_t>());
  const std::string printed = x.shrink({{0, 1}, {0, 1}, {1, 3}}).values_str();

  if (!has_values(dev)) return;
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(got[i], cases[i].want) << cases[i].name;
  const std::string two = std::to_string(at(0, 0, 1)) + ", " + std::to_string(at(0, 0, 2));
  EXPECT_EQ(printed, "Tensor([[[" + two + "]]], dtype=long, device=" + dev + ")");
}

INSTANTIATE_TEST_SUITE_P(Devices, ReadView, testing::ValuesIn(device_names()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace sluice
