#include "models/vad/resample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "base/error.h"

namespace sluice::vad {
namespace {

constexpr double kZeros = 16;      // zero crossings of the sinc on each side: the filter's length
constexpr double kRolloff = 0.95;  // cutoff as a fraction of the lower Nyquist frequency

double sinc(double x) { return x == 0 ? 1.0 : std::sin(std::numbers::pi * x) / (std::numbers::pi * x); }
double blackman(double u) {  // u in [-1, 1]
  return 0.42 + 0.5 * std::cos(std::numbers::pi * u) + 0.08 * std::cos(2 * std::numbers::pi * u);
}

}  // namespace

std::vector<float> resample(const std::vector<float>& samples, int from_rate, int to_rate) {
  SLUICE_CHECK_IN(ValueError, "resample", from_rate > 0 && to_rate > 0)
      << "rates must be positive, got " << from_rate << " Hz to " << to_rate << " Hz";
  if (from_rate == to_rate) return samples;
  // Cutoff as a fraction of the input's Nyquist frequency; the kernel fc * sinc(fc * x) sums to 1, so a
  // constant stays constant.
  const double fc = kRolloff * std::min(1.0, double(to_rate) / from_rate);
  const double half = kZeros / fc;  // half-width in input samples
  const int64_t n_in = int64_t(samples.size());
  const int64_t n_out = (n_in * to_rate + from_rate - 1) / from_rate;
  std::vector<float> out(size_t(std::max<int64_t>(0, n_out)));
  for (int64_t k = 0; k < n_out; ++k) {
    const double t = double(k) * from_rate / to_rate;  // the output sample's time in input samples
    const int64_t lo = std::max<int64_t>(0, int64_t(std::ceil(t - half)));
    const int64_t hi = std::min<int64_t>(n_in - 1, int64_t(std::floor(t + half)));
    double acc = 0;
    for (int64_t j = lo; j <= hi; ++j)
      acc += samples[size_t(j)] * fc * sinc(fc * (t - double(j))) * blackman((t - double(j)) / half);
    out[size_t(k)] = float(acc);
  }
  return out;
}

}  // namespace sluice::vad
