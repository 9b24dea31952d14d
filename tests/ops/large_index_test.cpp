// Index arithmetic past 32 bits and launch grids past a device's per-dimension limit, on every device with
// values. A kernel whose buffers or views reach 2^30 elements indexes in int64 (core/codegen/lower.h);
// before, a buffer of 2^31 + 64 bytes wrapped its indices and wrote below the buffer. A launch dimension
// with a prime factor above the device's limit (65535 on Vulkan) is split with a guard
// (core/codegen/global_dims.h); a long reduction runs as partials and their reduction. Expected values are
// computed here, in closed form.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hcq/device.h"
#include "runtime/device.h"
#include "runtime/tensor.h"
#include "test_devices.h"

namespace sluice {
namespace {

using testing_devices::absent;
using testing_devices::devices_with_values;

class LaunchSplit : public testing::TestWithParam<std::string> {};

// 65537 is prime: no divisor splits it into two dimensions of at most 65535.
TEST_P(LaunchSplit, PrimeSizeAboveTheDimensionLimit) {
  const std::string& dev = GetParam();
  if (std::string why = absent(dev); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  constexpr int64_t n = 65537;
  std::vector<int32_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = int32_t(i);
  Tensor t = Tensor::from(x, {n}, dev);
  std::vector<int32_t> got = (t * 3 + 1).to_vector<int32_t>();
  ASSERT_EQ(got.size(), size_t(n));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[size_t(i)], 3 * i + 1) << dev << " element " << i;
  // Two axes merged into one launch dimension of 3 * 65537, and a reduction per row of 65537 rows.
  std::vector<int32_t> moved =
      t.reshape({1, n}).expand({3, n}).permute({1, 0}).contiguous().to_vector<int32_t>();
  for (int64_t i = 0; i < 3 * n; ++i) ASSERT_EQ(moved[size_t(i)], i / 3) << dev << " element " << i;
  std::vector<int32_t> rows = t.reshape({n, 1}).expand({n, 2}).sum({1}).to_vector<int32_t>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(rows[size_t(i)], 2 * i) << dev << " row " << i;
}

// Rows of 2^24 reduce as partials and their sum (runtime detail::reduce): as one loop per row they ran
// past llvmpipe's loop limit even unrolled 256 times, an error on VULKAN.
TEST_P(LaunchSplit, LongRowsReduceInTwoStages) {
  const std::string& dev = GetParam();
  if (std::string why = absent(dev); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  constexpr int64_t rows = 4, cols = int64_t(1) << 24;
  Tensor c = (Tensor::zeros({rows, cols}, dtypes::uint8, dev) +
              Tensor::arange(0, rows, 1, dtypes::uint8, dev).reshape({rows, 1}))
                 .contiguous();
  Tensor sums = c.sum({1});
  EXPECT_EQ(sums.schedule().size(), 3u);  // the rows, their partials, the partials' sums
  std::vector<uint32_t> got = sums.to_vector<uint32_t>();
  for (int64_t i = 0; i < rows; ++i) EXPECT_EQ(got[size_t(i)], uint32_t(i * cols)) << dev << " row " << i;
  EXPECT_EQ(c.max().item<uint8_t>(), 3) << dev;
}

INSTANTIATE_TEST_SUITE_P(Devices, LaunchSplit, testing::ValuesIn(devices_with_values()),
                         [](const auto& info) { return info.param; });

class WideIndex : public testing::TestWithParam<std::string> {};

// 2^31 + 64 bytes as 64 rows of 2^25 + 1: row i holds i. Every position above 2^31 is read and written.
TEST_P(WideIndex, BufferOfTwoToThe31PlusSixtyFourElements) {
  const std::string& dev = GetParam();
  if (std::string why = absent(dev); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  constexpr int64_t rows = 64, cols = (int64_t(1) << 25) + 1, n = rows * cols;
  const uint64_t memory = open_device(dev).properties().memory_bytes;
  if (memory < 3 * uint64_t(n))
    GTEST_SKIP() << dev << " has " << memory << " bytes of memory, too few for two buffers of " << n
                 << " bytes";
  try {  // a device may cap one buffer below its memory (PoCL: a quarter of it, which may be under 2 GiB)
    hcq::Allocator& a = open_device(dev).allocator();
    a.free(a.alloc(uint64_t(n)));
  } catch (const std::exception& e) {
    GTEST_SKIP() << dev << " cannot hold one buffer of " << n << " bytes: " << e.what();
  }
  Tensor c = (Tensor::zeros({rows, cols}, dtypes::uint8, dev) +
              Tensor::arange(0, rows, 1, dtypes::uint8, dev).reshape({rows, 1}))
                 .contiguous()
                 .realize();
  std::vector<int64_t> sums = c.cast(dtypes::int64).sum({1}).to_vector<int64_t>();
  for (int64_t i = 0; i < rows; ++i) EXPECT_EQ(sums[size_t(i)], i * cols) << dev << " row " << i;
  // The last elements through a reshape, a flip and a shrink: the highest positions read right.
  std::vector<uint8_t> tail = c.reshape({n}).flip({0}).shrink({{0, 3}}).contiguous().to_vector<uint8_t>();
  EXPECT_EQ(tail, (std::vector<uint8_t>{63, 63, 63})) << dev;
  // The case: an in-place add over the whole buffer, then the total (each row now holds i + 1).
  c.assign(c + 1);
  c.realize();
  EXPECT_EQ(c.cast(dtypes::int64).sum().item<int64_t>(), cols * rows * (rows + 1) / 2) << dev;
  std::vector<uint8_t> last = c.reshape({n}).shrink({{n - 2, n}}).contiguous().to_vector<uint8_t>();
  EXPECT_EQ(last, (std::vector<uint8_t>{64, 64})) << dev;
}

INSTANTIATE_TEST_SUITE_P(Devices, WideIndex, testing::ValuesIn(devices_with_values()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sluice
