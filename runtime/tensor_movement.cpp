// Movement: views of a tensor (reshape, permute, pad, shrink, flip and what is built from them: slicing,
// cat, stack, split, repeat, roll, triangles). Nothing here computes except padding with a value.
#include <algorithm>
#include <numeric>

#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;
using detail::resolve_axis;

namespace {
Shape resolve_all(const char* op, const Shape& axes, int64_t ndim) {
  Shape out;
  for (int64_t a : axes) out.push_back(resolve_axis(op, a, ndim));
  return out;
}
}  // namespace

Tensor Tensor::reshape(const Shape& new_shape) const {
  OpScope scope("reshape");
  Shape s = new_shape;
  auto infer = std::find(s.begin(), s.end(), -1);
  SLUICE_CHECK_IN(ShapeError, "reshape", std::count(s.begin(), s.end(), -1) <= 1)
      << "only one size can be -1, got " << tuple_str(new_shape);
  if (infer != s.end()) {
    *infer = 1;
    int64_t known = sluice::prod(s);
    SLUICE_CHECK_IN(ShapeError, "reshape", known > 0 && numel() % known == 0)
        << "cannot reshape " << tuple_str(shape()) << " to " << tuple_str(new_shape);
    *infer = numel() / known;
  }
  detail::check_shape("reshape", s);
  return Tensor(uop_.reshape(s), device_);
}

Tensor Tensor::permute(const Shape& axes) const {
  OpScope scope("permute");
  SLUICE_CHECK_IN(ShapeError, "permute", int64_t(axes.size()) == ndim())
      << tuple_str(axes) << " is not a permutation of the axes of " << tuple_str(shape());
  return Tensor(uop_.permute(resolve_all("permute", axes, ndim())), device_);
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  OpScope scope("transpose");
  Shape order(static_cast<size_t>(ndim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[size_t(resolve_axis("transpose", a, ndim()))],
            order[size_t(resolve_axis("transpose", b, ndim()))]);
  return permute(order);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  OpScope scope("flatten");
  if (ndim() == 0) return reshape({1});
  auto s = size_t(resolve_axis("flatten", start, ndim())), e = size_t(resolve_axis("flatten", end, ndim()));
  SLUICE_CHECK_IN(ShapeError, "flatten", s <= e) << "start axis " << start << " is after end axis " << end;
  const Shape& sh = shape();
  Shape out(sh.begin(), sh.begin() + long(s));
  out.push_back(sluice::prod(std::span(sh).subspan(s, e - s + 1)));
  out.insert(out.end(), sh.begin() + long(e) + 1, sh.end());
  return reshape(out);
}

Tensor Tensor::unflatten(int64_t axis, const Shape& sizes) const {
  OpScope scope("unflatten");
  auto a = size_t(resolve_axis("unflatten", axis, ndim()));
  Shape out(shape().begin(), shape().begin() + long(a));
  out.insert(out.end(), sizes.begin(), sizes.end());
  out.insert(out.end(), shape().begin() + long(a) + 1, shape().end());
  // A -1 among the sizes is resolved by reshape, against the whole shape (the other axes are fixed).
  return reshape(out);
}

Tensor Tensor::squeeze() const {
  OpScope scope("squeeze");
  Shape out;
  for (int64_t s : shape())
    if (s != 1) out.push_back(s);
  return reshape(out);
}
Tensor Tensor::squeeze(int64_t axis) const {
  OpScope scope("squeeze");
  if (ndim() == 0) return *this;
  auto a = size_t(resolve_axis("squeeze", axis, ndim()));
  if (shape()[a] != 1) return *this;
  return detail::drop_axes(*this, {int64_t(a)});
}
Tensor Tensor::unsqueeze(int64_t axis) const {
  OpScope scope("unsqueeze");
  auto a = resolve_axis("unsqueeze", axis, ndim() + 1);
  Shape out = shape();
  out.insert(out.begin() + a, 1);
  return reshape(out);
}

Tensor Tensor::expand(const Shape& new_shape) const {
  OpScope scope("expand");
  SLUICE_CHECK_IN(ShapeError, "expand", new_shape.size() >= shape().size())
      << "cannot expand " << tuple_str(shape()) << " to " << tuple_str(new_shape);
  Shape s = new_shape;
  size_t lead = s.size() - shape().size();
  for (size_t i = lead; i < s.size(); i++)
    if (s[i] == -1) s[i] = shape()[i - lead];
  detail::check_shape("expand", s);
  return detail::broadcast_to("expand", *this, s);
}

// ---------------------------------------------------------------- pad, shrink, flip

Tensor Tensor::pad(const Bounds& pads, Number value, PadMode mode) const {
  OpScope scope("pad");
  SLUICE_CHECK_IN(ShapeError, "pad", int64_t(pads.size()) == ndim())
      << "needs one (before, after) pair per axis, got " << tuple_str(pads) << " for " << tuple_str(shape());
  if (std::all_of(pads.begin(), pads.end(), [](auto& p) { return p.first == 0 && p.second == 0; }))
    return *this;
  bool negative = std::any_of(pads.begin(), pads.end(), [](auto& p) { return p.first < 0 || p.second < 0; });
  if (mode == PadMode::Constant) {
    Bounds grow, crop;
    for (size_t i = 0; i < pads.size(); i++) {
      grow.push_back({std::max<int64_t>(pads[i].first, 0), std::max<int64_t>(pads[i].second, 0)});
      int64_t size = shape()[i] + grow[i].first + grow[i].second;
      crop.push_back({-std::min<int64_t>(pads[i].first, 0), size + std::min<int64_t>(pads[i].second, 0)});
      SLUICE_CHECK_IN(ShapeError, "pad", crop[i].first <= crop[i].second)
          << "padding " << tuple_str(pads) << " crops more than all of " << tuple_str(shape());
    }
    Tensor x(uop_.pad(grow), device_);
    bool zero = value.kind == Number::Kind::Float ? value.f == 0 : value.i == 0;
    if (!zero && x.uop() != uop_) {  // PAD fills with zeros; a mask of where the data is selects the value
      Tensor inside(detail::const_tensor(device_, dtypes::bool_, true, shape()).uop().pad(grow), device_);
      x = inside.where(x, detail::const_tensor(device_, dtype(), value));
    }
    return x.shrink(crop);
  }
  SLUICE_CHECK_IN(ValueError, "pad", !negative)
      << "negative padding " << tuple_str(pads) << " needs constant mode";
  Tensor x = *this;
  for (size_t d = 0; d < pads.size(); d++) {
    auto [before, after] = pads[d];
    int64_t s = x.shape()[d];
    auto piece = [&](int64_t b, int64_t e) {
      Bounds r;
      for (size_t i = 0; i < size_t(x.ndim()); i++)
        r.push_back(i == d ? std::pair{b, e} : std::pair{int64_t(0), x.shape()[i]});
      return x.shrink(r);
    };
    std::vector<Tensor> parts;
    if (mode == PadMode::Reflect) {
      SLUICE_CHECK_IN(ValueError, "pad", before < s && after < s)
          << "reflect padding " << tuple_str(pads) << " must be less than the sizes of "
          << tuple_str(shape());
      if (before) parts.push_back(piece(1, before + 1).flip({int64_t(d)}));
      parts.push_back(x);
      if (after) parts.push_back(piece(s - 1 - after, s - 1).flip({int64_t(d)}));
    } else if (mode == PadMode::Replicate) {
      SLUICE_CHECK_IN(ValueError, "pad", s > 0 || (before == 0 && after == 0))
          << "cannot replicate-pad an empty axis of " << tuple_str(shape());
      auto edge = [&](int64_t b, int64_t n) {
        Shape to = x.shape();
        to[d] = n;
        return piece(b, b + 1).expand(to);
      };
      if (before) parts.push_back(edge(0, before));
      parts.push_back(x);
      if (after) parts.push_back(edge(s - 1, after));
    } else {
      SLUICE_CHECK_IN(ValueError, "pad", before <= s && after <= s)
          << "circular padding " << tuple_str(pads) << " wraps more than once around " << tuple_str(shape());
      if (before) parts.push_back(piece(s - before, s));
      parts.push_back(x);
      if (after) parts.push_back(piece(0, after));
    }
    x = parts.size() == 1 ? x : sluice::cat(parts, int64_t(d));
  }
  return x;
}

Tensor Tensor::shrink(const Bounds& bounds) const {
  OpScope scope("shrink");
  SLUICE_CHECK_IN(ShapeError, "shrink", int64_t(bounds.size()) == ndim())
      << "needs one (begin, end) pair per axis, got " << tuple_str(bounds) << " for " << tuple_str(shape());
  return Tensor(uop_.shrink(bounds), device_);
}

Tensor Tensor::flip(const Shape& axes) const {
  OpScope scope("flip");
  return Tensor(uop_.flip(resolve_all("flip", axes, ndim())), device_);
}

// ---------------------------------------------------------------- slicing

Tensor Tensor::slice(const std::vector<Slice>& slices) const {
  OpScope scope("slice");
  SLUICE_CHECK_IN(ShapeError, "slice", int64_t(slices.size()) <= ndim())
      << slices.size() << " slices for " << tuple_str(shape());
  Bounds window;
  Shape flips, steps, counts;
  for (size_t i = 0; i < size_t(ndim()); i++) {
    int64_t n = shape()[i];
    Slice sl = i < slices.size() ? slices[i] : Slice{};
    SLUICE_CHECK_IN(ValueError, "slice", sl.step != 0) << "step of axis " << i << " is 0";
    // Python's slice.indices: clamp to [lower, upper], where a negative step may stop before index 0.
    int64_t lower = sl.step > 0 ? 0 : -1, upper = sl.step > 0 ? n : n - 1;
    auto norm = [&](std::optional<int64_t> v, int64_t dflt) {
      if (!v) return dflt;
      int64_t x = *v < 0 ? *v + n : *v;
      return std::clamp(x, lower, upper);
    };
    int64_t start = norm(sl.start, sl.step > 0 ? lower : upper),
            stop = norm(sl.stop, sl.step > 0 ? upper : lower);
    // A step as long as the axis takes at most one element, as any longer one does: clamping it keeps
    // |INT64_MIN| and the padding below (count * step) from overflowing.
    const int64_t longest = std::max<int64_t>(n, 1);
    int64_t step = sl.step == INT64_MIN || std::abs(sl.step) > longest ? longest : std::abs(sl.step),
            span = sl.step > 0 ? stop - start : start - stop;
    int64_t count = span > 0 ? (span - 1) / step + 1 : 0;
    int64_t first = sl.step > 0 ? start : start - (count - 1) * step;  // lowest index taken
    window.push_back(count ? std::pair{first, first + (count - 1) * step + 1}
                           : std::pair{int64_t(0), int64_t(0)});
    if (sl.step < 0) flips.push_back(int64_t(i));
    steps.push_back(step), counts.push_back(count);
  }
  Tensor x = shrink(window).flip(flips);
  if (std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; })) return x;
  // Strides: pad each axis to count*step, split it into (count, step) and keep step index 0.
  Bounds grow, keep;
  Shape split;
  for (size_t i = 0; i < steps.size(); i++) {
    grow.push_back({0, counts[i] * steps[i] - x.shape()[i]});
    split.push_back(counts[i]), split.push_back(steps[i]);
    keep.push_back({0, counts[i]}), keep.push_back({0, 1});
  }
  return x.pad(grow).reshape(split).shrink(keep).reshape(counts);
}

Tensor Tensor::select(int64_t axis, int64_t index) const {
  OpScope scope("select");
  auto a = resolve_axis("select", axis, ndim());
  int64_t n = shape()[size_t(a)], i = index < 0 ? index + n : index;
  SLUICE_CHECK_IN(ShapeError, "select", i >= 0 && i < n)
      << "index " << index << " is out of range for axis " << a << " of " << tuple_str(shape());
  Bounds b;
  for (int64_t d = 0; d < ndim(); d++)
    b.push_back(d == a ? std::pair{i, i + 1} : std::pair{int64_t(0), shape()[size_t(d)]});
  return detail::drop_axes(shrink(b), {a});
}

// ---------------------------------------------------------------- joining and splitting

// Each tensor padded with zeros to the whole result along `axis`, then added: a fused elementwise op.
Tensor cat(const std::vector<Tensor>& tensors, int64_t axis) {
  OpScope scope("cat");
  SLUICE_CHECK_IN(ValueError, "cat", !tensors.empty()) << "needs at least one tensor";
  const Tensor& t0 = tensors[0];
  auto a = size_t(resolve_axis("cat", axis, t0.ndim()));
  std::vector<DType> dts;
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    SLUICE_CHECK_IN(DeviceError, "cat", t.device() == t0.device())
        << "tensors are on different devices: " << t0.device() << " and " << t.device();
    bool fits = t.ndim() == t0.ndim();
    for (size_t i = 0; fits && i < size_t(t.ndim()); i++) fits = i == a || t.shape()[i] == t0.shape()[i];
    SLUICE_CHECK_IN(ShapeError, "cat", fits) << "shapes " << tuple_str(t0.shape()) << " and "
                                             << tuple_str(t.shape()) << " differ outside axis " << a;
    dts.push_back(t.dtype());
    total += t.shape()[a];
  }
  DType dt = least_upper_dtype(dts);
  std::optional<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    Bounds p(size_t(t.ndim()), {0, 0});
    p[a] = {offset, total - offset - t.shape()[a]};
    offset += t.shape()[a];
    Tensor piece = t.cast(dt).pad(p);
    out = out ? *out + piece : piece;
  }
  return *out;
}
Tensor stack(const std::vector<Tensor>& tensors, int64_t axis) {
  OpScope scope("stack");
  SLUICE_CHECK_IN(ValueError, "stack", !tensors.empty()) << "needs at least one tensor";
  auto a = resolve_axis("stack", axis, tensors[0].ndim() + 1);
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    SLUICE_CHECK_IN(ShapeError, "stack", t.shape() == tensors[0].shape())
        << "shapes " << tuple_str(tensors[0].shape()) << " and " << tuple_str(t.shape()) << " differ";
    parts.push_back(t.unsqueeze(a));
  }
  return cat(parts, a);
}

std::vector<Tensor> Tensor::split(const Shape& sizes, int64_t axis) const {
  OpScope scope("split");
  auto a = size_t(resolve_axis("split", axis, ndim()));
  SLUICE_CHECK_IN(ValueError, "split",
                  std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s >= 0; }) &&
                      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) == shape()[a])
      << "sizes " << tuple_str(sizes) << " do not add up to " << shape()[a] << " (axis " << a << " of "
      << tuple_str(shape()) << ")";
  std::vector<Tensor> out;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    Bounds b;
    for (size_t d = 0; d < size_t(ndim()); d++)
      b.push_back(d == a ? std::pair{offset, offset + s} : std::pair{int64_t(0), shape()[d]});
    out.push_back(shrink(b));
    offset += s;
  }
  return out;
}
std::vector<Tensor> Tensor::split(int64_t size, int64_t axis) const {
  OpScope scope("split");
  SLUICE_CHECK_IN(ValueError, "split", size > 0) << "size must be > 0, got " << size;
  int64_t n = shape(axis);
  Shape sizes;
  for (int64_t done = 0; done < n; done += size) sizes.push_back(std::min(size, n - done));
  return split(sizes, axis);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t axis) const {
  OpScope scope("chunk");
  SLUICE_CHECK_IN(ValueError, "chunk", chunks > 0) << "chunks must be > 0, got " << chunks;
  int64_t n = shape(axis);
  return n == 0 ? split(Shape(size_t(chunks), 0), axis) : split((n + chunks - 1) / chunks, axis);
}

// Each repeated axis becomes (r, s): a new size-1 axis in front, expanded to r, merged back.
Tensor Tensor::repeat(const Shape& repeats) const {
  OpScope scope("repeat");
  SLUICE_CHECK_IN(ShapeError, "repeat", int64_t(repeats.size()) >= ndim())
      << tuple_str(repeats) << " has fewer entries than " << tuple_str(shape()) << " has axes";
  SLUICE_CHECK_IN(ValueError, "repeat",
                  std::all_of(repeats.begin(), repeats.end(), [](int64_t r) { return r >= 0; }))
      << "negative repeat in " << tuple_str(repeats);
  Shape base(repeats.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  Shape unsqueezed, expanded, final_shape;
  for (size_t i = 0; i < base.size(); i++) {
    unsqueezed.push_back(1), unsqueezed.push_back(base[i]);
    expanded.push_back(repeats[i]), expanded.push_back(base[i]);
    final_shape.push_back(repeats[i] * base[i]);
  }
  return reshape(unsqueezed).expand(expanded).reshape(final_shape);
}

Tensor Tensor::roll(const Shape& shifts, const Shape& axes) const {
  OpScope scope("roll");
  SLUICE_CHECK_IN(ValueError, "roll", shifts.size() == axes.size())
      << tuple_str(shifts) << " shifts for " << tuple_str(axes) << " axes";
  Tensor x = *this;
  for (size_t i = 0; i < axes.size(); i++) {
    auto a = resolve_axis("roll", axes[i], ndim());
    int64_t n = shape()[size_t(a)];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    auto parts = x.split({n - s, s}, a);
    x = sluice::cat({parts[1], parts[0]}, a);
  }
  return x;
}

namespace detail {
// The reference design's _tri: ones (s, s) padded to rows of 2s and read back as rows of 2s - 1 put row i's
// ones at columns i..i+s-1, an upper triangle; a window of it shifts the diagonal.
Tensor upper_triangle(int64_t r, int64_t c, int64_t diagonal, const std::string& device) {
  if (r == 0 || c == 0 || diagonal >= c) return Tensor::zeros({r, c}, dtypes::bool_, device);
  if (r + diagonal <= 0) return Tensor::ones({r, c}, dtypes::bool_, device);
  int64_t s = r + c - 1;
  Tensor t = Tensor::ones({s, s}, dtypes::bool_, device).pad({{0, 0}, {0, s}}).flatten();
  t = t.shrink({{0, s * (2 * s - 1)}}).reshape({s, 2 * s - 1}).shrink({{0, s}, {0, s}});
  return diagonal <= 0 ? t.shrink({{0, r}, {-diagonal, c - diagonal}})
                       : t.shrink({{diagonal, r + diagonal}, {0, c}});
}
}  // namespace detail

namespace {
Tensor triangle_mask(const char* op, const Tensor& t, int64_t diagonal) {
  SLUICE_CHECK_IN(ShapeError, op, t.ndim() >= 2)
      << "needs at least 2 dimensions, got " << tuple_str(t.shape());
  return detail::upper_triangle(t.shape(-2), t.shape(-1), diagonal, t.device());
}
}  // namespace

Tensor Tensor::triu(int64_t diagonal) const {
  OpScope scope("triu");
  return triangle_mask("triu", *this, diagonal).where(*this, zeros_like());
}
Tensor Tensor::tril(int64_t diagonal) const {
  OpScope scope("tril");
  return triangle_mask("tril", *this, diagonal + 1).where(zeros_like(), *this);
}

}  // namespace sluice

namespace sluice {
Tensor Tensor::cat(const std::vector<Tensor>& others, int64_t axis) const {
  std::vector<Tensor> all{*this};
  all.insert(all.end(), others.begin(), others.end());
  return sluice::cat(all, axis);
}
Tensor Tensor::stack(const std::vector<Tensor>& others, int64_t axis) const {
  std::vector<Tensor> all{*this};
  all.insert(all.end(), others.begin(), others.end());
  return sluice::stack(all, axis);
}
}  // namespace sluice
