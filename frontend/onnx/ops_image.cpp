// ONNX ops: resampling and boxes: Resize and Upsample, GridSample, RoiAlign, MaxUnpool, NonMaxSuppression
// (op.h). Sampling is linear algebra here: each resampled axis becomes a weight matrix contracted with the
// input (an output position's weights over the input positions), so every interpolation mode is one
// matmul per axis, exact and fused. Where the positions are host values (Resize) the matrix is a constant
// built on the host; where they are data (GridSample, RoiAlign) it is built on the device from one-hot
// comparisons against the axis' positions.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// A shape of `rank` ones with `size` at `axis`: a per-axis constant that broadcasts along the others.
Shape along(int64_t rank, int64_t axis, int64_t size) {
  Shape s(size_t(rank), 1);
  s[size_t(axis)] = size;
  return s;
}

int64_t checked_axis(OpContext& c, int64_t axis, int64_t rank) {
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -rank && axis < rank)
      << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

// An optional input that is present and not empty: Resize's models pass "" or an empty tensor for "none".
bool given(const OpContext& c, size_t i) { return c.has(i) && c.in(i).numel() > 0; }

// The cubic convolution kernel with parameter a (Keys), at distance d.
double cubic_kernel(double d, double a) {
  d = std::abs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// ---------------------------------------------------------------- Resize, Upsample

// Resize's attributes: with an axis' AxisResize they decide its weights, all host values.
struct ResizeSpec {
  std::string mode = "nearest";  // nearest, linear, cubic
  std::string transform = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
};

struct AxisResize {
  int64_t in, out;
  double scale;
  double roi_start = 0, roi_end = 1;  // tf_crop_and_resize's crop, as fractions of the axis
};

// Output position x's coordinate on the input axis (coordinate_transformation_mode), or nullopt where
// tf_crop_and_resize samples outside the input and the output takes extrapolation_value. The resized
// length is scale * in as a real number, as the reference computes it.
std::optional<double> source_coord(const ResizeSpec& s, const AxisResize& a, int64_t x) {
  const double length = a.scale * double(a.in), xf = double(x), in = double(a.in);
  const std::string& t = s.transform;
  if (t == "half_pixel") return (xf + 0.5) / a.scale - 0.5;
  if (t == "asymmetric") return xf / a.scale;
  if (t == "pytorch_half_pixel") return length > 1 ? (xf + 0.5) / a.scale - 0.5 : -0.5;
  if (t == "tf_half_pixel_for_nn") return (xf + 0.5) / a.scale;
  if (t == "align_corners") return length == 1 ? 0 : xf * (in - 1) / (length - 1);
  if (t ==
      "half_pixel_symmetric") {  // half_pixel, with out's rounding to whole pixels split about the centre
    const double offset = in / 2 * (1 - double(a.out) / length);
    return offset + (xf + 0.5) / a.scale - 0.5;
  }
  // tf_crop_and_resize
  const double span = (a.roi_end - a.roi_start) * (in - 1);
  const double at = (a.out == 1 ? span / 2 : xf * span / double(a.out - 1)) + a.roi_start * (in - 1);
  if (at < 0 || at > in - 1) return std::nullopt;
  return at;
}

// The input positions (clamped to the axis: edge padding) and weights that interpolate at coordinate x.
// Offsets count from f, the pixel at or left of x with x - f in (0, 1]: at an integer x the reference takes
// the pixel left of it as f, with weight on f + 1.
std::vector<std::pair<int64_t, double>> resize_taps(const ResizeSpec& s, const AxisResize& a, double x) {
  double f = std::floor(x);
  if (f == x) f -= 1;
  const double r = x - f;
  auto clamp = [&](double i) { return std::clamp<int64_t>(int64_t(i), 0, a.in - 1); };
  if (s.mode == "nearest") {
    const std::string& m = s.nearest_mode;
    const bool up = r == 1 || m == "ceil" || (m == "round_prefer_floor" && r > 0.5) ||
                    (m == "round_prefer_ceil" && r >= 0.5);
    return {{clamp(up ? f + 1 : f), 1.0}};
  }
  // linear and cubic: the kernel's support, stretched by 1 / scale when antialiasing a downscale
  const bool cubic = s.mode == "cubic";
  const double radius = cubic ? 2 : 1, stretch = s.antialias ? std::min(a.scale, 1.0) : 1;
  const int64_t first = int64_t(std::floor(-radius / stretch)) + 1, last = 2 - first;
  std::vector<std::pair<int64_t, double>> taps;
  double total = 0;
  for (int64_t i = first; i < last; ++i) {
    const double d = stretch * (double(i) - r);
    double w = cubic ? cubic_kernel(d, s.cubic_a) : std::max(0.0, 1 - std::abs(d));
    const double at = f + double(i);
    if (s.exclude_outside && (at < 0 || at > double(a.in - 1))) w = 0;
    taps.push_back({clamp(at), w});
    total += w;
  }
  if (s.antialias || s.exclude_outside)
    for (auto& t : taps) t.second /= total;
  return taps;
}

// Nearest at an integer factor as a movement op instead of a gather: every input row repeated r times
// (upsampling), or every r-th row (downsampling, and the identity). Empty for any other pattern.
std::optional<Tensor> nearest_movement(const Tensor& x, int64_t axis, const std::vector<int64_t>& picks,
                                       int64_t in) {
  const auto out = int64_t(picks.size());
  if (out == 0 || in == 0) return std::nullopt;
  auto all = [&](auto&& f) {
    for (int64_t o = 0; o < out; ++o)
      if (!f(o)) return false;
    return true;
  };
  if (out % in == 0 && all([&](int64_t o) { return picks[size_t(o)] == o / (out / in); })) {
    Shape wide = x.shape();
    wide.insert(wide.begin() + axis + 1, out / in);
    return x.unsqueeze(axis + 1).expand(wide).flatten(axis, axis + 1);
  }
  const int64_t first = picks[0], r = out > 1 ? picks[1] - picks[0] : 1;
  if (r >= 1 && all([&](int64_t o) { return picks[size_t(o)] == first + o * r; })) {
    std::vector<Slice> cut(size_t(axis) + 1);
    cut.back() = Slice{first, first + (out - 1) * r + 1, r};
    return x.slice(cut);
  }
  return std::nullopt;
}

// x resized along one axis. Nearest picks rows (index_select, any dtype, exact); linear and cubic contract
// the axis with the (out, in) weight matrix. Rows outside a tf_crop_and_resize crop take the
// extrapolation value. An axis that maps every position to itself is left alone.
Tensor resize_axis(const Tensor& x, int64_t axis, const ResizeSpec& s, const AxisResize& a) {
  std::vector<float> weights(size_t(a.out * a.in), 0.f);
  std::vector<int64_t> picks(size_t(a.out), 0);
  std::vector<float> outside(size_t(a.out), 0.f);
  bool identity = a.out == a.in;
  for (int64_t o = 0; o < a.out; ++o) {
    std::optional<double> at = source_coord(s, a, o);
    if (!at) {
      outside[size_t(o)] = 1, identity = false;
      continue;
    }
    for (auto [i, w] : resize_taps(s, a, *at)) {
      weights[size_t(o * a.in + i)] += float(w);
      picks[size_t(o)] = i;
    }
    for (int64_t i = 0; i < a.in; ++i) identity &= weights[size_t(o * a.in + i)] == (i == o ? 1.f : 0.f);
  }
  if (identity) return x;
  const std::string& dev = x.device();
  const bool any_outside = std::find(outside.begin(), outside.end(), 1.f) != outside.end();
  auto mask = [&] { return Tensor::from(outside, along(x.ndim(), axis, a.out), dev); };
  if (s.mode == "nearest") {
    std::optional<Tensor> moved = nearest_movement(x, axis, picks, a.in);
    Tensor y = moved ? *moved : x.index_select(axis, Tensor::from(picks, {a.out}, dev));
    if (!any_outside) return y;
    return mask().gt(0).where(Tensor::full({}, s.extrapolation, x.dtype(), dev), y);
  }
  // The rows outside have no weights: adding the extrapolation value there keeps the axes separable,
  // since a later axis' weights sum to 1 over rows that all hold it.
  const DType acc = x.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor w = Tensor::from(weights, {a.out, a.in}, dev).cast(acc);
  Tensor y = x.cast(acc).transpose(axis, -1).matmul(w.transpose()).transpose(axis, -1);
  if (any_outside) y = y + mask().cast(acc) * s.extrapolation;
  return y.cast(x.dtype());
}

// The ONNX Resize family's result: every axis resized in turn (the resampling is separable).
Tensor resize(const Tensor& x, const ResizeSpec& s, const std::vector<AxisResize>& axes) {
  Tensor y = x;
  for (size_t i = 0; i < axes.size(); ++i) y = resize_axis(y, int64_t(i), s, axes[i]);
  return y;
}

void check_resize_spec(OpContext& c, const ResizeSpec& s) {
  SLUICE_CHECK_IN(ValueError, c.op(), s.mode == "nearest" || s.mode == "linear" || s.mode == "cubic")
      << "mode must be nearest, linear or cubic, got '" << s.mode << "'";
  static const char* const transforms[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  SLUICE_CHECK_IN(
      ValueError, c.op(),
      std::find(std::begin(transforms), std::end(transforms), s.transform) != std::end(transforms))
      << "unknown coordinate_transformation_mode '" << s.transform << "'";
  const std::string& m = s.nearest_mode;
  SLUICE_CHECK_IN(ValueError, c.op(),
                  m == "round_prefer_floor" || m == "round_prefer_ceil" || m == "floor" || m == "ceil")
      << "unknown nearest_mode '" << m << "'";
}

std::vector<double> scales_of(OpContext& c, const Tensor& x, std::vector<double> scales) {
  SLUICE_CHECK_IN(ValueError, c.op(), int64_t(scales.size()) == x.ndim())
      << "scales needs one value per axis of " << x.str() << ", got " << scales.size();
  return scales;
}

// The roi's crop of each axis, [0, 1] where there is none: tf_crop_and_resize's starts, then ends.
void set_roi(AxisResize& a, const std::vector<double>& roi, size_t axis) {
  if (!roi.empty()) a.roi_start = roi[axis], a.roi_end = roi[axis + roi.size() / 2];
}

// Axes from a scale per axis: the output length is floor(in * scale), of the roi's part of the axis for
// tf_crop_and_resize.
std::vector<AxisResize> axes_from_scales(OpContext& c, const Tensor& x, const std::vector<double>& scales,
                                         const std::vector<double>& roi, bool crop) {
  std::vector<AxisResize> axes;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    const double scale = scales[size_t(i)];
    SLUICE_CHECK_IN(ValueError, c.op(), scale > 0) << "scales must be positive, got " << scale << " at " << i;
    AxisResize a{x.shape(i), 0, scale};
    set_roi(a, roi, size_t(i));
    a.out = int64_t(std::floor(double(a.in) * scale * (crop ? a.roi_end - a.roi_start : 1)));
    SLUICE_CHECK_IN(ValueError, c.op(), a.out > 0 && a.in > 0)
        << "cannot resize axis " << i << " of length " << a.in << " by " << scale;
    axes.push_back(a);
  }
  return axes;
}

// Axes from an output length per axis. keep_aspect_ratio_policy (opset 18) gives the resized axes one
// scale instead, the largest that fits inside the sizes (not_larger) or the smallest that covers them
// (not_smaller), and rounds their lengths to it.
std::vector<AxisResize> axes_from_sizes(OpContext& c, const Tensor& x, const std::vector<double>& sizes,
                                        const std::vector<int64_t>& resized, const std::vector<double>& roi) {
  const std::string policy = c.attr_str("keep_aspect_ratio_policy", "stretch");
  SLUICE_CHECK_IN(ValueError, c.op(),
                  policy == "stretch" || policy == "not_larger" || policy == "not_smaller")
      << "keep_aspect_ratio_policy must be stretch, not_larger or not_smaller, got '" << policy << "'";
  std::optional<double> common;
  for (int64_t i : resized) {
    const double r = sizes[size_t(i)] / double(x.shape(i));
    if (policy != "stretch")
      common = !common ? r : policy == "not_larger" ? std::min(*common, r) : std::max(*common, r);
  }
  std::vector<AxisResize> axes;
  for (int64_t i = 0; i < x.ndim(); ++i) {
    AxisResize a{x.shape(i), int64_t(sizes[size_t(i)]), 1.0};
    const bool shared = common && std::find(resized.begin(), resized.end(), i) != resized.end();
    if (shared) a.out = int64_t(std::nearbyint(*common * double(a.in)));
    a.scale = shared ? *common : double(a.out) / double(a.in);
    set_roi(a, roi, size_t(i));
    SLUICE_CHECK_IN(ValueError, c.op(), a.out > 0 && a.in > 0)
        << "cannot resize axis " << i << " of length " << a.in << " to " << a.out;
    axes.push_back(a);
  }
  return axes;
}

// Per-axis values given for `axes` only (opset 18's axes attribute; before it, every axis), in one or more
// lists one after another (roi: the starts, then the ends), placed into `all`: the defaults of all `rank`
// axes in the same layout.
std::vector<double> spread(OpContext& c, const std::vector<double>& values, const std::vector<int64_t>& axes,
                           int64_t rank, std::vector<double> all, const char* what) {
  const size_t lists = all.size() / size_t(rank), n = axes.size();
  SLUICE_CHECK_IN(ValueError, c.op(), values.size() == lists * n)
      << what << " needs " << lists * n << " values for " << n << " axes, got " << values.size();
  for (size_t j = 0; j < lists; ++j)
    for (size_t k = 0; k < n; ++k) all[j * size_t(rank) + size_t(axes[k])] = values[j * n + k];
  return all;
}

Values x_resize(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t rank = x.ndim();
  SLUICE_CHECK_IN(ShapeError, c.op(), rank > 0) << "cannot resize a scalar";
  ResizeSpec s;
  s.mode = c.attr_str("mode", "nearest");
  if (c.opset() < 11) {  // Resize-10 is Upsample: asymmetric coordinates, the nearest pixel at or before
    s.transform = "asymmetric", s.nearest_mode = "floor";
    check_resize_spec(c, s);
    return {resize(x, s, axes_from_scales(c, x, scales_of(c, x, c.floats(1)), {}, false))};
  }
  s.transform = c.attr_str("coordinate_transformation_mode", "half_pixel");
  s.nearest_mode = c.attr_str("nearest_mode", "round_prefer_floor");
  s.cubic_a = c.attr_float("cubic_coeff_a", -0.75);
  s.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  s.extrapolation = c.attr_float("extrapolation_value", 0.0);
  s.antialias = c.attr_int("antialias", 0) != 0 && s.mode != "nearest";
  check_resize_spec(c, s);
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (c.has_attr("axes")) {
    axes = c.attr_ints("axes");
    for (int64_t& a : axes) a = checked_axis(c, a, rank);
  }
  const bool crop = s.transform == "tf_crop_and_resize";
  std::vector<double> roi;  // only tf_crop_and_resize reads it
  if (crop && given(c, 1)) {
    std::vector<double> whole(size_t(2 * rank), 1.0);
    std::fill(whole.begin(), whole.begin() + rank, 0.0);
    roi = spread(c, c.floats(1), axes, rank, whole, "roi");
  }
  SLUICE_CHECK_IN(ValueError, c.op(), given(c, 2) != given(c, 3))
      << "exactly one of scales and sizes must be given";
  if (given(c, 2)) {
    std::vector<double> scales =
        spread(c, c.floats(2), axes, rank, std::vector<double>(size_t(rank), 1.0), "scales");
    return {resize(x, s, axes_from_scales(c, x, scales, roi, crop))};
  }
  std::vector<int64_t> want = c.ints(3);
  std::vector<double> sizes = spread(c, std::vector<double>(want.begin(), want.end()), axes, rank,
                                     std::vector<double>(x.shape().begin(), x.shape().end()), "sizes");
  return {resize(x, s, axes_from_sizes(c, x, sizes, axes, roi))};
}

Values x_upsample(OpContext& c) {  // Resize's first form: asymmetric coordinates, nearest rounds down
  const Tensor& x = c.in(0);
  ResizeSpec s;
  s.mode = c.attr_str("mode", "nearest");
  if (s.mode == "bilinear") s.mode = "linear";
  s.transform = "asymmetric", s.nearest_mode = "floor";
  check_resize_spec(c, s);
  std::vector<double> scales = c.opset() < 9 ? c.attr_floats("scales") : c.floats(1);
  return {resize(x, s, axes_from_scales(c, x, scales_of(c, x, scales), {}, false))};
}

// ---------------------------------------------------------------- GridSample

// torch's grid_sample conventions, which the reference follows: normalized coordinates in [-1, 1] reach
// the centres of the corner pixels with align_corners, else their outer edges.
Tensor unnormalize(const Tensor& g, int64_t size, bool align) {
  return align ? (g + 1) * (double(size - 1) / 2) : ((g + 1) * double(size) - 1) / 2;
}

// x mirrored at lo and hi, as often as it takes to land between them.
Tensor reflect(const Tensor& x, double lo, double hi) {
  if (lo == hi) return x.zeros_like();
  const double span = hi - lo;
  Tensor d = (x - lo).abs();
  Tensor flips = (d / span).floor();
  Tensor extra = d - flips * span;
  Tensor even = (flips - (flips / 2).floor() * 2).eq(0);
  return even.where(extra + lo, hi - extra);
}

// Coordinates brought inside an axis as padding_mode says: border clamps them, reflection mirrors them at
// the borders (the corner pixels' centres with align_corners, else their outer edges) and then clamps;
// zeros leaves them, and positions outside the axis weigh nothing.
Tensor pad_coords(const Tensor& x, int64_t size, const std::string& padding, bool align) {
  if (padding == "zeros") return x;
  const double last = double(size - 1);
  Tensor r = padding == "border" ? x : align ? reflect(x, 0, last) : reflect(x, -0.5, last + 0.5);
  return r.clip(0, last);
}

// Keys' cubic convolution weights (a = -0.75, torch's) at distances d in [0, 1] and in [1, 2].
Tensor cubic_near(const Tensor& d) { return ((1.25 * d - 2.25) * d) * d + 1; }
Tensor cubic_far(const Tensor& d) { return ((-0.75 * d + 3.75) * d - 6) * d + 3; }

// The (N, P, size) weights of an axis' input positions for sample coordinates x (N, P): a one-hot row per
// tap (nearest: 1, linear: 2, cubic: 4), scaled by the tap's weight. Linear and nearest pad the coordinate;
// cubic pads each tap, as torch does.
Tensor grid_weights(const Tensor& x, int64_t size, const std::string& mode, const std::string& padding,
                    bool align) {
  Tensor positions = Tensor::arange(0, size, 1, x.dtype(), x.device());
  auto tap = [&](const Tensor& at, const Tensor& w) {
    return at.unsqueeze(-1).eq(positions).where(w.unsqueeze(-1), 0);
  };
  if (mode == "nearest") return tap(pad_coords(x, size, padding, align).round(), x.ones_like());
  if (mode == "linear") {
    Tensor p = pad_coords(x, size, padding, align);
    Tensor f = p.floor(), t = p - f;
    return tap(f, 1 - t) + tap(f + 1, t);
  }
  Tensor f = x.floor(), t = x - f;
  auto at = [&](int i) { return pad_coords(f + i, size, padding, align); };
  return tap(at(-1), cubic_far(t + 1)) + tap(at(0), cubic_near(t)) + tap(at(1), cubic_near(1 - t)) +
         tap(at(2), cubic_far(2 - t));
}

// X (N, C, D1..Dr) sampled at grid (N, O1..Om, r), whose last axis holds coordinates innermost axis first
// (x, y, ...). The output (N, C, O1..Om) contracts X with each spatial axis' weights in turn.
Values x_grid_sample(OpContext& c) {
  const Tensor &x = c.in(0), &grid = c.in(1);
  const int64_t r = x.ndim() - 2;
  SLUICE_CHECK_IN(ShapeError, c.op(),
                  r >= 1 && grid.ndim() >= 3 && grid.shape(0) == x.shape(0) && grid.shape(-1) == r)
      << "grid must be (N, ..., " << r << ") for input " << x.str() << ", got " << grid.str();
  std::string mode = c.attr_str("mode", c.opset() < 20 ? "bilinear" : "linear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  SLUICE_CHECK_IN(ValueError, c.op(), mode == "nearest" || mode == "linear" || mode == "cubic")
      << "mode must be nearest, linear or cubic (bilinear, bicubic), got '" << mode << "'";
  const std::string padding = c.attr_str("padding_mode", "zeros");
  SLUICE_CHECK_IN(ValueError, c.op(), padding == "zeros" || padding == "border" || padding == "reflection")
      << "padding_mode must be zeros, border or reflection, got '" << padding << "'";
  const bool align = c.attr_int("align_corners", 0) != 0;
  const int64_t n = x.shape(0), channels = x.shape(1);
  Shape out_shape(grid.shape().begin() + 1, grid.shape().end() - 1);
  const int64_t points = std::accumulate(out_shape.begin(), out_shape.end(), int64_t(1), std::multiplies<>());
  const DType acc = x.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor g = grid.cast(acc).reshape({n, points, r});
  Tensor y = x.cast(acc).unsqueeze(-1);  // (N, C, D1..Dk, P) once axis k+1.. are contracted; P is 1 at first
  for (int64_t k = r - 1; k >= 0; --k) {
    const int64_t size = x.shape(2 + k);
    Tensor w = grid_weights(unnormalize(g.select(2, r - 1 - k), size, align), size, mode, padding, align);
    Shape view(size_t(k + 2), 1);  // (N, 1, 1.., Dk, P)
    view[0] = n;
    view.push_back(size), view.push_back(points);
    y = (y * w.transpose(1, 2).reshape(view)).sum({-2});
  }
  Shape result{n, channels};
  result.insert(result.end(), out_shape.begin(), out_shape.end());
  return {y.reshape(result).cast(x.dtype())};
}

// ---------------------------------------------------------------- RoiAlign

// One axis of RoiAlign's sampling: for each roi (R) and output bin (P), `count` samples spread evenly over
// the bin (up to `most`; the rest are masked off) and their bilinear weights on the input positions, as
// onnxruntime computes them: a sample beyond (-1, size) weighs nothing, one below 0 reads pixel 0 and one
// past the last pixel reads it alone. Returns the one-hot (R, P, S, size) matrices of the low and high
// pixel and their (R, P, S) weights, zero for the samples that do not count.
struct RoiAxis {
  Tensor low, high, w_low, w_high;
};
RoiAxis roi_axis(const Tensor& start, const Tensor& bin, const Tensor& count, int64_t most, int64_t bins,
                 int64_t size) {
  const std::string& dev = start.device();
  const DType dt = start.dtype();
  Tensor p = Tensor::arange(0, bins, 1, dt, dev).reshape({1, bins, 1});
  Tensor i = Tensor::arange(0, most, 1, dt, dev).reshape({1, 1, most});
  Tensor s = start.reshape({-1, 1, 1}), b = bin.reshape({-1, 1, 1}), n = count.reshape({-1, 1, 1});
  Tensor y = s + p * b + (i + 0.5) * b / n.maximum(1);  // (R, P, S)
  Tensor counts = i.lt(n).logical_and(y.ge(-1)).logical_and(y.le(double(size)));
  y = y.maximum(0);
  Tensor low = y.floor();
  Tensor edge = low.ge(double(size - 1));
  low = edge.where(double(size - 1), low);
  Tensor high = edge.where(double(size - 1), low + 1);
  Tensor frac = edge.where(0.0, y - low);
  Tensor positions = Tensor::arange(0, size, 1, dt, dev);
  return {low.unsqueeze(-1).eq(positions).cast(dt), high.unsqueeze(-1).eq(positions).cast(dt),
          counts.where(1 - frac, 0.0), counts.where(frac, 0.0)};
}

Values x_roi_align(OpContext& c) {
  const Tensor &x = c.in(0), &rois = c.in(1), &batch = c.in(2);
  SLUICE_CHECK_IN(ShapeError, c.op(),
                  x.ndim() == 4 && rois.ndim() == 2 && rois.shape(1) == 4 && batch.ndim() == 1 &&
                      batch.shape(0) == rois.shape(0))
      << "needs X (N, C, H, W), rois (R, 4) and batch_indices (R), got " << x.str() << ", " << rois.str()
      << ", " << batch.str();
  const std::string mode = c.attr_str("mode", "avg");
  SLUICE_CHECK_IN(ValueError, c.op(), mode == "avg" || mode == "max")
      << "mode must be avg or max, got '" << mode << "'";
  // Opset 16 added half_pixel (the default since): pixel centres at +0.5, and rois of any size.
  const bool half = c.attr_str("coordinate_transformation_mode",
                               c.opset() < 16 ? "output_half_pixel" : "half_pixel") == "half_pixel";
  const int64_t ph = c.attr_int("output_height", 1), pw = c.attr_int("output_width", 1);
  const int64_t ratio = c.attr_int("sampling_ratio", 0);
  const double scale = c.attr_float("spatial_scale", 1.0);
  SLUICE_CHECK_IN(ValueError, c.op(), ph > 0 && pw > 0 && ratio >= 0)
      << "output_height, output_width must be positive and sampling_ratio >= 0, got " << ph << ", " << pw
      << ", " << ratio;
  const DType dt = x.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  Tensor r = rois.cast(dt) * scale - (half ? 0.5 : 0.0);
  auto axis = [&](int64_t lo_col, int64_t bins, int64_t size) {
    Tensor start = r.select(1, lo_col), length = r.select(1, lo_col + 2) - start;
    if (!half) length = length.maximum(1);
    Tensor bin = length / double(bins);
    // sampling_ratio 0: ceil(bin) samples per bin, which differs per roi; the largest count, read on the
    // host, sizes the sample axis and the others mask off their extra samples.
    Tensor count = ratio > 0 ? bin.full_like(double(ratio)) : bin.ceil().maximum(0);
    int64_t most = ratio;
    if (ratio == 0) {
      eval::HostArray m = c.host(count.max());
      most = std::max<int64_t>(1, int64_t(m.value(0)));
    }
    return std::pair{roi_axis(start, bin, count, most, bins, size), count.maximum(1)};
  };
  auto [ay, ny] = axis(1, ph, x.shape(2));
  auto [ax, nx] = axis(0, pw, x.shape(3));
  Tensor xr = x.cast(dt).index_select(0, batch);  // (R, C, H, W)
  if (mode == "avg") {  // the mean over samples of a bilinear read is separable: one weight matrix per axis
    Tensor wy = (ay.low * ay.w_low.unsqueeze(-1) + ay.high * ay.w_high.unsqueeze(-1)).sum({2}) /
                ny.reshape({-1, 1, 1});
    Tensor wx = (ax.low * ax.w_low.unsqueeze(-1) + ax.high * ax.w_high.unsqueeze(-1)).sum({2}) /
                nx.reshape({-1, 1, 1});
    Tensor t = Tensor::einsum("rchw,rqw->rchq", {xr, wx});
    return {Tensor::einsum("rchq,rph->rcpq", {t, wy}).cast(x.dtype())};
  }
  // max: onnxruntime's, the largest weighted corner read over all samples of the bin
  std::optional<Tensor> best;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      const Tensor &oy = a ? ay.high : ay.low, &ox = b ? ax.high : ax.low;
      const Tensor &wy = a ? ay.w_high : ay.w_low, &wx = b ? ax.w_high : ax.w_low;
      Tensor t = Tensor::einsum("rchw,rqjw->rchqj", {xr, ox});
      Tensor v = Tensor::einsum("rchqj,rpih->rcpiqj", {t, oy});
      Tensor w = wy.reshape({wy.shape(0), 1, ph, wy.shape(2), 1, 1}) *
                 wx.reshape({wx.shape(0), 1, 1, 1, pw, wx.shape(2)});
      v = v * w;
      best = best ? best->maximum(v) : v;
    }
  // Samples past a roi's count are no samples: they must not win the max.
  Tensor valid_y =
      Tensor::arange(0, ay.w_low.shape(2), 1, dt, x.device()).reshape({1, -1}).lt(ny.reshape({-1, 1}));
  Tensor valid_x =
      Tensor::arange(0, ax.w_low.shape(2), 1, dt, x.device()).reshape({1, -1}).lt(nx.reshape({-1, 1}));
  Tensor valid = valid_y.reshape({valid_y.shape(0), 1, 1, -1, 1, 1})
                     .logical_and(valid_x.reshape({valid_x.shape(0), 1, 1, 1, 1, -1}));
  return {valid.where(*best, -INFINITY).max({3, 5}).cast(x.dtype())};
}

// ---------------------------------------------------------------- MaxUnpool

// Scatters X's values to the flat positions `I` holds (over the whole output, as MaxPool's indices are),
// zeros elsewhere: out[n, c, p] sums X[n, c, k] over the k whose index is that position.
Values x_max_unpool(OpContext& c) {
  const Tensor &x = c.in(0), &index = c.in(1);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 3 && index.shape() == x.shape())
      << "X and I must have one shape of rank >= 3, got " << x.str() << " and " << index.str();
  const int64_t dims = x.ndim() - 2;
  const Shape kernel = c.attr_ints("kernel_shape");
  const Shape strides = c.attr_ints("strides", Shape(size_t(dims), 1));
  const Shape pads = c.attr_ints("pads", Shape(size_t(2 * dims), 0));
  SLUICE_CHECK_IN(
      ValueError, c.op(),
      int64_t(kernel.size()) == dims && int64_t(strides.size()) == dims && int64_t(pads.size()) == 2 * dims)
      << "kernel_shape, strides and pads need " << dims << ", " << dims << " and " << 2 * dims << " values";
  Shape out = x.shape();
  for (int64_t d = 0; d < dims; ++d)
    out[size_t(2 + d)] = (x.shape(2 + d) - 1) * strides[size_t(d)] + kernel[size_t(d)] - pads[size_t(d)] -
                         pads[size_t(dims + d)];
  // An output_shape larger than that pads the end of each axis: the indices still address the default shape
  // (as the suite's expected outputs have them).
  Bounds grow(size_t(x.ndim()), {0, 0});
  if (given(c, 2)) {
    const Shape want = c.ints(2);
    SLUICE_CHECK_IN(ValueError, c.op(),
                    int64_t(want.size()) == x.ndim() && want[0] == x.shape(0) && want[1] == x.shape(1))
        << "output_shape must be (" << x.shape(0) << ", " << x.shape(1) << ", ...) of rank " << x.ndim()
        << ", got " << want.size() << " values";
    for (size_t d = 2; d < want.size(); ++d) grow[d].second = want[d] - out[d];
  }
  const int64_t n = x.shape(0), ch = x.shape(1), k = x.numel() / (n * ch);
  const int64_t p = std::accumulate(out.begin() + 2, out.end(), int64_t(1), std::multiplies<>());
  const std::string& dev = x.device();
  // Each plane's own positions: subtract the plane's first flat index.
  Tensor base = Tensor::arange(0, n * ch, 1, dtypes::int64, dev).reshape({n, ch, 1}) * p;
  Tensor local = index.cast(dtypes::int64).reshape({n, ch, k}) - base;
  Tensor hit = local.unsqueeze(-1).eq(Tensor::arange(0, p, 1, dtypes::int64, dev));  // (N, C, K, P)
  Tensor y = hit.where(x.reshape({n, ch, k, 1}), Tensor::zeros({}, x.dtype(), dev)).sum({2});
  return {y.cast(x.dtype()).reshape(out).pad(grow)};
}

// ---------------------------------------------------------------- NonMaxSuppression

// Which box pairs overlap by more than iou_threshold, (B, N, N), as onnxruntime decides: boxes of no area
// or no overlap never suppress. Boxes are two corners (in any order) or, with center_point_box, a
// centre and a size.
Tensor overlaps(const Tensor& boxes, bool center, double threshold) {
  Tensor b = boxes.cast(dtypes::float32);
  Tensor c0 = b.select(2, 0), c1 = b.select(2, 1), c2 = b.select(2, 2), c3 = b.select(2, 3);
  Tensor lo0 = center ? c0 - c2 / 2 : c0.minimum(c2), hi0 = center ? c0 + c2 / 2 : c0.maximum(c2);
  Tensor lo1 = center ? c1 - c3 / 2 : c1.minimum(c3), hi1 = center ? c1 + c3 / 2 : c1.maximum(c3);
  Tensor area = (hi0 - lo0) * (hi1 - lo1);
  auto pair = [](const Tensor& t, bool row) { return row ? t.unsqueeze(-1) : t.unsqueeze(-2); };
  auto overlap = [&](const Tensor& lo, const Tensor& hi) {
    return (pair(hi, true).minimum(pair(hi, false)) - pair(lo, true).maximum(pair(lo, false))).relu();
  };
  Tensor inter = overlap(lo0, hi0) * overlap(lo1, hi1);
  Tensor uni = pair(area, true) + pair(area, false) - inter;
  Tensor ok = inter.gt(0).logical_and(pair(area, true).gt(0)).logical_and(pair(area, false).gt(0));
  return ok.logical_and((inter / uni.maximum(1e-30)).gt(threshold));
}

// Greedy suppression in score order: a box is kept unless a kept box ranked before it overlaps it.
// suppressed_by (B, C, N, N) says which box (column), if kept, suppresses which (row). Each Jacobi step
// settles at least the next box in rank order, and a step that changes nothing has reached the one
// answer, so the steps run in blocks with one host read between blocks: did the last step change anything.
Tensor greedy_keep(OpContext& c, const Tensor& eligible, const Tensor& suppressed_by) {
  const int64_t n = eligible.shape(-1), block = 16;
  const Tensor by = suppressed_by.cast(dtypes::float32);
  auto step = [&](const Tensor& k) {
    return eligible.logical_and(by.matmul(k.cast(dtypes::float32).unsqueeze(-1)).squeeze(-1).eq(0));
  };
  Tensor keep = eligible;
  for (int64_t done = 0; done + 1 < n;) {
    const int64_t steps = std::min(block, n - 1 - done);
    Tensor last = keep;
    for (int64_t i = 0; i < steps; ++i) last = keep, keep = step(keep);
    done += steps;
    if (done + 1 < n && !c.host(keep.ne(last).any()).value(0)) break;
  }
  return keep;
}

// Boxes by class in descending score order (ties to the lower index), dropping those under
// score_threshold, those a kept box overlaps by more than iou_threshold, and all after the first
// max_output_boxes_per_class. The result (K, 3) lists (batch, class, box) by batch, class, then score; K is
// data, read on the host.
Values x_nms(OpContext& c) {
  const Tensor &boxes = c.in(0), &scores = c.in(1);
  SLUICE_CHECK_IN(ShapeError, c.op(),
                  boxes.ndim() == 3 && boxes.shape(2) == 4 && scores.ndim() == 3 &&
                      scores.shape(0) == boxes.shape(0) && scores.shape(2) == boxes.shape(1))
      << "needs boxes (B, N, 4) and scores (B, C, N), got " << boxes.str() << " and " << scores.str();
  const int64_t most = given(c, 2) ? c.ints(2).at(0) : 0;
  const double iou = given(c, 3) ? c.floats(3).at(0) : 0.0;
  const std::string& dev = boxes.device();
  const int64_t nb = scores.shape(0), nc = scores.shape(1), n = scores.shape(2);
  if (most <= 0 || n == 0) return {Tensor::zeros({0, 3}, dtypes::int64, dev)};
  Tensor s = scores.cast(dtypes::float32);
  Tensor si = s.unsqueeze(-1), sj = s.unsqueeze(-2);  // (B, C, i, j)
  Tensor idx = Tensor::arange(0, n, 1, dtypes::float32, dev);
  Tensor before = sj.gt(si).logical_or(sj.eq(si).logical_and(idx.reshape({1, n}).lt(idx.reshape({n, 1}))));
  Tensor over = overlaps(boxes, c.attr_int("center_point_box", 0) != 0, iou).unsqueeze(1);
  Tensor eligible = given(c, 4) ? s.gt(c.floats(4).at(0)) : Tensor::full(s.shape(), true, dtypes::bool_, dev);
  Tensor keep = greedy_keep(c, eligible, over.logical_and(before));
  // Each kept box's place among its class' kept boxes, then among all rows.
  Tensor place = before.cast(dtypes::float32).matmul(keep.cast(dtypes::float32).unsqueeze(-1)).squeeze(-1);
  keep = keep.logical_and(place.lt(double(most)));
  Tensor kept = keep.cast(dtypes::float32);
  Tensor counts = kept.sum({-1}).reshape({-1});  // per (batch, class)
  const int64_t total = int64_t(c.host(counts.sum()).value(0));
  if (total == 0) return {Tensor::zeros({0, 3}, dtypes::int64, dev)};
  Tensor row = ((counts.cumsum(0) - counts).reshape({nb, nc, 1}) + place).reshape({1, -1});
  Tensor pick = row.eq(Tensor::arange(0, total, 1, dtypes::float32, dev).reshape({total, 1}))
                    .logical_and(keep.reshape({1, -1}));  // (K, B*C*N)
  auto field = [&](int64_t size, int64_t axis) {          // each entry's batch, class or box index
    return Tensor::arange(0, size, 1, dtypes::float32, dev)
        .reshape(along(3, axis, size))
        .expand({nb, nc, n})
        .reshape({-1});
  };
  Tensor fields = stack({field(nb, 0), field(nc, 1), field(n, 2)}, 1);  // (B*C*N, 3)
  return {pick.cast(dtypes::float32).matmul(fields).round().cast(dtypes::int64)};
}

const OpDef kOps[] = {
    {"Resize", 10, x_resize},           // 10: scales only; 11: roi, sizes; 18: axes, antialias, aspect
    {"Upsample", 7, x_upsample},        // scales an attribute until 9
    {"GridSample", 16, x_grid_sample},  // 20: N-d, modes linear and cubic
    {"RoiAlign", 10, x_roi_align},      // 16: coordinate_transformation_mode
    {"MaxUnpool", 9, x_max_unpool},     // 11: output_shape
    {"NonMaxSuppression", 10, x_nms},   // the number of rows is data
};

}  // namespace

std::span<const OpDef> image_ops() { return kOps; }

}  // namespace sluice::onnx
