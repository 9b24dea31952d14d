// An outside program: realizes (a+b).sum() on the CPU device through the installed umbrella header and checks
// it against the sum worked out by hand, and the version header against the package's version
// (EXPECTED_VERSION, from the package config or pkg-config). Exits 0 when both are right.
#include <sluice/sluice.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main() {
  const std::string version = std::to_string(SLUICE_VERSION_MAJOR) + "." +
                              std::to_string(SLUICE_VERSION_MINOR) + "." +
                              std::to_string(SLUICE_VERSION_PATCH);
  std::printf("sluice %s, package %s\n", SLUICE_VERSION_STRING, EXPECTED_VERSION);
  if (version != SLUICE_VERSION_STRING || version != EXPECTED_VERSION) return 1;
  try {
    std::vector<float> a(1000), b(1000);
    for (int i = 0; i < 1000; ++i) a[i] = float(i), b[i] = float(2 * i);
    using sluice::Tensor;
    const float sum = (Tensor::from(a, {1000}, "CPU") + Tensor::from(b, {1000}, "CPU")).sum().item<float>();
    std::printf("(a+b).sum() = %.1f, expected 1498500 (3 * 999 * 1000 / 2)\n", sum);
    return sum == 1498500.f ? 0 : 1;  // every partial sum is an integer below 2^24: exact in float
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
