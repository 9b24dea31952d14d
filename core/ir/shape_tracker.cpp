// ShapeTracker: movement ops on a stack of views, and the index expressions they read with.
#include "core/ir/shape_tracker.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <unordered_set>

#include "base/error.h"
#include "core/ir/alu.h"
#include "core/ir/symbolic.h"

namespace sluice {

namespace {

// sum(k * atom) + c over opaque index terms. Index arithmetic stays in this form while views are composed,
// so unravelling a position into a view's axes emits a division or modulo only where the ranges of the
// atoms leave it undecided, and real_strides can read strides off the result.
struct Affine {
  std::vector<std::pair<UOp, int64_t>> terms;  // atom, nonzero coefficient
  int64_t c = 0;

  static Affine of(const UOp& u) {
    Affine a;
    if (u.is_const())
      a.c = u.const_int_value();
    else
      a.terms.push_back({u, 1});
    return a;
  }
  void add(const UOp& atom, int64_t k) {
    if (k == 0) return;
    for (auto it = terms.begin(); it != terms.end(); ++it) {
      if (!(it->first == atom)) continue;
      if ((it->second += k) == 0) terms.erase(it);
      return;
    }
    terms.push_back({atom, k});
  }
  void add(const Affine& o, int64_t k) {
    for (auto& [u, m] : o.terms) add(u, m * k);
    c += o.c * k;
  }
  // Bounds over every value the atoms can take (doubles, as range analysis: exact for small indices).
  std::pair<double, double> bounds() const {
    double lo = double(c), hi = double(c);
    for (auto& [u, k] : terms) {
      double a = u.vmin() * double(k), b = u.vmax() * double(k);
      lo += std::min(a, b), hi += std::max(a, b);
    }
    return {lo, hi};
  }
  UOp uop() const {
    UOp out;
    for (auto& [u, k] : terms) {
      UOp t = k == 1 ? u : u * k;
      out = out ? out + t : t;
    }
    if (!out) return UOp::const_int(dtypes::index, c);
    return c == 0 ? out : out + c;
  }
};

// floor(a / d) for d > 0. The UOps emitted divide toward zero, so they are only exact where a >= 0: true
// wherever an index is valid, and positions where it is not are never read.
Affine div(const Affine& a, int64_t d) {
  if (d == 1) return a;
  Affine whole, rest;  // whole: the terms d divides; rest: the others and the constant's remainder
  whole.c = floordiv(a.c, d);
  rest.c = a.c - whole.c * d;
  for (auto& [u, k] : a.terms) {
    if (k % d == 0)
      whole.add(u, k / d);
    else
      rest.add(u, k);
  }
  auto [lo, hi] = rest.bounds();
  double q = std::floor(lo / double(d));
  if (q == std::floor(hi / double(d))) {  // (x*4+y)//4 -> x when 0<=y<4
    whole.c += int64_t(q);
    return whole;
  }
  if (lo >= 0) {  // (x*4+y)//4 -> x + y//4 when y>=0
    whole.add(rest.uop() / d, 1);
    return whole;
  }
  return Affine::of(a.uop() / d);
}

// a mod d for d > 0, under the same condition as div.
Affine mod(const Affine& a, int64_t d) {
  Affine rest;  // congruent to a: each coefficient reduced to its smallest magnitude mod d
  rest.c = floormod(a.c, d);
  for (auto& [u, k] : a.terms) {
    int64_t r = floormod(k, d);
    rest.add(u, 2 * r > d ? r - d : r);
  }
  auto [lo, hi] = rest.bounds();
  double q = std::floor(lo / double(d));
  if (q == std::floor(hi / double(d))) {  // (x*4+y)%4 -> y when 0<=y<4
    rest.c -= int64_t(q) * d;
    return rest;
  }
  if (lo >= 0) return Affine::of(rest.uop() % d);
  return Affine::of(a.uop() % d);
}

// The coordinates of flat position `pos` in a dense buffer of `shape`. The outermost coordinate needs no
// modulo: wherever pos is valid it is below the buffer's size.
std::vector<Affine> unravel(const Shape& shape, const Affine& pos) {
  std::vector<Affine> out(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1) out[i] = i == 0 ? div(pos, acc) : mod(div(pos, acc), shape[i]);
    acc *= shape[i];
  }
  return out;
}

UOp lt(const UOp& u, int64_t v) { return u.lt(u.const_like_int(v)); }
UOp ge(const UOp& u, int64_t v) { return u.ge(u.const_like_int(v)); }

// `a < e`: null where it always holds, const false where it never does. One-term conditions are solved
// for the atom (2*x+1 < 5 -> x < 2).
UOp less(const Affine& a, int64_t e) {
  auto [lo, hi] = a.bounds();
  if (hi < double(e)) return {};
  if (lo >= double(e)) return UOp::const_bool(false);
  if (a.terms.size() == 1) {
    auto& [u, k] = a.terms[0];
    return k > 0 ? lt(u, ceildiv(e - a.c, k)) : ge(u, floordiv(a.c - e, -k) + 1);
  }
  Affine t = a;
  t.c = 0;
  return lt(t.uop(), e - a.c);
}

// `a >= b`, in the same way.
UOp at_least(const Affine& a, int64_t b) {
  auto [lo, hi] = a.bounds();
  if (lo >= double(b)) return {};
  if (hi < double(b)) return UOp::const_bool(false);
  if (a.terms.size() == 1) {
    auto& [u, k] = a.terms[0];
    return k > 0 ? ge(u, ceildiv(b - a.c, k)) : lt(u, floordiv(a.c - b, -k) + 1);
  }
  Affine t = a;
  t.c = 0;
  return ge(t.uop(), b - a.c);
}

// a && b where null means true; false absorbs (conditions are never the constant true).
UOp both(const UOp& a, const UOp& b) {
  if (!a || (b && b.is_const())) return b;
  if (!b || a.is_const()) return a;
  return a & b;
}

struct Indexed {
  Affine idx;
  UOp valid;  // null: always valid
};

// One view over per-axis positions: the position it reads below, and the validity so far.
void apply(const View& v, const std::vector<Affine>& pos, Indexed& out) {
  Affine idx;
  idx.c = v.offset;
  for (size_t a = 0; a < v.shape.size(); a++) {
    if (v.shape[a] != 1 && v.strides[a] != 0) idx.add(pos[a], v.strides[a]);
    if (v.mask) {
      out.valid = both(out.valid, at_least(pos[a], (*v.mask)[a].first));
      out.valid = both(out.valid, less(pos[a], (*v.mask)[a].second));
    }
  }
  out.idx = std::move(idx);
}

// Index arithmetic is done in the dtype of the indices given: int64 where any is (codegen's wide kernels,
// lower.h), else dtypes::index.
DType index_dtype(std::span<const UOp> idxs) {
  for (const UOp& i : idxs)
    if (i.dtype() == dtypes::int64) return dtypes::int64;
  return dtypes::index;
}

Indexed index_views(const std::vector<View>& views, std::span<const UOp> idxs) {
  std::vector<Affine> pos;
  const DType dt = index_dtype(idxs);
  for (const UOp& i : idxs) pos.push_back(Affine::of(i.cast(dt)));
  Indexed out;
  apply(views.back(), pos, out);
  for (size_t i = views.size() - 1; i-- > 0;) {
    View v = views[i].minify();  // fewer axes: fewer divisions and modulos
    apply(v, unravel(v.shape, out.idx), out);
  }
  return out;
}

std::vector<UOp> default_idxs(const Shape& shape) {
  std::vector<UOp> idxs;
  for (size_t a = 0; a < shape.size(); a++)
    idxs.push_back(UOp::variable("idx" + std::to_string(a), 0, std::max<int64_t>(shape[a] - 1, 0)));
  return idxs;
}

// Merges the top two views while one view can express both.
void merge_top(std::vector<View>& vs) {
  while (vs.size() >= 2) {
    auto merged = vs[vs.size() - 2] + vs.back();
    if (!merged) return;
    vs.pop_back();
    vs.back() = std::move(*merged);
  }
}

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

}  // namespace

ShapeTracker::ShapeTracker(std::vector<View> vs) : views(std::move(vs)) { SLUICE_ASSERT(!views.empty()); }

ShapeTracker ShapeTracker::from_shape(const Shape& shape) {
  SLUICE_CHECK_AS(ShapeError, std::all_of(shape.begin(), shape.end(), [](int64_t s) { return s >= 0; }))
      << "negative size in " << tuple_str(shape);
  return ShapeTracker({View::create(shape)});
}

bool ShapeTracker::consecutive() const {
  const View& v = views[0];
  return views.size() == 1 && !v.mask && v.strides == strides_for_shape(v.shape);
}

// A changed top view may now merge with the one below (e.g. a shrink that stays inside a padded view's
// valid region, or a reshape back to the shape below).
ShapeTracker ShapeTracker::with_last(View v) const {
  ShapeTracker out = *this;
  out.views.back() = std::move(v);
  merge_top(out.views);
  return out;
}

ShapeTracker ShapeTracker::reshape(const Shape& new_shape) const {
  if (auto v = views.back().reshape(new_shape)) return with_last(std::move(*v));
  std::vector<View> vs = views;
  vs.push_back(View::create(new_shape));
  merge_top(vs);
  return ShapeTracker(std::move(vs));
}
ShapeTracker ShapeTracker::permute(const Shape& axes) const { return with_last(views.back().permute(axes)); }
ShapeTracker ShapeTracker::expand(const Shape& new_shape) const {
  return with_last(views.back().expand(new_shape));
}
ShapeTracker ShapeTracker::pad(const Bounds& pads) const { return with_last(views.back().pad(pads)); }
ShapeTracker ShapeTracker::shrink(const Bounds& bounds) const {
  return with_last(views.back().shrink(bounds));
}
ShapeTracker ShapeTracker::flip(const Shape& axes) const { return with_last(views.back().flip(axes)); }

ShapeTracker ShapeTracker::operator+(const ShapeTracker& top) const {
  std::vector<View> vs = views;
  for (const View& v : top.views) {  // one view at a time: each merge may enable the next
    vs.push_back(v);
    merge_top(vs);
  }
  return ShapeTracker(std::move(vs));
}

ShapeTracker ShapeTracker::simplify() const {
  std::vector<View> vs = views;
  for (size_t i = vs.size() - 1; i > 0;) {
    if (auto merged = vs[i - 1] + vs[i]) {
      vs[i - 1] = std::move(*merged);
      vs.erase(vs.begin() + ptrdiff_t(i));
      i = vs.size() - 1;  // the merged view may now merge with its other neighbour
    } else {
      i--;
    }
  }
  return ShapeTracker(std::move(vs));
}

std::pair<UOp, UOp> ShapeTracker::to_indexed(std::span<const UOp> idxs) const {
  SLUICE_CHECK_AS(ShapeError, idxs.size() == shape().size())
      << "expected " << shape().size() << " indices for " << tuple_str(shape()) << ", got " << idxs.size();
  Indexed r = index_views(views, idxs);
  UOp valid = r.valid ? r.valid : UOp::const_bool(true);
  UOp idx = r.idx.uop();  // a constant index is made in dtypes::index
  if (idx.is_const()) idx = UOp::const_int(index_dtype(idxs), idx.const_int_value());
  return {sluice::simplify(idx), sluice::simplify(valid)};
}

std::pair<UOp, UOp> ShapeTracker::to_indexed() const { return to_indexed(default_idxs(shape())); }

std::vector<std::optional<int64_t>> ShapeTracker::real_strides(bool ignore_valid) const {
  const View& top = views.back();
  if (views.size() == 1 && !top.mask) return {top.strides.begin(), top.strides.end()};
  std::vector<UOp> idxs = default_idxs(shape());
  Indexed r = index_views(views, idxs);
  // An index that occurs inside a division, a modulo or the validity has no single stride.
  std::unordered_set<const UOpNode*> tangled;
  auto tangle = [&](const UOp& u) {
    for (const UOp& n : u.toposort()) tangled.insert(n.get());
  };
  for (auto& [u, k] : r.idx.terms)
    if (u.op() != Op::DefineVar) tangle(u);
  if (r.valid && !ignore_valid) tangle(r.valid);
  std::vector<std::optional<int64_t>> out(idxs.size(), int64_t(0));
  for (size_t a = 0; a < idxs.size(); a++) {
    if (tangled.count(idxs[a].get())) {
      out[a] = std::nullopt;
      continue;
    }
    for (auto& [u, k] : r.idx.terms)
      if (u == idxs[a]) out[a] = k;
  }
  return out;
}

std::vector<int64_t> ShapeTracker::unit_stride_axes(bool ignore_valid) const {
  std::vector<int64_t> out;
  auto strides = real_strides(ignore_valid);
  for (size_t a = 0; a < strides.size(); a++)
    if (strides[a] == 1) out.push_back(int64_t(a));
  return out;
}

size_t ShapeTracker::hash() const {
  size_t h = views.size();
  for (const View& v : views) h = mix(h, v.hash());
  return h;
}

bool ShapeTracker::equals(const ArgObject& other) const {
  auto* o = dynamic_cast<const ShapeTracker*>(&other);
  return o && *o == *this;
}

std::string ShapeTracker::str() const {
  std::string s = "ShapeTracker(views=(";
  for (const View& v : views) s += v.str() + ", ";
  if (views.size() > 1) s.resize(s.size() - 2);
  if (views.size() == 1) s.pop_back();
  return s + "))";
}

}  // namespace sluice
