// Convolutions and pooling over sliding windows (detail::pool): a window axis per kernel axis, then a
// multiply-and-sum (conv) or a reduction (pool) over the window axes — no im2col copy (a large conv copies
// its padded input once).
#include <limits>

#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

namespace detail {
Shape per_dim(const char* op, const char* what, const Shape& v, size_t dims) {
  SLUICE_CHECK_IN(ValueError, op, v.size() == 1 || v.size() == dims)
      << what << " needs 1 or " << dims << " values, got " << tuple_str(v);
  return v.size() == 1 ? Shape(dims, v[0]) : v;
}

Bounds resolve_pool_pads(const char* op, const Shape& padding, size_t dims) {
  SLUICE_CHECK_IN(ValueError, op, padding.size() == 1 || padding.size() == dims || padding.size() == 2 * dims)
      << "padding needs 1, " << dims << " or " << 2 * dims << " values, got " << tuple_str(padding);
  Bounds out;
  for (size_t i = 0; i < dims; i++) {
    if (padding.size() == 2 * dims)
      out.push_back({padding[2 * i], padding[2 * i + 1]});
    else
      out.push_back({padding[padding.size() == 1 ? 0 : i], padding[padding.size() == 1 ? 0 : i]});
  }
  return out;
}
}  // namespace detail

namespace {
// Pads for the last pads.size() axes, none for the leading ones.
Tensor pad_last(const Tensor& t, const Bounds& pads, Number value = 0) {
  Bounds all(size_t(t.ndim()) - pads.size(), {0, 0});
  all.insert(all.end(), pads.begin(), pads.end());
  return t.pad(all, value);
}

void check_fits(const char* op, const Tensor& padded, const Shape& k, const Shape& s, const Shape& d) {
  Shape in(padded.shape().end() - long(k.size()), padded.shape().end());
  for (size_t j = 0; j < k.size(); j++) {
    SLUICE_CHECK_IN(ShapeError, op, d[j] * (k[j] - 1) + 1 <= in[j] && k[j] > 0 && s[j] > 0 && d[j] > 0)
        << "kernel " << tuple_str(k) << " with stride " << tuple_str(s) << " and dilation " << tuple_str(d)
        << " does not fit the padded input " << tuple_str(in);
  }
}

Tensor windows(const char* op, const Tensor& padded, const Shape& k, const Shape& s, const Shape& d) {
  check_fits(op, padded, k, s, d);
  return detail::pool(padded, k, s, d);
}

// A strided convolution as a stride-1 one over the input's phases: position i*s + r of an axis becomes
// position i of phase r, a new channel. The kernel shrinks to ceil(k / s) taps per phase (taps past k are
// zero weights), and every window is contiguous again, so loads vectorize. The input copy is the one a
// padded conv makes anyway; the zero taps cost ceil(k/s)*s/k more multiply-adds.

// (A, B, *len) cut or zero-padded at the end to n * s along each spatial axis, then split into phases:
// (A, B * prod(s), *n), the channels ordered (B, *r).
Tensor phases(const Tensor& t, const Shape& n, const Shape& s) {
  const size_t dims = s.size();
  Shape split{t.shape()[0], t.shape()[1]}, order{0, 1}, merged{t.shape()[0], t.shape()[1] * prod(s)};
  Bounds fit{{0, t.shape()[0]}, {0, t.shape()[1]}}, grow(2, {0, 0});
  for (size_t j = 0; j < dims; j++) {
    const int64_t len = t.shape()[2 + j], want = n[j] * s[j];
    fit.push_back({0, std::min(len, want)}), grow.push_back({0, std::max<int64_t>(want - len, 0)});
    split.push_back(n[j]), split.push_back(s[j]);
    order.push_back(int64_t(3 + 2 * j));
  }
  for (size_t j = 0; j < dims; j++) order.push_back(int64_t(2 + 2 * j)), merged.push_back(n[j]);
  return t.shrink(fit).pad(grow).reshape(split).permute(order).reshape(merged);
}

// The kernel's taps per phase, ceil(k / s) (taps past k are zero weights).
Shape phase_taps(const Tensor& weight, const Shape& s) {
  Shape kk;
  for (size_t j = 0; j < s.size(); j++) kk.push_back((weight.shape()[2 + j] + s[j] - 1) / s[j]);
  return kk;
}

// (bs, C, *P) padded input -> (bs, C * prod(s), *n), n = out + ceil(k/s) - 1 positions per phase.
// With positions at most 1/16 of the channels each group reduces over (a short signal cut into long
// frames: an STFT), the copy is laid out channels last, so the reduction over the channels reads the
// input contiguously, as it reads the weight (whose phases stay at stride 1): Silero VAD's STFT went
// 73 -> 10 us on a CPU. Else channels first, so output rows read it contiguously (a 1/32-scale map of
// 660 positions and 960 phases lost 10% channels last).
Tensor space_to_depth(const Tensor& x, const Tensor& weight, const Shape& s, int64_t groups) {
  Shape n = phase_taps(weight, s);
  for (size_t j = 0; j < s.size(); j++) n[j] += (x.shape()[2 + j] - weight.shape()[2 + j]) / s[j];
  Tensor p = phases(x, n, s);
  if (prod(n) * 16 > p.shape()[1] / groups) return p.contiguous();
  Shape last{0}, back{0, int64_t(s.size()) + 1};
  for (size_t j = 0; j < s.size(); j++) last.push_back(int64_t(2 + j)), back.push_back(int64_t(1 + j));
  last.push_back(1);
  return p.permute(last).contiguous().permute(back);
}

// (cout, cin, *k) -> (cout, cin * prod(s), *ceil(k / s)), channels ordered as space_to_depth's.
Tensor space_to_depth_weight(const Tensor& w, const Shape& s) { return phases(w, phase_taps(w, s), s); }

Shape last_axes(size_t n) {
  Shape axes;
  for (size_t j = 0; j < n; j++) axes.push_back(-1 - int64_t(j));
  return axes;
}

// ceil_mode: grow the after-padding so the last partial window counts, unless it would start in padding.
Bounds apply_ceil_mode(const Tensor& t, Bounds pads, const Shape& k, const Shape& s, const Shape& d) {
  for (size_t j = 0; j < k.size(); j++) {
    int64_t i = t.shape()[size_t(t.ndim()) - k.size() + j], span = d[j] * (k[j] - 1) + 1;
    auto [before, after] = pads[j];
    int64_t o = (i + before + after - span + s[j] - 1) / s[j] + 1;
    pads[j].second += s[j] * (o - 1) + span - (i + before + after) -
                      std::max<int64_t>(s[j] * (o - 1) - (before + i - 1), 0);
  }
  return pads;
}

struct PoolSetup {
  Shape k, s, d;
  Bounds pads;
};
PoolSetup pool_setup(const char* op, const Tensor& t, const PoolOptions& o) {
  size_t dims = o.kernel.size() == 1 ? 2 : o.kernel.size();
  SLUICE_CHECK_IN(ShapeError, op, t.ndim() >= int64_t(dims))
      << "a " << dims << "-d pool needs at least " << dims << " dimensions, got " << tuple_str(t.shape());
  PoolSetup p;
  p.k = detail::per_dim(op, "kernel", o.kernel, dims);
  p.s = o.stride.empty() ? p.k : detail::per_dim(op, "stride", o.stride, dims);
  p.d = detail::per_dim(op, "dilation", o.dilation, dims);
  p.pads = detail::resolve_pool_pads(op, o.padding, dims);
  return p;
}
}  // namespace

// Multiply-adds from which a convolution copies its padded input (conv2d).
constexpr int64_t kCopyPaddedMacs = int64_t(1) << 20;

Tensor Tensor::conv2d(const Tensor& weight) const { return conv2d(weight, ConvOptions{}); }

// Windows (bs, cin, *out, *k) are broadcast against the weight as (bs, groups, rcout, *out, cin/groups, *k)
// and summed over the last 1 + dims axes.
Tensor Tensor::conv2d(const Tensor& weight, const ConvOptions& o) const {
  OpScope scope("conv2d");
  SLUICE_CHECK_IN(ShapeError, "conv2d", ndim() == weight.ndim() && ndim() >= 3)
      << "input " << tuple_str(shape()) << " and weight " << tuple_str(weight.shape())
      << " need the same rank, at least 3";
  SLUICE_CHECK_IN(ValueError, "conv2d", o.groups > 0) << "groups must be > 0, got " << o.groups;
  int64_t bs = shape()[0], cin_all = shape()[1], cout = weight.shape()[0], cin = weight.shape()[1],
          g = o.groups;
  Shape k(weight.shape().begin() + 2, weight.shape().end());
  size_t dims = k.size();
  SLUICE_CHECK_IN(ShapeError, "conv2d", cin * g == cin_all && cout % g == 0)
      << "input " << tuple_str(shape()) << " has " << cin_all << " channels, weight "
      << tuple_str(weight.shape()) << " with groups=" << g << " expects " << cin * g
      << " (and output channels divisible by groups)";
  SLUICE_CHECK_IN(ShapeError, "conv2d", !o.bias || o.bias->shape() == Shape{cout})
      << "bias " << tuple_str(o.bias->shape()) << " does not match " << cout << " output channels";
  Shape s = detail::per_dim("conv2d", "stride", o.stride, dims),
        d = detail::per_dim("conv2d", "dilation", o.dilation, dims);
  // A large convolution reads a padded copy of its input: read through the pad, every load of the
  // reduction would test its bounds and could not be a vector load (and a fused producer would be
  // recomputed for each output channel). A small one stays one kernel, where a launch costs more.
  Bounds pads = detail::resolve_pool_pads("conv2d", o.padding, dims);
  const bool depthwise = cin == 1 && cout == g;
  Tensor x = pad_last(*this, pads);
  const bool padded = std::any_of(pads.begin(), pads.end(), [](auto b) { return b.first || b.second; }),
             large = sluice::prod(shape()) / cin_all * cout * cin * sluice::prod(k) >= kCopyPaddedMacs,
             strided = std::any_of(s.begin(), s.end(), [](int64_t v) { return v > 1; }),
             dilated = std::any_of(d.begin(), d.end(), [](int64_t v) { return v > 1; });
  if (large && strided && !dilated) {
    check_fits("conv2d", x, k, s, d);
    return space_to_depth(x, weight, s, g).conv2d(space_to_depth_weight(weight, s), {o.bias, g});
  }
  if (padded && large && depthwise) {
    // A depthwise conv's copy pads the last axis only: the rest of the padding is a test per row of
    // taps, the same for the whole row, under which its loads stay vector loads (PP-OCR's 5x5 convs over
    // 2-row maps: a copy a third the size).
    Bounds last(pads.size(), {0, 0});
    last.back() = pads.back();
    pads.back() = {0, 0};
    x = pad_last(pad_last(*this, last).contiguous(), pads);
  } else if (padded && large) {
    x = x.contiguous();
  }
  x = windows("conv2d", x, k, s, d);
  Shape out(x.shape().begin() + 2, x.shape().begin() + 2 + long(dims));
  int64_t rcout = cout / g;
  Shape grouped{bs, g, cin, 1}, wide{bs, g, cin, rcout}, wview{1, g, rcout};
  grouped.insert(grouped.end(), out.begin(), out.end()), wide.insert(wide.end(), out.begin(), out.end());
  grouped.insert(grouped.end(), k.begin(), k.end()), wide.insert(wide.end(), k.begin(), k.end());
  Shape order{0, 1, 3};
  for (size_t j = 0; j < dims; j++) order.push_back(4 + int64_t(j));
  order.push_back(2);
  for (size_t j = 0; j < dims; j++) order.push_back(4 + int64_t(dims + j));
  wview.insert(wview.end(), dims, 1);
  wview.push_back(cin);
  wview.insert(wview.end(), k.begin(), k.end());
  // Sizes consistent by construction: one Tensor for the chain (see detail::pool).
  x = Tensor(x.uop().reshape(grouped).expand(wide).permute(order), device());
  Shape result{bs, cout};
  result.insert(result.end(), out.begin(), out.end());
  Tensor ret = (x * weight.reshape(wview)).sum(last_axes(1 + dims), true).reshape(result);
  if (!o.bias) return ret;
  Shape bview{1, cout};
  bview.insert(bview.end(), dims, 1);
  return ret + o.bias->reshape(bview);
}

namespace {
// A transposed convolution whose kernel equals its stride: the windows do not overlap, so each input pixel
// is multiplied into its own k-sized block of the output. One contraction over the input channels gives
// (bs, cout, *k, *in); interleaving the block axes with the input axes gives the output, which the padding
// crops and the output padding extends with zeros. No zeros are inserted and none are multiplied.
Tensor stride_sized_transpose(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                              const Shape& k, const Shape& p, const Shape& op) {
  const size_t dims = k.size();
  const int64_t bs = x.shape()[0], cin = x.shape()[1], cout = weight.shape()[1];
  Shape in(x.shape().begin() + 2, x.shape().end());
  Shape xv{bs, cin, 1}, wv{1, cin, cout}, order{0, 1}, full{bs, cout};
  xv.insert(xv.end(), dims, 1), xv.insert(xv.end(), in.begin(), in.end());
  wv.insert(wv.end(), k.begin(), k.end()), wv.insert(wv.end(), dims, 1);
  for (size_t j = 0; j < dims; j++) {
    order.push_back(int64_t(2 + dims + j)), order.push_back(int64_t(2 + j));  // in_j, k_j
    full.push_back(in[j] * k[j]);
  }
  Tensor y = (x.reshape(xv) * weight.reshape(wv)).sum({1}).permute(order).reshape(full);
  Bounds crop{{0, bs}, {0, cout}}, grow(2, {0, 0});
  for (size_t j = 0; j < dims; j++) {
    int64_t end = in[j] * k[j] + op[j] - p[j];
    crop.push_back({p[j], std::min(end, in[j] * k[j])});
    grow.push_back({0, std::max<int64_t>(end - in[j] * k[j], 0)});
  }
  y = y.shrink(crop).pad(grow);
  if (!bias) return y;
  Shape bview{1, cout};
  bview.insert(bview.end(), dims, 1);
  return y + bias->reshape(bview);
}
}  // namespace

Tensor Tensor::conv_transpose2d(const Tensor& weight) const {
  return conv_transpose2d(weight, ConvOptions{});
}

// A convolution of the input dilated by the stride (zeros between elements) with the weight flipped and its
// channel axes swapped, padded by (k - 1) * dilation - padding.
Tensor Tensor::conv_transpose2d(const Tensor& weight, const ConvOptions& o) const {
  OpScope scope("conv_transpose2d");
  SLUICE_CHECK_IN(ShapeError, "conv_transpose2d", ndim() == weight.ndim() && ndim() >= 3)
      << "input " << tuple_str(shape()) << " and weight " << tuple_str(weight.shape())
      << " need the same rank, at least 3";
  SLUICE_CHECK_IN(ShapeError, "conv_transpose2d",
                  o.groups > 0 && weight.shape()[0] == shape()[1] && weight.shape()[0] % o.groups == 0)
      << "input " << tuple_str(shape()) << " has " << shape()[1] << " channels, weight "
      << tuple_str(weight.shape()) << " with groups=" << o.groups << " expects " << weight.shape()[0];
  Shape k(weight.shape().begin() + 2, weight.shape().end());
  size_t dims = k.size();
  Shape s = detail::per_dim("conv_transpose2d", "stride", o.stride, dims);
  Shape d = detail::per_dim("conv_transpose2d", "dilation", o.dilation, dims);
  Shape p = detail::per_dim("conv_transpose2d", "padding", o.padding, dims);
  Shape op = detail::per_dim("conv_transpose2d", "output_padding", o.output_padding, dims);
  bool blocks = o.groups == 1 && k == s;
  for (size_t j = 0; j < dims; j++) blocks &= d[j] == 1 && 2 * p[j] < shape()[2 + j] * k[j] + op[j];
  if (blocks) {
    SLUICE_CHECK_IN(ShapeError, "conv_transpose2d", !o.bias || o.bias->shape() == Shape{weight.shape()[1]})
        << "bias " << tuple_str(o.bias->shape()) << " does not match " << weight.shape()[1]
        << " output channels";
    return stride_sized_transpose(*this, weight, o.bias, s, p, op);
  }
  Shape flips;
  for (size_t j = 0; j < dims; j++) flips.push_back(3 + int64_t(j));
  Tensor w = weight.unflatten(0, {o.groups, -1}).transpose(1, 2).flip(flips).flatten(0, 1);
  Tensor x = *this;
  if (std::any_of(s.begin(), s.end(), [](int64_t v) { return v > 1; })) {
    Shape pairs{x.shape()[0], x.shape()[1]}, dilated{x.shape()[0], x.shape()[1]};
    Bounds gaps(2, {0, 0}), cut{{0, x.shape()[0]}, {0, x.shape()[1]}};
    for (size_t j = 0; j < dims; j++) {
      int64_t n = x.shape()[2 + j];
      pairs.push_back(n), pairs.push_back(1);
      gaps.push_back({0, 0}), gaps.push_back({0, s[j] - 1});
      dilated.push_back(n * s[j]);
      cut.push_back({0, n * s[j] - (s[j] - 1)});
    }
    x = x.reshape(pairs).pad(gaps).reshape(dilated).shrink(cut);
  }
  Shape pads;
  for (size_t j = 0; j < dims; j++) {
    int64_t edge = (k[j] - 1) * d[j] - p[j];
    pads.push_back(edge), pads.push_back(edge + op[j]);
  }
  return x.conv2d(w, ConvOptions{o.bias, o.groups, {1}, d, pads});
}

Tensor Tensor::max_pool2d() const { return max_pool2d(PoolOptions{}); }
Tensor Tensor::max_pool2d(const PoolOptions& o) const {
  OpScope scope("max_pool2d");
  PoolSetup p = pool_setup("max_pool2d", *this, o);
  Bounds pads = o.ceil_mode ? apply_ceil_mode(*this, p.pads, p.k, p.s, p.d) : p.pads;
  double lowest = dtype().is_float() ? -std::numeric_limits<double>::infinity() : dtype().min();
  return windows("max_pool2d", pad_last(*this, pads, lowest), p.k, p.s, p.d).max(last_axes(p.k.size()));
}

Tensor Tensor::avg_pool2d() const { return avg_pool2d(PoolOptions{}); }
Tensor Tensor::avg_pool2d(const PoolOptions& o) const {
  OpScope scope("avg_pool2d");
  PoolSetup p = pool_setup("avg_pool2d", *this, o);
  Shape axes = last_axes(p.k.size());
  auto pooled = [&](const Tensor& x, const Bounds& pads) {
    return windows("avg_pool2d", pad_last(x, pads), p.k, p.s, p.d);
  };
  Bounds ceil_pads = apply_ceil_mode(*this, p.pads, p.k, p.s, p.d);
  if (!o.count_include_pad) {
    const Bounds& pads = o.ceil_mode ? ceil_pads : p.pads;
    return pooled(*this, pads).sum(axes) / pooled(ones_like(), pads).sum(axes);
  }
  if (!o.ceil_mode) return pooled(*this, p.pads).mean(axes);
  // Explicit padding counts in the divisor; the extra ceil-mode padding does not.
  Bounds extra;
  for (size_t j = 0; j < p.pads.size(); j++)
    extra.push_back({ceil_pads[j].first - p.pads[j].first, ceil_pads[j].second - p.pads[j].second});
  return pooled(*this, ceil_pads).sum(axes) / pooled(pad_last(*this, p.pads).ones_like(), extra).sum(axes);
}

}  // namespace sluice
