#pragma once
// What the op suites' host-side checks share: reproducible values in [-1, 1) and a comparison of a
// device's floats with loops computed on the host in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::testing_values {

// n values from a linear congruential generator seeded with `seed`.
inline std::vector<float> values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1u << 24) * 2.f - 1.f;
  }
  return v;
}

inline void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::abs(want[i])) << what << ": element " << i;
}

}  // namespace sluice::testing_values
