// ONNX ops: convolutions, pooling, normalizations and matrix products (op.h). Convolutions and pools go
// through Tensor's conv2d / conv_transpose2d / pools (any number of spatial dims). ONNX's pads list
// [x1_begin, x2_begin, ..., x1_end, x2_end] becomes (begin, end) pairs, and auto_pad becomes explicit pads
// here, so every op below works on one form.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

Shape iota(int64_t from, int64_t to) {
  Shape v(size_t(std::max<int64_t>(to - from, 0)));
  std::iota(v.begin(), v.end(), from);
  return v;
}

// (begin, end) pairs as the flat list Tensor's ConvOptions / PoolOptions take for 2 * dims values.
Shape flat_pairs(const Bounds& pads) {
  Shape v;
  for (auto [b, e] : pads) v.push_back(b), v.push_back(e);
  return v;
}

// The pads of the leading (batch, channel) axes, none, followed by `spatial`.
Bounds with_lead(const Tensor& x, const Bounds& spatial) {
  Bounds all(size_t(x.ndim()) - spatial.size(), {0, 0});
  all.insert(all.end(), spatial.begin(), spatial.end());
  return all;
}

// ---------------------------------------------------------------- window geometry

// A Conv's or pool's window over the spatial axes (all but N and C): kernel, strides, dilations, pads.
struct Geometry {
  Shape k, s, d;
  Bounds pads;
  int64_t span(size_t j) const { return d[j] * (k[j] - 1) + 1; }
};

Shape per_dim(const OpContext& c, const char* name, size_t dims, int64_t def) {
  Shape v = c.attr_ints(name, Shape(dims, def));
  SLUICE_CHECK_IN(ValueError, c.op(), v.size() == dims)
      << name << " needs " << dims << " values (one per spatial dim), got " << v.size();
  for (int64_t x : v) SLUICE_CHECK_IN(ValueError, c.op(), x > 0) << name << " must be positive, got " << x;
  return v;
}

// The pads attribute, or what auto_pad asks for: SAME_* keeps ceil(in / stride) outputs with the odd pad
// at the end (UPPER) or the beginning (LOWER); VALID pads nothing.
Bounds resolve_pads(const OpContext& c, const Tensor& x, const Geometry& g) {
  const size_t dims = g.k.size();
  const std::string auto_pad = c.attr_str("auto_pad", "NOTSET");
  Bounds pads(dims, {0, 0});
  if (auto_pad == "NOTSET") {
    Shape p = c.attr_ints("pads", Shape(2 * dims, 0));
    SLUICE_CHECK_IN(ValueError, c.op(), p.size() == 2 * dims)
        << "pads needs " << 2 * dims << " values (begins, then ends), got " << p.size();
    for (size_t j = 0; j < dims; ++j) pads[j] = {p[j], p[j + dims]};
    for (int64_t v : p) SLUICE_CHECK_IN(ValueError, c.op(), v >= 0) << "pads must not be negative, got " << v;
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t j = 0; j < dims; ++j) {
      const int64_t in = x.shape(int64_t(x.ndim() - dims + j)), out = (in + g.s[j] - 1) / g.s[j];
      const int64_t total = std::max<int64_t>((out - 1) * g.s[j] + g.span(j) - in, 0), half = total / 2;
      pads[j] = auto_pad == "SAME_UPPER" ? std::pair{half, total - half} : std::pair{total - half, half};
    }
  } else {
    SLUICE_CHECK_IN(ValueError, c.op(), auto_pad == "VALID")
        << "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" << auto_pad << "'";
  }
  return pads;
}

// A pool's geometry from kernel_shape; x is (N, C, spatial...).
Geometry pool_geometry(const OpContext& c, const Tensor& x) {
  Geometry g;
  g.k = c.attr_ints("kernel_shape");
  const size_t dims = g.k.size();
  SLUICE_CHECK_IN(ShapeError, c.op(), dims > 0 && x.ndim() == int64_t(dims) + 2)
      << "a " << dims << "-d kernel needs an input (N, C, " << dims << " spatial dims), got " << x.str();
  for (int64_t v : g.k) SLUICE_CHECK_IN(ValueError, c.op(), v > 0) << "kernel_shape must be positive";
  g.s = per_dim(c, "strides", dims, 1);
  g.d = per_dim(c, "dilations", dims, 1);
  g.pads = resolve_pads(c, x, g);
  return g;
}

// ceil_mode: the end pads grow so a last partial window counts, unless it would start in the end padding
// (as the current spec and Tensor's pools have it).
Bounds ceil_pads(const Tensor& x, const Geometry& g) {
  Bounds pads = g.pads;
  const size_t dims = g.k.size();
  for (size_t j = 0; j < dims; ++j) {
    const int64_t in = x.shape(int64_t(x.ndim() - dims + j)), before = pads[j].first;
    int64_t out = (in + before + pads[j].second - g.span(j) + g.s[j] - 1) / g.s[j] + 1;
    if ((out - 1) * g.s[j] >= in + before) --out;
    pads[j].second = std::max(pads[j].second, (out - 1) * g.s[j] + g.span(j) - in - before);
  }
  return pads;
}

// PoolOptions for Tensor's pools. They read a one-value kernel as a square 2-d one, so a 1-d pool runs
// as a 2-d pool over an added trailing axis of size 1.
template <class Pool>
Tensor api_pool(const Tensor& x, const Geometry& g, bool ceil_mode, bool count_include_pad, Pool pool) {
  const bool one_d = g.k.size() == 1;
  auto widen = [&](Shape v) {
    if (one_d) v.push_back(1);
    return v;
  };
  Bounds pads = g.pads;
  if (one_d) pads.push_back({0, 0});
  PoolOptions o{widen(g.k), widen(g.s), widen(g.d), flat_pairs(pads), ceil_mode, count_include_pad};
  Tensor y = pool(one_d ? x.unsqueeze(-1) : x, o);
  return one_d ? y.squeeze(-1) : y;
}

// x's windows over its last k.size() axes after padding them by `pads` with `fill`: (..., out..., k...),
// the view Tensor's pools reduce, for the pools they do not cover. Movement ops only: each axis, padded to
// a period p, is tiled and cut into k rows of p + d, so row r reads from r * d on; every s-th column of the
// first out * s is a window position.
Tensor windows(const Tensor& t, const Geometry& g, const Bounds& pads, Number fill, const char* op) {
  const size_t dims = g.k.size(), lead = size_t(t.ndim()) - dims;
  Tensor x = t.pad(with_lead(t, pads), fill);
  for (size_t j = 0; j < dims; ++j) {
    const int64_t a = int64_t(lead + 2 * j);  // each earlier axis became a (k, out) pair
    const int64_t in = x.shape(a), k = g.k[j], s = g.s[j], d = g.d[j];
    SLUICE_CHECK_IN(ShapeError, op, g.span(j) <= in)
        << "a kernel spanning " << g.span(j) << " does not fit the padded size " << in << " of axis " << a;
    const int64_t out = (in - g.span(j)) / s + 1, period = std::max(in, out * s - d);
    Bounds grow(size_t(x.ndim()), {0, 0});
    grow[size_t(a)] = {0, period - in};
    Shape reps(size_t(x.ndim()), 1);
    reps[size_t(a)] = (k * (period + d) + period - 1) / period;
    x = x.pad(grow, fill).repeat(reps);
    auto head = [&](const Tensor& v, int64_t axis, int64_t n) {
      Bounds b;
      for (int64_t i = 0; i < v.ndim(); ++i) b.push_back({0, i == axis ? n : v.shape(i)});
      return v.shrink(b);
    };
    x = head(x, a, k * (period + d)).unflatten(a, {k, period + d});
    x = head(x, a + 1, out * s).unflatten(a + 1, {out, s});
    x = head(x, a + 2, 1).squeeze(a + 2);
  }
  Shape order = iota(0, int64_t(lead));
  for (size_t j = 0; j < dims; ++j) order.push_back(int64_t(lead + 2 * j + 1));
  for (size_t j = 0; j < dims; ++j) order.push_back(int64_t(lead + 2 * j));
  return x.permute(order);
}

Shape last_axes(size_t n) { return iota(-int64_t(n), 0); }
Shape spatial_axes(const Tensor& x) { return iota(2, x.ndim()); }

// ---------------------------------------------------------------- Conv, ConvTranspose

// The kernel's spatial shape from the weight (N, C, k...), checked against kernel_shape when given.
Shape conv_kernel(const OpContext& c, const Tensor& x, const Tensor& w) {
  SLUICE_CHECK_IN(ShapeError, c.op(), w.ndim() >= 3 && x.ndim() == w.ndim())
      << "input " << x.str() << " and weight " << w.str() << " need the same rank, at least 3";
  Shape k(w.shape().begin() + 2, w.shape().end());
  Shape attr = c.attr_ints("kernel_shape", k);
  SLUICE_CHECK_IN(ShapeError, c.op(), attr == k)
      << "kernel_shape " << tuple_str(attr) << " does not match the weight " << w.str();
  return k;
}

Values x_conv(OpContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  Geometry g;
  g.k = conv_kernel(c, x, w);
  g.s = per_dim(c, "strides", g.k.size(), 1);
  g.d = per_dim(c, "dilations", g.k.size(), 1);
  g.pads = resolve_pads(c, x, g);
  ConvOptions o{c.opt(2), c.attr_int("group", 1), g.s, g.d, flat_pairs(g.pads)};
  return {x.conv2d(w, o)};
}

// The full output of a transposed convolution is s * (in - 1) + span per axis; pads crop it at each end and
// output_padding extends the end (with zeros past the full output). output_shape, or auto_pad SAME (in * s),
// sets the size instead, the pads then split as the reference does (floor halves, the odd one at the
// end for SAME_UPPER). Tensor's conv_transpose2d takes symmetric padding and output_padding, so the
// common part of the pads goes to it and the rest is cropped (or zero-padded) after.
Values x_conv_transpose(OpContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  Geometry g;
  g.k = conv_kernel(c, x, w);
  const size_t dims = g.k.size();
  g.s = per_dim(c, "strides", dims, 1);
  g.d = per_dim(c, "dilations", dims, 1);
  Shape out_pad = c.attr_ints("output_padding", Shape(dims, 0));
  SLUICE_CHECK_IN(ValueError, c.op(), out_pad.size() == dims)
      << "output_padding needs " << dims << " values, got " << out_pad.size();
  const std::string auto_pad = c.attr_str("auto_pad", "NOTSET");
  Shape out_shape = c.attr_ints("output_shape", {});
  if (out_shape.size() == dims + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);  // (N, C, ...)
  SLUICE_CHECK_IN(ValueError, c.op(), out_shape.empty() || out_shape.size() == dims)
      << "output_shape needs " << dims << " values, got " << out_shape.size();
  if (out_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"))
    for (size_t j = 0; j < dims; ++j) out_shape.push_back(x.shape(int64_t(2 + j)) * g.s[j]);
  if (out_shape.empty()) {
    g.pads = resolve_pads(c, x, g);  // NOTSET or VALID
  } else {
    for (size_t j = 0; j < dims; ++j) {
      const int64_t full = g.s[j] * (x.shape(int64_t(2 + j)) - 1) + g.span(j);
      const int64_t total = full + out_pad[j] - out_shape[j], half = floor_div(total, 2);
      g.pads.push_back(auto_pad == "SAME_UPPER" ? std::pair{half, total - half}
                                                : std::pair{total - half, half});
    }
  }
  Shape common, extend;
  Bounds trim(2, {0, 0});
  for (size_t j = 0; j < dims; ++j) {
    auto [begin, end] = g.pads[j];
    const int64_t m = std::max<int64_t>(std::min(begin, end), 0), q = out_pad[j] - end + m;
    common.push_back(m), extend.push_back(std::max<int64_t>(q, 0));
    trim.push_back({m - begin, std::min<int64_t>(q, 0)});
  }
  ConvOptions o{std::nullopt, c.attr_int("group", 1), g.s, g.d, common, extend};
  Tensor y = x.conv_transpose2d(w, o).pad(trim);
  if (auto b = c.opt(2)) {
    Shape view(size_t(y.ndim()), 1);
    view[1] = y.shape(1);
    SLUICE_CHECK_IN(ShapeError, c.op(), b->numel() == y.shape(1))
        << "bias " << b->str() << " does not match " << y.shape(1) << " output channels";
    y = y + b->reshape(view);
  }
  return {y};
}

// ---------------------------------------------------------------- pools

Values x_average_pool(OpContext& c) {
  const Tensor& x = c.in(0);
  const Geometry g = pool_geometry(c, x);
  const bool ceil_mode = c.attr_int("ceil_mode", 0), include_pad = c.attr_int("count_include_pad", 0);
  return {api_pool(x, g, ceil_mode, include_pad,
                   [](const Tensor& t, const PoolOptions& o) { return t.avg_pool2d(o); })};
}

// MaxPool's Indices: for each window the flat index of its first maximum (in row-major window order)
// within the whole input, the spatial part row-major or, with storage_order 1, column-major. Tensor's
// max pool has no argmax, so this works on the windows: a position map windowed as x is, the smallest
// position where the window equals its max. Padding positions are `area`, which never wins.
Values max_pool_with_indices(const OpContext& c, const Tensor& x, const Geometry& g, const Bounds& pads) {
  const size_t dims = g.k.size();
  const Shape sp(x.shape().begin() + 2, x.shape().end());
  const int64_t area = std::accumulate(sp.begin(), sp.end(), int64_t(1), std::multiplies<>());
  Shape pos_shape{1, 1};
  pos_shape.insert(pos_shape.end(), sp.begin(), sp.end());
  Tensor pos = Tensor::arange(0, area, 1, dtypes::int32, x.device()).reshape(pos_shape);
  const double lowest = x.dtype().is_float() ? -std::numeric_limits<double>::infinity() : x.dtype().min();
  Tensor xw = windows(x, g, pads, lowest, c.op()), pw = windows(pos, g, pads, area, c.op());
  Tensor y = xw.max(last_axes(dims), true);
  Tensor first = xw.eq(y).where(pw, area).min(last_axes(dims));
  if (c.attr_int("storage_order", 0)) {  // the row-major position's coordinates, renumbered column-major
    Tensor col = first.zeros_like();
    int64_t row_stride = area, col_stride = 1;
    for (size_t j = 0; j < dims; ++j) {
      row_stride /= sp[j];
      col = col + first.div(row_stride, Rounding::Trunc).mod(sp[j]) * col_stride;
      col_stride *= sp[j];
    }
    first = col;
  }
  const int64_t n = x.shape(0), ch = x.shape(1);
  Shape plane(size_t(x.ndim()), 1);
  plane[0] = n, plane[1] = ch;
  Tensor base = Tensor::arange(0, n * ch, 1, dtypes::int32, x.device()).reshape(plane) * area;
  Shape out(y.shape().begin(), y.shape().end() - long(dims));
  return {y.reshape(out), (first.cast(dtypes::int64) + base.cast(dtypes::int64))};
}

Values x_max_pool(OpContext& c) {
  const Tensor& x = c.in(0);
  const Geometry g = pool_geometry(c, x);
  const bool ceil_mode = c.attr_int("ceil_mode", 0);
  if (c.node().outputs.size() > 1 && !c.node().outputs[1].empty())
    return max_pool_with_indices(c, x, g, ceil_mode ? ceil_pads(x, g) : g.pads);
  return {
      api_pool(x, g, ceil_mode, true, [](const Tensor& t, const PoolOptions& o) { return t.max_pool2d(o); })};
}

// (sum |x|^p)^(1/p), the sums over `axes` (global) or over windows.
double lp_exponent(const OpContext& c) {  // p was a float before opset 2; attr_float reads either
  const double p = c.attr_float("p", 2);
  SLUICE_CHECK_IN(ValueError, c.op(), p > 0) << "p must be positive, got " << p;
  return p;
}
Tensor lp_power(const Tensor& x, double p) { return p == 1 ? x.abs() : p == 2 ? x.square() : x.abs().pow(p); }
Tensor lp_root(const Tensor& s, double p) { return p == 1 ? s : p == 2 ? s.sqrt() : s.pow(1 / p); }

Values x_lp_pool(OpContext& c) {
  const Tensor& x = c.in(0);
  const Geometry g = pool_geometry(c, x);
  const double p = lp_exponent(c);
  const Bounds pads = c.attr_int("ceil_mode", 0) ? ceil_pads(x, g) : g.pads;
  Tensor sums = windows(lp_power(x, p), g, pads, 0, c.op()).sum(last_axes(g.k.size()));
  return {lp_root(sums, p).cast(x.dtype())};
}

Values x_global_lp_pool(OpContext& c) {
  const Tensor& x = c.in(0);
  const double p = lp_exponent(c);
  return {lp_root(lp_power(x, p).sum(spatial_axes(x), true), p).cast(x.dtype())};
}

// ---------------------------------------------------------------- normalizations

// A per-channel parameter (C) in x's dtype, shaped to broadcast against x (N, C, ...).
Tensor per_channel(const OpContext& c, const Tensor& p, const Tensor& x, const char* what) {
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 2 && p.numel() == x.shape(1))
      << what << " " << p.str() << " does not match the channels of " << x.str();
  Shape view(size_t(x.ndim()), 1);
  view[1] = x.shape(1);
  return p.cast(x.dtype()).reshape(view);
}

// Inference normalizes with the given running statistics. Training (training_mode since opset 14, before
// it asked for by the extra outputs) normalizes with the batch's mean and biased variance over every axis
// but the channels', and also returns the running statistics updated by momentum.
Values x_batch_norm(OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor &scale = c.in(1), &bias = c.in(2), &mean = c.in(3), &var = c.in(4);
  const double eps = c.attr_float("epsilon", 1e-5), momentum = c.attr_float("momentum", 0.9);
  if (c.opset() < 9 && !c.attr_int("spatial", 1)) {  // per activation: the parameters are (C, D1, ...)
    auto view = [&](const Tensor& p) { return p.cast(x.dtype()).unsqueeze(0); };
    return {(x - view(mean)) * ((view(var) + eps).rsqrt() * view(scale)) + view(bias)};
  }
  const auto& outs = c.node().outputs;
  const bool training = c.opset() >= 14
                            ? c.attr_int("training_mode", 0) != 0
                            : std::any_of(outs.begin() + 1, outs.end(), [](auto& o) { return !o.empty(); });
  auto norm = [&](const Tensor& m, const Tensor& v) {
    return x.batchnorm(scale.cast(x.dtype()), bias.cast(x.dtype()), m.cast(x.dtype()),
                       (v.cast(x.dtype()) + eps).rsqrt());
  };
  if (!training) return {norm(mean, var)};
  Shape axes = spatial_axes(x);
  axes.insert(axes.begin(), 0);
  Tensor batch_mean = x.mean(axes), batch_var = x.var(axes, false, 0);
  Tensor running_mean = (mean * momentum + batch_mean.cast(mean.dtype()) * (1 - momentum)).cast(mean.dtype());
  Tensor running_var = (var * momentum + batch_var.cast(var.dtype()) * (1 - momentum)).cast(var.dtype());
  return {norm(batch_mean, batch_var), running_mean, running_var, batch_mean, batch_var};
}

// Normalizes x over `axes` (kept): (x - mean) * invstd, computed in `stash` (LayerNormalization's
// stash_type) and returned with the mean and invstd in that dtype.
struct Normalized {
  Tensor y, mean, invstd;
};
Normalized normalize(const Tensor& x, const Shape& axes, double eps, DType stash) {
  Tensor xs = x.cast(stash);
  Tensor mean = xs.mean(axes, true), centered = xs - mean;
  Tensor invstd = (centered.square().mean(axes, true) + eps).rsqrt();
  return {centered * invstd, mean, invstd};
}

DType stash_dtype(const OpContext& c) { return c.attr_dtype("stash_type", dtypes::float32); }

Values x_instance_norm(OpContext& c) {
  const Tensor& x = c.in(0);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 3) << "input " << x.str() << " needs (N, C, D1, ...)";
  Tensor y = normalize(x, spatial_axes(x), c.attr_float("epsilon", 1e-5), x.dtype()).y;
  return {y * per_channel(c, c.in(1), x, "scale") + per_channel(c, c.in(2), x, "bias")};
}

Values x_layer_norm(OpContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = c.attr_int("axis", -1);
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -x.ndim() && axis < x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  if (axis < 0) axis += x.ndim();
  Normalized n = normalize(x, iota(axis, x.ndim()), c.attr_float("epsilon", 1e-5), stash_dtype(c));
  Tensor y = n.y.cast(x.dtype()) * c.in(1).cast(x.dtype());
  if (auto b = c.opt(2)) y = y + b->cast(x.dtype());
  return {y, n.mean, n.invstd};
}

// Statistics per (sample, group of C / num_groups channels). scale and bias hold one value per group
// before opset 21 and one per channel since.
Values x_group_norm(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t groups = c.attr_int("num_groups");
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 3 && groups > 0 && x.shape(1) % groups == 0)
      << "input " << x.str() << " needs (N, C, D1, ...) with C divisible by num_groups " << groups;
  Shape grouped{x.shape(0), groups, -1};
  const DType stash = c.opset() >= 21 ? stash_dtype(c) : x.dtype();
  Tensor y = normalize(x.reshape(grouped), {2}, c.attr_float("epsilon", 1e-5), stash).y;
  const Tensor &scale = c.in(1), &bias = c.in(2);
  if (c.opset() < 21) {
    SLUICE_CHECK_IN(ShapeError, c.op(), scale.numel() == groups && bias.numel() == groups)
        << "scale " << scale.str() << " and bias " << bias.str() << " need " << groups << " values";
    Shape view{1, groups, 1};
    y = y * scale.cast(y.dtype()).reshape(view) + bias.cast(y.dtype()).reshape(view);
    return {y.reshape(x.shape()).cast(x.dtype())};
  }
  y = y.reshape(x.shape()).cast(x.dtype());
  return {y * per_channel(c, scale, x, "scale") + per_channel(c, bias, x, "bias")};
}

// x / (bias + alpha / size * sum of x^2 over the channels [c - (size-1)/2, c + ceil((size-1)/2)])^beta.
// The channel sums are an average pool of x^2 (padding counted) over a (size, 1) window, times size.
Values x_lrn(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t size = c.attr_int("size");
  SLUICE_CHECK_IN(ValueError, c.op(), size > 0) << "size must be positive, got " << size;
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 2) << "input " << x.str() << " needs (N, C, ...)";
  const double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75),
               bias = c.attr_float("bias", 1);
  Tensor sq = x.square().reshape({x.shape(0), 1, x.shape(1), -1});
  PoolOptions o{{size, 1}, {1, 1}, {1, 1}, {(size - 1) / 2, size / 2, 0, 0}, false, true};
  Tensor sums = (sq.avg_pool2d(o) * double(size)).reshape(x.shape());
  return {x / (sums * (alpha / double(size)) + bias).pow(beta)};
}

// ---------------------------------------------------------------- matrix products

// alpha * A' B' + beta * C, A' and B' transposed as asked, C broadcast to the result.
Values x_gemm(OpContext& c) {
  Tensor a = c.in(0), b = c.in(1);
  SLUICE_CHECK_IN(ShapeError, c.op(), a.ndim() == 2 && b.ndim() == 2)
      << "A " << a.str() << " and B " << b.str() << " must be matrices";
  if (c.attr_int("transA", 0)) a = a.transpose();
  if (c.attr_int("transB", 0)) b = b.transpose();
  const double alpha = c.attr_float("alpha", 1), beta = c.attr_float("beta", 1);
  Tensor y = a.matmul(b);
  if (alpha != 1) y = y * alpha;
  if (auto cc = c.opt(2); cc && beta != 0) y = y + (beta == 1 ? *cc : *cc * beta);
  return {y.cast(a.dtype())};
}

// Tensor::einsum wants distinct letters in each operand: a letter repeated within one ("ii") first becomes
// that operand's diagonal, named once. An implicit output is made explicit from the original terms.
Tensor diagonal(const Tensor& x, int64_t a, int64_t b) {  // axes a, b -> one last axis
  const int64_t n = x.shape(a);
  Shape order;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != a && i != b) order.push_back(i);
  order.push_back(a), order.push_back(b);
  Tensor flat = x.permute(order).flatten(-2);  // (..., n * n): the diagonal is every (n + 1)-th element
  Bounds grow(size_t(flat.ndim()), {0, 0});
  grow.back() = {0, n};
  Tensor rows = flat.pad(grow).unflatten(-1, {n, n + 1});
  Bounds first;
  for (int64_t i = 0; i < rows.ndim(); ++i) first.push_back({0, i == rows.ndim() - 1 ? 1 : rows.shape(i)});
  return rows.shrink(first).squeeze(-1);
}

// The axis of term[pos] in an operand of rank `ndim` (letters after "..." count from the end).
int64_t term_axis(const std::string& term, size_t pos, int64_t ndim) {
  const size_t dots = term.find("...");
  const int64_t letters = int64_t(term.size()) - (dots == std::string::npos ? 0 : 3);
  if (dots == std::string::npos || pos < dots) return int64_t(pos);
  return ndim - (letters - (int64_t(pos) - 3));
}

Values x_einsum(OpContext& c) {
  std::string eq;
  for (char ch : c.attr_str("equation"))
    if (ch != ' ') eq.push_back(ch);
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms(1);
  for (char ch : eq.substr(0, arrow)) {
    if (ch == ',')
      terms.emplace_back();
    else
      terms.back().push_back(ch);
  }
  SLUICE_CHECK_IN(ValueError, c.op(), terms.size() == c.size())
      << "equation '" << eq << "' has " << terms.size() << " operands, got " << c.size() << " inputs";
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {  // numpy's rule: the ellipsis, then the letters used once, sorted
    std::string joined;
    for (auto& t : terms) joined += t;
    if (joined.find("...") != std::string::npos) out = "...";
    std::string once;
    for (char ch : joined)
      if (std::isalpha(static_cast<unsigned char>(ch)) && std::count(joined.begin(), joined.end(), ch) == 1)
        once.push_back(ch);
    std::sort(once.begin(), once.end());
    out += once;
  }
  std::vector<Tensor> xs;
  std::string lhs;
  for (size_t i = 0; i < terms.size(); ++i) {
    Tensor x = c.in(i);
    std::string& t = terms[i];
    for (size_t p = 0; p < t.size(); ++p) {
      const size_t q =
          std::isalpha(static_cast<unsigned char>(t[p])) ? t.find(t[p], p + 1) : std::string::npos;
      if (q == std::string::npos) continue;
      const int64_t a = term_axis(t, p, x.ndim()), b = term_axis(t, q, x.ndim());
      SLUICE_CHECK_IN(ShapeError, c.op(), a < x.ndim() && b < x.ndim() && x.shape(a) == x.shape(b))
          << "operand " << i << " '" << t << "' repeats '" << t[p] << "' over axes of different sizes in "
          << x.str();
      x = diagonal(x, a, b);
      const char letter = t[p];
      t.erase(q, 1), t.erase(p, 1), t.push_back(letter);
      p = size_t(-1);  // rescan the rewritten term
    }
    xs.push_back(x);
    lhs += (i ? "," : "") + t;
  }
  return {Tensor::einsum(lhs + "->" + out, xs)};
}

// Gaussian elimination with partial pivoting, unrolled over the n columns: the product of the pivots,
// negated per row swap. A zero pivot column (a singular matrix) makes the product 0.
Values x_det(OpContext& c) {
  const Tensor& x = c.in(0);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 2 && x.shape(-1) == x.shape(-2))
      << "input " << x.str() << " must be (..., n, n)";
  const int64_t n = x.shape(-1);
  Tensor rows = Tensor::arange(0, n, 1, dtypes::int32, x.device());
  Tensor a = x.dtype().is_float() ? x : x.cast(dtypes::float32);
  Tensor det = a.select(-1, 0).select(-1, 0).ones_like();
  for (int64_t k = 0; k < n; ++k) {
    Tensor candidates = rows.ge(k).where(a.select(-1, k).abs(), -1);  // rows above k are done
    Tensor p = candidates.argmax(-1, true);                           // (..., 1)
    Tensor is_p = rows.eq(p).unsqueeze(-1), is_k = rows.eq(k).unsqueeze(-1);
    Tensor row_p = is_p.where(a, 0).sum({-2}, true), row_k = a.select(-2, k).unsqueeze(-2);
    a = is_k.where(row_p, is_p.where(row_k, a));  // swap rows k and p
    Tensor pivot = a.select(-2, k).select(-1, k);
    det = det * p.squeeze(-1).eq(k).where(pivot, -pivot);
    Tensor factor =
        rows.gt(k).logical_and(pivot.ne(0).unsqueeze(-1)).where(a.select(-1, k) / pivot.unsqueeze(-1), 0);
    // a new buffer per step: the next step reads a several times, and inlining them all would
    // grow the kernels exponentially with n
    a = (a - factor.unsqueeze(-1) * a.select(-2, k).unsqueeze(-2)).contiguous();
  }
  return {det.cast(x.dtype())};
}

const OpDef kOps[] = {
    {"Conv", 1, x_conv},
    {"ConvTranspose", 1, x_conv_transpose},
    {"AveragePool", 1, x_average_pool},
    {"MaxPool", 1, x_max_pool},
    {"LpPool", 1, x_lp_pool},
    {"GlobalAveragePool", 1,
     [](OpContext& c) -> Values { return {c.in(0).mean(spatial_axes(c.in(0)), true)}; }},
    {"GlobalMaxPool", 1, [](OpContext& c) -> Values { return {c.in(0).max(spatial_axes(c.in(0)), true)}; }},
    {"GlobalLpPool", 1, x_global_lp_pool},
    {"BatchNormalization", 1, x_batch_norm},
    {"InstanceNormalization", 1, x_instance_norm},
    {"LayerNormalization", 17, x_layer_norm},
    {"GroupNormalization", 18, x_group_norm},
    {"LRN", 1, x_lrn},
    {"Gemm", 1, x_gemm},
    {"MatMul", 1, [](OpContext& c) -> Values { return {c.in(0).matmul(c.in(1))}; }},
    {"Einsum", 12, x_einsum},
    {"Det", 11, x_det},
};

}  // namespace

std::span<const OpDef> nn_ops() { return kOps; }

}  // namespace sluice::onnx
