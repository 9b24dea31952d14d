// Views and their movement ops, modelled on the reference design's shape/view.py.
#include "core/ir/view.h"

#include <algorithm>
#include <functional>
#include <tuple>

#include "base/error.h"
#include "core/ir/alu.h"

namespace sluice {

namespace {

void check_sizes(const char* func, const Shape& shape) {
  if (std::any_of(shape.begin(), shape.end(), [](int64_t s) { return s < 0; }))
    SLUICE_FAIL(ShapeError, func) << "negative size in " << tuple_str(shape);
}

void check_pairs(const char* func, const Shape& shape, const Bounds& arg) {
  if (arg.size() != shape.size())
    SLUICE_FAIL(ShapeError, func) << "expected " << shape.size() << " (begin, end) pairs for "
                                  << tuple_str(shape) << ", got " << tuple_str(arg);
}

// `strides` with 0 on size-1 axes: they never move the index.
Shape canonical_strides(const Shape& shape, Shape strides) {
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] == 1) strides[i] = 0;
  return strides;
}

// Groups of adjacent axes that behave as one strided axis: {size, stride, size that is not broadcast}.
// Size-1 axes, and axes the mask narrows to one element, merge into their neighbour.
struct MergedDim {
  int64_t size, stride, real;
};
std::vector<MergedDim> merge_dims(const Shape& shape, const Shape& strides,
                                  const std::optional<Bounds>& mask) {
  std::vector<MergedDim> ret;
  if (shape.empty()) return ret;
  ret.push_back({shape[0], strides[0], strides[0] != 0 ? shape[0] : 0});
  bool merging = mask ? (*mask)[0].second - (*mask)[0].first == 1 : shape[0] == 1;
  for (size_t i = 1; i < shape.size(); i++) {
    int64_t s = shape[i], st = strides[i];
    if (s == 1) continue;
    MergedDim& last = ret.back();
    if (merging || last.stride == s * st)
      last = {last.size * s, st, st != 0 ? (merging ? s : last.real * s) : 0};
    else
      ret.push_back({s, st, st != 0 ? s : 0});
    merging = mask && (*mask)[i].second - (*mask)[i].first == 1;
  }
  return ret;
}

// The mask of a reshape to `new_shape`, or std::nullopt when the valid region is not a box there.
std::optional<Bounds> reshape_mask(const std::optional<Bounds>& old_mask, const Shape& old_shape,
                                   const Shape& new_shape) {
  Bounds out;
  if (!old_mask) {
    for (int64_t s : new_shape) out.push_back({0, s});
    return out;
  }
  // Walk both shapes from the innermost axis, splitting or combining old axes to fit the new ones.
  size_t oi = old_shape.size(), ni = new_shape.size();
  auto next_old = [&] { return oi > 0 ? old_shape[--oi] : int64_t(1); };
  auto next_new = [&] { return ni > 0 ? new_shape[--ni] : int64_t(1); };
  size_t mi = old_mask->size();
  auto next_mask = [&] { return mi > 0 ? (*old_mask)[--mi] : std::pair<int64_t, int64_t>{0, 1}; };

  int64_t curr_stride = 1, old_dim = next_old(), new_dim = next_new();
  auto [l, r] = next_mask();
  while (out.size() < new_shape.size()) {
    int64_t next_stride = new_dim * curr_stride;
    if (old_dim == next_stride) {  // the axes line up: copy the mask
      out.push_back({floordiv(l, curr_stride), floordiv(r - 1, curr_stride) + 1});
      curr_stride = 1, old_dim = next_old(), new_dim = next_new();
      std::tie(l, r) = next_mask();
    } else if (old_dim > next_stride) {  // split the old axis: the mask must not straddle a new axis
      if (old_dim % next_stride != 0) return std::nullopt;
      if ((l % next_stride != 0 || r % next_stride != 0) &&
          floordiv(l, next_stride) != floordiv(r - 1, next_stride))
        return std::nullopt;
      out.push_back({floordiv(floormod(l, next_stride), curr_stride),
                     floordiv(floormod(r - 1, next_stride), curr_stride) + 1});
      curr_stride = next_stride, new_dim = next_new();
    } else {  // combine with the next old axis: only if the combined valid region stays one interval
      auto [nl, nr] = next_mask();
      if (!(l == 0 && r == old_dim) && l != r && nr - nl != 1) return std::nullopt;
      l = nl * old_dim + l, r = (nr - 1) * old_dim + r;
      old_dim *= next_old();
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// The coordinates of flat position `pos` in a dense buffer of `shape`.
Shape unravel(const Shape& shape, int64_t pos) {
  Shape out(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    out[i] = floormod(floordiv(pos, acc), shape[i]);
    acc *= shape[i];
  }
  return out;
}

// A view of `arg` = [begin, end) per axis that may reach outside this one (pad passes negative begins);
// `mask` is the region of the result that is valid, intersected with this view's own mask.
View resize(const View& v, const Bounds& arg, std::optional<Bounds> mask) {
  int64_t offset = v.offset;
  Shape shape;
  for (size_t i = 0; i < arg.size(); i++) {
    offset += v.strides[i] * arg[i].first;
    shape.push_back(arg[i].second - arg[i].first);
  }
  if (v.mask) {
    Bounds moved;  // the old mask in the new coordinates, clamped to the new shape
    for (size_t i = 0; i < arg.size(); i++) {
      auto [mb, me] = (*v.mask)[i];
      auto [ab, ae] = arg[i];
      moved.push_back({std::max<int64_t>(0, std::min(mb - ab, ae - ab)),
                       std::max<int64_t>(0, std::min(me - ab, ae - ab))});
    }
    if (mask)
      for (size_t i = 0; i < arg.size(); i++)
        moved[i] = {std::max(moved[i].first, (*mask)[i].first), std::min(moved[i].second, (*mask)[i].second)};
    mask = std::move(moved);
  }
  return View::create(std::move(shape), v.strides, offset, std::move(mask));
}

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

}  // namespace

void check_reshape(const Shape& shape, const Shape& new_shape) {
  check_sizes("reshape", new_shape);
  SLUICE_CHECK_IN(ShapeError, "reshape", prod(shape) == prod(new_shape))
      << "cannot reshape " << tuple_str(shape) << " to " << tuple_str(new_shape);
}

void check_permute(const Shape& shape, const Shape& axes) {
  std::vector<bool> seen(shape.size());
  bool ok = axes.size() == shape.size();
  for (int64_t a : axes) {
    ok = ok && a >= 0 && a < int64_t(shape.size()) && !seen[size_t(a)];
    if (ok) seen[size_t(a)] = true;
  }
  SLUICE_CHECK_IN(ShapeError, "permute", ok)
      << tuple_str(axes) << " is not a permutation of the axes of " << tuple_str(shape);
}

void check_expand(const Shape& shape, const Shape& new_shape) {
  bool ok = new_shape.size() == shape.size();
  for (size_t i = 0; ok && i < shape.size(); i++)
    ok = new_shape[i] >= 0 && (shape[i] == new_shape[i] || shape[i] == 1);
  SLUICE_CHECK_IN(ShapeError, "expand", ok)
      << "cannot expand " << tuple_str(shape) << " to " << tuple_str(new_shape);
}

void check_pad(const Shape& shape, const Bounds& pads) {
  check_pairs("pad", shape, pads);
  SLUICE_CHECK_IN(
      ShapeError, "pad",
      std::all_of(pads.begin(), pads.end(), [](auto& p) { return p.first >= 0 && p.second >= 0; }))
      << "negative padding " << tuple_str(pads) << " for " << tuple_str(shape);
}

void check_shrink(const Shape& shape, const Bounds& bounds) {
  check_pairs("shrink", shape, bounds);
  for (size_t i = 0; i < shape.size(); i++) {
    auto [b, e] = bounds[i];
    SLUICE_CHECK_IN(ShapeError, "shrink", 0 <= b && b <= e && e <= shape[i])
        << "cannot shrink " << tuple_str(shape) << " to " << tuple_str(bounds) << ": axis " << i
        << " needs 0 <= begin <= end <= " << shape[i];
  }
}

void check_flip(const Shape& shape, const Shape& axes) {
  std::vector<bool> flipped(shape.size());
  for (int64_t a : axes) {
    SLUICE_CHECK_IN(ShapeError, "flip", a >= 0 && a < int64_t(shape.size()))
        << "axis " << a << " is out of range for " << tuple_str(shape);
    SLUICE_CHECK_IN(ShapeError, "flip", !flipped[size_t(a)])
        << "axis " << a << " appears twice in " << tuple_str(axes);
    flipped[size_t(a)] = true;
  }
}

int64_t prod(std::span<const int64_t> v) {
  if (std::find(v.begin(), v.end(), 0) != v.end()) return 0;
  int64_t p = 1;
  for (int64_t x : v)
    SLUICE_CHECK_IN(ShapeError, "shape", !__builtin_mul_overflow(p, x, &p))
        << "the sizes of " << tuple_str(Shape(v.begin(), v.end())) << " multiply past 2^63";
  return p;
}

Shape strides_for_shape(const Shape& shape) {
  Shape strides(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = acc;
    acc *= shape[i];
  }
  return canonical_strides(shape, std::move(strides));
}

std::string tuple_str(std::span<const int64_t> v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string tuple_str(const Bounds& b) {
  std::string s = "(";
  for (size_t i = 0; i < b.size(); i++)
    s += (i ? ", " : "") + tuple_str(std::vector<int64_t>{b[i].first, b[i].second});
  return s + (b.size() == 1 ? ",)" : ")");
}

View View::create(Shape shape, Shape strides, int64_t offset, std::optional<Bounds> mask) {
  check_sizes("create", shape);
  SLUICE_ASSERT(strides.empty() || strides.size() == shape.size());
  SLUICE_ASSERT(!mask || mask->size() == shape.size());
  strides = strides.empty() ? strides_for_shape(shape) : canonical_strides(shape, std::move(strides));
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    return View{shape, Shape(shape.size(), 0), 0, std::nullopt, true};
  if (mask) {
    bool all = true, empty = false, single = false;
    for (size_t i = 0; i < shape.size(); i++) {
      auto [b, e] = (*mask)[i];
      all &= b == 0 && e == shape[i];
      empty |= b >= e;
      single |= b + 1 >= e;
    }
    if (all) {
      mask.reset();
    } else if (empty) {  // nothing is valid: every such view is the same
      strides.assign(shape.size(), 0);
      offset = 0;
      mask = Bounds(shape.size(), {0, 0});
    } else if (single) {  // an axis with one valid element never moves the index: fold it into the offset
      for (size_t i = 0; i < shape.size(); i++) {
        auto [b, e] = (*mask)[i];
        if (b + 1 >= e) offset += strides[i] * b, strides[i] = 0;
      }
    }
  }
  bool contiguous = offset == 0 && !mask && strides == strides_for_shape(shape);
  return View{std::move(shape), std::move(strides), offset, std::move(mask), contiguous};
}

std::optional<View> View::reshape(const Shape& new_shape) const {
  check_reshape(shape, new_shape);
  if (shape == new_shape) return *this;
  if (size() == 0 || contiguous) return create(new_shape);
  if (mask && std::any_of(mask->begin(), mask->end(), [](auto& m) { return m.first >= m.second; })) {
    // Nothing is valid, in any shape; but a 0-d view has no axis to carry the empty mask.
    if (new_shape.empty()) return std::nullopt;
    return create(new_shape, {}, 0, Bounds(new_shape.size(), {0, 0}));
  }

  // Split or combine the merged axes into the new ones, innermost first; a new axis that would straddle
  // two merged axes means the result is not one strided view.
  Shape r_strides;
  size_t ni = new_shape.size();
  auto dims = merge_dims(shape, strides, mask);
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    int64_t acc = 1, stride = it->stride;
    while (acc < it->size && ni > 0) {
      int64_t new_dim = new_shape[--ni];
      r_strides.push_back(stride * acc);
      acc *= new_dim;
      if (acc >= it->real) stride = 0;  // past the part that is not broadcast
    }
    if (acc != it->size) return std::nullopt;
  }
  Shape new_strides(new_shape.size() - r_strides.size(), 0);
  new_strides.insert(new_strides.end(), r_strides.rbegin(), r_strides.rend());

  auto new_mask = reshape_mask(mask, shape, new_shape);
  if (!new_mask) return std::nullopt;
  // Axes masked to one element get stride 0; the offset moves so that the first valid element stays put.
  int64_t extra_offset = 0;
  for (size_t i = 0; i < new_shape.size(); i++) {
    if ((*new_mask)[i].second - (*new_mask)[i].first == 1) new_strides[i] = 0;
    extra_offset -= (*new_mask)[i].first * new_strides[i];
  }
  if (mask)
    for (size_t i = 0; i < shape.size(); i++) extra_offset += (*mask)[i].first * strides[i];
  return create(new_shape, std::move(new_strides), offset + extra_offset, std::move(new_mask));
}

View View::permute(const Shape& axes) const {
  check_permute(shape, axes);
  Shape s, st;
  std::optional<Bounds> m;
  if (mask) m.emplace();
  for (int64_t a : axes) {
    s.push_back(shape[a]);
    st.push_back(strides[a]);
    if (mask) m->push_back((*mask)[a]);
  }
  return create(std::move(s), std::move(st), offset, std::move(m));
}

View View::expand(const Shape& new_shape) const {
  check_expand(shape, new_shape);
  if (size() == 0) return create(new_shape);
  std::optional<Bounds> m = mask;
  if (m)
    for (size_t i = 0; i < shape.size(); i++)
      if (shape[i] != new_shape[i])
        (*m)[i] = (*m)[i].second > (*m)[i].first ? std::pair<int64_t, int64_t>{0, new_shape[i]}
                                                 : std::pair<int64_t, int64_t>{0, 0};
  return create(new_shape, strides, offset, std::move(m));
}

View View::pad(const Bounds& pads) const {
  check_pad(shape, pads);
  if (std::all_of(pads.begin(), pads.end(), [](auto& p) { return p.first == 0 && p.second == 0; }))
    return *this;
  Bounds arg, valid;
  for (size_t i = 0; i < shape.size(); i++) {
    arg.push_back({-pads[i].first, shape[i] + pads[i].second});
    valid.push_back({pads[i].first, shape[i] + pads[i].first});
  }
  return resize(*this, arg, std::move(valid));
}

View View::shrink(const Bounds& bounds) const {
  check_shrink(shape, bounds);
  return resize(*this, bounds, std::nullopt);
}

View View::flip(const Shape& axes) const {
  check_flip(shape, axes);
  std::vector<bool> flipped(shape.size());
  for (int64_t a : axes) flipped[size_t(a)] = true;
  Shape st = strides;
  std::optional<Bounds> m = mask;
  int64_t off = offset;
  for (size_t i = 0; i < shape.size(); i++) {
    if (!flipped[i]) continue;
    off += (shape[i] - 1) * strides[i];
    st[i] = -strides[i];
    if (m) (*m)[i] = {shape[i] - (*m)[i].second, shape[i] - (*m)[i].first};
  }
  return create(shape, std::move(st), off, std::move(m));
}

View View::minify() const {
  Shape min_shape;
  for (const MergedDim& d : merge_dims(shape, strides, mask)) min_shape.push_back(d.size);
  return reshape(min_shape).value_or(*this);
}

// Composition as in the reference design's View.__add__: project `top`'s offset and strides onto this
// view's axes, check that no axis of `top` carries across an axis of this view, then carry the masks over.
std::optional<View> View::operator+(const View& top) const {
  const View& vm2 = *this;
  const View& vm1 = top;
  if (vm2.contiguous) return vm1;
  if (vm1.contiguous && vm1.shape == vm2.shape) return vm2;
  if (vm1.contiguous && vm1.size() == vm2.size())
    if (auto r = vm2.reshape(vm1.shape)) return r;
  if (vm1.size() == 0) return create(vm1.shape);
  if (vm1.mask) {
    // Merge the valid box of `top` alone, then pad it back out.
    View inner = vm1.shrink(*vm1.mask);
    if (inner == vm1) return std::nullopt;
    auto merged = vm2 + inner;
    if (!merged) return std::nullopt;
    Bounds pads;
    for (size_t i = 0; i < vm1.shape.size(); i++)
      pads.push_back({(*vm1.mask)[i].first, vm1.shape[i] - (*vm1.mask)[i].second});
    return merged->pad(pads);
  }
  SLUICE_ASSERT(vm2.size() > 0);

  // Stepping one along axis d1 of `top` steps terms[d2] = {(d1, s1)} along axis d2 of this view, as long as
  // no step carries into the next axis: that is checked below.
  size_t n1 = vm1.shape.size(), n2 = vm2.shape.size();
  Shape origin = unravel(vm2.shape, vm1.offset);
  std::vector<std::vector<std::pair<size_t, int64_t>>> terms(n2);
  Shape strides(n1, 0);
  for (size_t d1 = 0; d1 < n1; d1++) {
    if (vm1.strides[d1] == 0) continue;
    Shape step = unravel(vm2.shape, vm1.offset + vm1.strides[d1]);
    for (size_t d2 = 0; d2 < n2; d2++) {
      int64_t s1 = step[d2] - origin[d2];
      if (s1 == 0) continue;
      terms[d2].push_back({d1, s1});
      strides[d1] += s1 * vm2.strides[d2];
    }
  }

  // A linear form in the indices of `top`, and its exact range over the whole of `top`.
  struct Linear {
    Shape coef;
    int64_t c = 0;
  };
  auto range = [&](const Linear& f) {
    std::pair<int64_t, int64_t> r{f.c, f.c};
    for (size_t d1 = 0; d1 < n1; d1++) {
      int64_t span = f.coef[d1] * (vm1.shape[d1] - 1);
      (span < 0 ? r.first : r.second) += span;
    }
    return r;
  };

  // Group axes of this view (innermost first) until the position within the group provably stays in
  // range: those groups are the axes `top` really sees. If they differ from this view's axes, reshape
  // this view to them first.
  std::vector<std::pair<int64_t, Linear>> extents;  // innermost first: {size, position in the group}
  int64_t merged_size = 1;
  Linear merged{Shape(n1, 0), 0};
  for (size_t d2 = n2; d2-- > 0;) {
    for (auto [d1, s1] : terms[d2]) merged.coef[d1] += s1 * merged_size;
    merged.c += origin[d2] * merged_size;
    merged_size *= vm2.shape[d2];
    auto [lo, hi] = range(merged);
    if (lo >= 0 && hi < merged_size) {
      extents.push_back({merged_size, merged});
      merged_size = 1;
      merged = Linear{Shape(n1, 0), 0};
    }
  }
  if (range(merged) != std::pair<int64_t, int64_t>{0, 0}) return std::nullopt;
  Shape grouped;
  for (auto it = extents.rbegin(); it != extents.rend(); ++it) grouped.push_back(it->first);
  if (grouped != vm2.shape) {
    auto reshaped = vm2.reshape(grouped);
    if (!reshaped) return std::nullopt;
    return *reshaped + vm1;
  }

  if (vm2.mask) {
    // Carry this view's mask over to `top`: an axis of this view stepped by one axis of `top` bounds that
    // axis; an axis `top` does not move is all valid or all padding.
    Shape newb(n1, 0), newe = vm1.shape;
    bool bad = false;
    for (size_t d2 = 0; d2 < n2; d2++) {
      auto [b, e] = (*vm2.mask)[d2];
      auto [lo, hi] = range(extents[n2 - 1 - d2].second);
      if (b <= lo && hi < e) continue;
      if (terms[d2].size() != 1) {
        if (terms[d2].empty() && n1 > 0)
          newe[0] = 0;
        else
          bad = true;
        continue;
      }
      auto [d1, s1] = terms[d2][0];
      int64_t o = origin[d2];
      newb[d1] = std::max(newb[d1], ceildiv(s1 > 0 ? b - o : e - o - 1, s1));
      newe[d1] = std::min(newe[d1], floordiv(s1 < 0 ? b - o : e - o - 1, s1) + 1);
    }
    for (size_t d1 = 0; d1 < n1; d1++) {
      if (newb[d1] != 0 || newe[d1] != vm1.shape[d1]) {
        Bounds m;
        for (size_t i = 0; i < n1; i++) m.push_back({newb[i], newe[i]});
        return vm2 + create(vm1.shape, vm1.strides, vm1.offset, std::move(m));
      }
    }
    if (bad) return std::nullopt;
  }

  int64_t off = vm2.offset;
  for (size_t d2 = 0; d2 < n2; d2++) off += origin[d2] * vm2.strides[d2];
  return create(vm1.shape, std::move(strides), off);
}

size_t View::hash() const {
  size_t h = std::hash<int64_t>{}(offset);
  for (int64_t s : shape) h = mix(h, std::hash<int64_t>{}(s));
  for (int64_t s : strides) h = mix(h, std::hash<int64_t>{}(s));
  if (mask)
    for (auto [b, e] : *mask) h = mix(mix(h, std::hash<int64_t>{}(b)), std::hash<int64_t>{}(e));
  return mix(h, mask.has_value());
}

std::string View::str() const {
  return "View(shape=" + tuple_str(shape) + ", strides=" + tuple_str(strides) +
         ", offset=" + std::to_string(offset) + ", mask=" + (mask ? tuple_str(*mask) : "None") +
         ", contiguous=" + (contiguous ? "True" : "False") + ")";
}

}  // namespace sluice
