// Sliding windows: the view every convolution, pool and cumulative op reduces over.
#include <numeric>

#include "runtime/tensor_internal.h"

namespace sluice::detail {

// The reference design's _pool: only movement ops. When windows overlap (kernel > stride) or dilate, the
// input is repeated so that consecutive windows become rows of a reshape; otherwise a pad/shrink to a
// multiple of the stride and a reshape suffice. The chain is built on the UOp and wrapped in one Tensor at
// the end: the sizes are consistent by construction, so the Tensor ops' checks (and a Tensor, its device
// string and its tag walk per step) would only repeat work; the final Tensor tags the same new nodes.
Tensor pool(const Tensor& t, const Shape& k, const Shape& s, const Shape& d) {
  size_t nk = k.size(), lead = size_t(t.ndim()) - nk;
  const Shape& ts = t.shape();
  Shape in(ts.end() - long(nk), ts.end()), out;
  for (size_t j = 0; j < nk; j++) out.push_back((in[j] - d[j] * (k[j] - 1) + s[j] - 1) / s[j]);
  // Leading axes unchanged (they keep t's sizes through every step), then the windowed ones.
  // Every list below is sized up front: growing them one push_back at a time was most of pool's cost.
  Bounds b(lead);
  Shape r(ts.begin(), ts.begin() + long(lead));
  b.reserve(lead + 3 * nk), r.reserve(lead + 3 * nk), out.reserve(nk);
  for (size_t j = 0; j < lead; j++) b[j] = {0, ts[j]};
  auto bounds = [&](const Bounds& tail) -> const Bounds& {
    b.resize(lead);
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
  };
  auto shape_with = [&](const Shape& tail) -> const Shape& {
    r.resize(lead);
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  };
  Shape order(lead);
  order.reserve(lead + 2 * nk);
  std::iota(order.begin(), order.end(), 0);
  bool overlap = false;
  for (size_t j = 0; j < nk; j++) overlap |= k[j] > s[j] || d[j] != 1;
  UOp x = t.uop();
  if (overlap) {
    Shape unsq, expanded, repeated, rows, kos, ko;
    Bounds cut, cut2, cut3;
    for (Shape* v : {&unsq, &expanded, &repeated, &rows, &kos, &ko}) v->reserve(2 * (lead + nk) + nk);
    for (Bounds* v : {&cut, &cut2, &cut3}) v->reserve(3 * nk);
    for (size_t j = 0; j < lead; j++) unsq.push_back(1), unsq.push_back(ts[j]);
    expanded = unsq, repeated.assign(ts.begin(), ts.begin() + long(lead));
    for (size_t j = 0; j < nk; j++) {
      int64_t f =
          1 + int64_t(out[j] * s[j] > in[j] - d[j] * (k[j] - 1));  // room for the last stride's shrink
      int64_t w = in[j] * f + d[j];
      int64_t rep = (k[j] * w + in[j] - 1) / in[j];
      // Tensor::repeat: each axis becomes (r, s), a size-1 axis expanded to r and merged back.
      unsq.push_back(1), unsq.push_back(in[j]);
      expanded.push_back(rep), expanded.push_back(in[j]);
      repeated.push_back(rep * in[j]);
      cut.push_back({0, k[j] * w}), rows.push_back(k[j]), rows.push_back(w);
      cut2.push_back({0, k[j]}), cut2.push_back({0, out[j] * s[j]});
      kos.push_back(k[j]), kos.push_back(out[j]), kos.push_back(s[j]);
      cut3.push_back({0, k[j]}), cut3.push_back({0, out[j]}), cut3.push_back({0, 1});
      ko.push_back(k[j]), ko.push_back(out[j]);
    }
    x = x.reshape(unsq).expand(expanded).reshape(repeated);
    x = x.shrink(bounds(cut)).reshape(shape_with(rows));
    x = x.shrink(bounds(cut2)).reshape(shape_with(kos));
    x = x.shrink(bounds(cut3)).reshape(shape_with(ko));
    for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j + 1));
    for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j));
    return Tensor(x.permute(order), t.device());
  }
  Bounds grow(lead, {0, 0}), cut, cut2;
  Shape os;
  grow.reserve(lead + nk), cut.reserve(nk), cut2.reserve(2 * nk), os.reserve(2 * nk);
  for (size_t j = 0; j < nk; j++) {
    grow.push_back({0, std::max<int64_t>(0, out[j] * s[j] - in[j])});
    cut.push_back({0, out[j] * s[j]});
    os.push_back(out[j]), os.push_back(s[j]);
    cut2.push_back({0, out[j]}), cut2.push_back({0, k[j]});
  }
  x = x.pad(grow);
  x = x.shrink(bounds(cut)).reshape(shape_with(os));
  x = x.shrink(bounds(cut2));
  for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j));
  for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j + 1));
  return Tensor(x.permute(order), t.device());
}

}  // namespace sluice::detail
