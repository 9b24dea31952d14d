// Sliding windows: the view every convolution, pool and cumulative op reduces over.
#include <numeric>

#include "runtime/tensor_internal.h"

namespace sluice::detail {

// The reference design's _pool: only movement ops. When windows overlap (kernel > stride) or dilate, the
// input is repeated so that consecutive windows become rows of a reshape; otherwise a pad/shrink to a
// multiple of the stride and a reshape suffice.
Tensor pool(const Tensor& t, const Shape& k, const Shape& s, const Shape& d) {
  size_t nk = k.size(), lead = size_t(t.ndim()) - nk;
  Shape in(t.shape().end() - long(nk), t.shape().end()), out;
  for (size_t j = 0; j < nk; j++) out.push_back((in[j] - d[j] * (k[j] - 1) + s[j] - 1) / s[j]);
  // Leading axes unchanged, then `tail` for the windowed ones.
  auto bounds = [&](const Tensor& x, const Bounds& tail) {
    Bounds b;
    for (size_t j = 0; j < lead; j++) b.push_back({0, x.shape()[j]});
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
  };
  auto shape_with = [&](const Shape& tail) {
    Shape r(t.shape().begin(), t.shape().begin() + long(lead));
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  };
  Shape order(lead);
  std::iota(order.begin(), order.end(), 0);
  bool overlap = false;
  for (size_t j = 0; j < nk; j++) overlap |= k[j] > s[j] || d[j] != 1;
  if (overlap) {
    Shape reps(lead, 1), rows, kos, ko;
    Bounds cut, cut2, cut3;
    for (size_t j = 0; j < nk; j++) {
      int64_t f =
          1 + int64_t(out[j] * s[j] > in[j] - d[j] * (k[j] - 1));  // room for the last stride's shrink
      int64_t w = in[j] * f + d[j];
      reps.push_back((k[j] * w + in[j] - 1) / in[j]);
      cut.push_back({0, k[j] * w}), rows.push_back(k[j]), rows.push_back(w);
      cut2.push_back({0, k[j]}), cut2.push_back({0, out[j] * s[j]});
      kos.push_back(k[j]), kos.push_back(out[j]), kos.push_back(s[j]);
      cut3.push_back({0, k[j]}), cut3.push_back({0, out[j]}), cut3.push_back({0, 1});
      ko.push_back(k[j]), ko.push_back(out[j]);
    }
    Tensor x = t.repeat(reps);
    x = x.shrink(bounds(x, cut)).reshape(shape_with(rows));
    x = x.shrink(bounds(x, cut2)).reshape(shape_with(kos));
    x = x.shrink(bounds(x, cut3)).reshape(shape_with(ko));
    for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j + 1));
    for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j));
    return x.permute(order);
  }
  Bounds grow(lead, {0, 0}), cut, cut2;
  Shape os;
  for (size_t j = 0; j < nk; j++) {
    grow.push_back({0, std::max<int64_t>(0, out[j] * s[j] - in[j])});
    cut.push_back({0, out[j] * s[j]});
    os.push_back(out[j]), os.push_back(s[j]);
    cut2.push_back({0, out[j]}), cut2.push_back({0, k[j]});
  }
  Tensor x = t.pad(grow);
  x = x.shrink(bounds(x, cut)).reshape(shape_with(os));
  x = x.shrink(bounds(x, cut2));
  for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j));
  for (size_t j = 0; j < nk; j++) order.push_back(int64_t(lead + 2 * j + 1));
  return x.permute(order);
}

}  // namespace sluice::detail
