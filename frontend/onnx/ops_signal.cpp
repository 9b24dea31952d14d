// ONNX ops: signal processing: DFT, STFT, the Hann, Hamming and Blackman windows, MelWeightMatrix (op.h).
// A DFT is two matmuls with cos and sin matrices, built on the host from the lengths alone; complex values
// are real tensors with a last axis of size 2 (real, imaginary), or 1 for real input.
#include <cmath>
#include <numbers>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// cos and sin of 2 pi m / n with m = k * j reduced mod n first: exact at the quarter turns, so bins the
// transform makes exactly zero (the imaginary part at 0 and n / 2 of a real signal) come out zero.
std::pair<double, double> turn(int64_t k, int64_t j, int64_t n) {
  const int64_t m = (k * j) % n;
  if ((4 * m) % n == 0) {
    static const double kCos[] = {1, 0, -1, 0}, kSin[] = {0, 1, 0, -1};
    return {kCos[4 * m / n], kSin[4 * m / n]};
  }
  const double a = 2 * std::numbers::pi * double(m) / double(n);
  return {std::cos(a), std::sin(a)};
}

// The (n, bins) matrices of cos and sin(2 pi k j / n) over input position j and frequency k < bins, made
// in float64 only for float64 signals (not every device has it).
std::pair<Tensor, Tensor> dft_matrices(int64_t n, int64_t bins, DType dtype, const std::string& device) {
  auto make = [&]<class T>(T) {
    std::vector<T> c(size_t(n * bins)), s(size_t(n * bins));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < bins; ++k) {
        auto [cs, sn] = turn(k, j, n);
        c[size_t(j * bins + k)] = T(cs), s[size_t(j * bins + k)] = T(sn);
      }
    return std::pair{Tensor::from(c, {n, bins}, device), Tensor::from(s, {n, bins}, device)};
  };
  return dtype == dtypes::float64 ? make(0.0) : make(0.f);
}

// The DFT of the complex signal (re, im) along its last axis, padded with zeros or cut to n, keeping the
// first `bins` frequencies; inverse conjugates the turns and divides by n. Returns (..., bins, 2).
Tensor dft_last(Tensor re, std::optional<Tensor> im, int64_t n, int64_t bins, bool inverse) {
  auto fit = [&](const Tensor& t) {
    Bounds pads(size_t(t.ndim()), {0, 0});
    pads.back().second = n - t.shape(-1);
    return pads.back().second == 0 ? t : t.pad(pads);
  };
  re = fit(re);
  auto [cos_m, sin_m] = dft_matrices(n, bins, re.dtype(), re.device());
  const double sign = inverse ? -1 : 1;  // e^(-i theta) forward: re' = re cos + im sin, im' = im cos - re sin
  Tensor out_re = re.matmul(cos_m), out_im = -sign * re.matmul(sin_m);
  if (im) {
    Tensor i = fit(*im);
    out_re = out_re + sign * i.matmul(sin_m);
    out_im = out_im + i.matmul(cos_m);
  }
  if (inverse) out_re = out_re / double(n), out_im = out_im / double(n);
  return stack({out_re, out_im}, -1);
}

// A complex-or-real signal tensor (..., 1 | 2) split into its real and optional imaginary part.
std::pair<Tensor, std::optional<Tensor>> split_complex(OpContext& c, const Tensor& x) {
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 2 && (x.shape(-1) == 1 || x.shape(-1) == 2))
      << "input must end in an axis of 1 (real) or 2 (complex) values, got " << x.str();
  const DType dt = x.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor re = x.select(-1, 0).cast(dt);
  if (x.shape(-1) == 1) return {re, std::nullopt};
  return {re, x.select(-1, 1).cast(dt)};
}

int64_t scalar_int(OpContext& c, size_t i, const char* what) {
  std::vector<int64_t> v = c.ints(i);
  SLUICE_CHECK_IN(ValueError, c.op(), v.size() == 1) << what << " must be one value, got " << v.size();
  return v[0];
}

Values x_dft(OpContext& c) {
  const Tensor& x = c.in(0);
  auto [re, im] = split_complex(c, x);
  // Opset 20 made axis input 2 (default -2, counting the complex axis); before it was an attribute.
  int64_t axis = c.opset() >= 20 ? (c.has(2) ? scalar_int(c, 2, "axis") : -2) : c.attr_int("axis", 1);
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -x.ndim() && axis < x.ndim() - 1 && axis != -1)
      << "axis " << axis << " is not a signal axis of " << x.str();
  if (axis < 0) axis += x.ndim();
  const bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
  SLUICE_CHECK_IN(ValueError, c.op(), !(inverse && onesided))
      << "an inverse transform of a one-sided spectrum is not supported";
  const int64_t n = c.has(1) ? scalar_int(c, 1, "dft_length") : x.shape(axis);
  SLUICE_CHECK_IN(ValueError, c.op(), n > 0) << "dft_length must be positive, got " << n;
  auto last = [&](const Tensor& t) {  // the signal axis last, cut to n if longer
    Tensor m = t.transpose(axis, -1);
    std::vector<Slice> cut(size_t(m.ndim()));
    cut.back().stop = n;
    return m.slice(cut);
  };
  std::optional<Tensor> im_last = im ? std::optional<Tensor>(last(*im)) : std::nullopt;
  Tensor y = dft_last(last(re), im_last, n, onesided ? n / 2 + 1 : n, inverse);  // (..., bins, 2)
  return {y.transpose(axis, -2).cast(x.dtype())};
}

// Frames of frame_length every frame_step samples, each weighted by the window and transformed:
// (batch, frames, bins, 2).
Values x_stft(OpContext& c) {
  const Tensor& signal = c.in(0);
  auto [re, im] = split_complex(c, signal);
  SLUICE_CHECK_IN(ShapeError, c.op(), signal.ndim() == 3)
      << "signal must be (batch, length, 1 | 2), got " << signal.str();
  const int64_t step = scalar_int(c, 1, "frame_step"), length = signal.shape(1);
  std::optional<Tensor> window = c.opt(2);
  SLUICE_CHECK_IN(ShapeError, c.op(), !window || window->ndim() == 1)
      << "window must be 1-D, got " << window->str();
  const int64_t size = c.has(3) ? scalar_int(c, 3, "frame_length") : window ? window->shape(0) : 0;
  SLUICE_CHECK_IN(ValueError, c.op(),
                  size > 0 && size <= length && step > 0 && (!window || window->shape(0) == size))
      << "needs 0 < frame_length <= " << length
      << " (a window of that length) and frame_step > 0, got frame_length " << size << ", frame_step "
      << step;
  const bool onesided = c.attr_int("onesided", 1) != 0;
  SLUICE_CHECK_IN(ValueError, c.op(), !(onesided && im)) << "a complex signal has no one-sided transform";
  const int64_t frames = 1 + (length - size) / step;
  std::vector<int64_t> at(size_t(frames * size));
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < size; ++j) at[size_t(f * size + j)] = f * step + j;
  Tensor index = Tensor::from(at, {frames, size}, signal.device());
  auto framed = [&](const Tensor& t) {  // (batch, frames, size), windowed
    Tensor r = t.index_select(1, index);
    return window ? r * window->cast(t.dtype()) : r;
  };
  std::optional<Tensor> im_frames = im ? std::optional<Tensor>(framed(*im)) : std::nullopt;
  return {dft_last(framed(re), im_frames, size, onesided ? size / 2 + 1 : size, false).cast(signal.dtype())};
}

// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) over n < size, N = size (periodic) or size - 1 (symmetric).
template <int kind>
Values x_window(OpContext& c) {
  static const double kA[3][3] = {{0.5, 0.5, 0}, {25.0 / 46, 21.0 / 46, 0}, {0.42, 0.5, 0.08}};
  const double* a = kA[kind];
  const int64_t size = scalar_int(c, 0, "size");
  SLUICE_CHECK_IN(ValueError, c.op(), size >= 0) << "size must be >= 0, got " << size;
  const DType out = c.attr_dtype("output_datatype", dtypes::float32);
  const int64_t period = c.attr_int("periodic", 1) ? size : size - 1;
  Tensor n = Tensor::arange(0, size, 1, dtypes::float32, c.device());
  if (period <= 0) return {n.ones_like(out)};  // one point: the window's peak
  Tensor t = n * (2 * std::numbers::pi / double(period));
  Tensor w = a[0] - a[1] * t.cos();
  if (a[2] != 0) w = w + a[2] * (t * 2).cos();
  return {w.cast(out)};
}

// Triangular filters from linear frequency bins (dft_length / 2 + 1 rows) to num_mel_bins mel bands: band m
// rises from edge m to edge m + 1 and falls to edge m + 2. The edges step evenly in mel = 2595 log10(1 + hz /
// 700) from lower_edge_hertz by (upper - lower) / (num_mel_bins + 2), as the reference and onnxruntime
// step, and round down to bins. A constant made on the host from host scalars.
Values x_mel_weight_matrix(OpContext& c) {
  const int64_t mels = scalar_int(c, 0, "num_mel_bins"), dft_length = scalar_int(c, 1, "dft_length");
  const int64_t rate = scalar_int(c, 2, "sample_rate");
  const double lower = c.floats(3).at(0), upper = c.floats(4).at(0);
  SLUICE_CHECK_IN(ValueError, c.op(), mels > 0 && dft_length > 0 && rate > 0 && 0 <= lower && lower < upper)
      << "needs positive num_mel_bins, dft_length and sample_rate and 0 <= lower_edge_hertz < "
         "upper_edge_hertz, got "
      << mels << ", " << dft_length << ", " << rate << ", " << lower << ", " << upper;
  const int64_t bins = dft_length / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  const double low_mel = mel(lower), step = (mel(upper) - low_mel) / double(mels + 2);
  std::vector<int64_t> edge(size_t(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * (std::pow(10, (double(i) * step + low_mel) / 2595) - 1);
    edge[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hz / double(rate)));
  }
  std::vector<float> w(size_t(bins * mels), 0.f);
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < bins) w[size_t(row * mels + col)] = float(v);
  };
  for (int64_t m = 0; m < mels; ++m) {
    const int64_t lo = edge[size_t(m)], mid = edge[size_t(m + 1)], hi = edge[size_t(m + 2)];
    if (mid == lo) set(mid, m, 1);
    for (int64_t j = lo; mid > lo && j <= mid; ++j) set(j, m, double(j - lo) / double(mid - lo));  // rising
    for (int64_t j = mid; j < hi; ++j) set(j, m, double(hi - j) / double(hi - mid));               // falling
  }
  return {Tensor::from(w, {bins, mels}, c.device()).cast(c.attr_dtype("output_datatype", dtypes::float32))};
}

const OpDef kOps[] = {
    {"DFT", 17, x_dft},
    {"STFT", 17, x_stft},
    {"HannWindow", 17, x_window<0>},
    {"HammingWindow", 17, x_window<1>},
    {"BlackmanWindow", 17, x_window<2>},
    {"MelWeightMatrix", 17, x_mel_weight_matrix},
};

}  // namespace

std::span<const OpDef> signal_ops() { return kOps; }

}  // namespace sluice::onnx
