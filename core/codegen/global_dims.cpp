#include "core/codegen/global_dims.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "core/ir/symbolic.h"

namespace sluice::codegen {
namespace {

// The largest divisor of n that is <= limit (1 when none larger exists).
int64_t largest_divisor(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

UOp special(int dim, int64_t size, DType dt) {
  return UOp::make(Op::Special, dt, {}, VarArg{"gidx" + std::to_string(dim), 0, size - 1});
}

}  // namespace

GlobalMap map_global(const Shape& shape, const DeviceCaps& caps, DType idx_dt) {
  GlobalMap m;
  m.axis_idx.assign(shape.size(), UOp::const_int(idx_dt, 0));
  if (prod(shape) == 0) {
    m.dims = {0};
    return m;
  }
  std::vector<std::vector<size_t>> groups;  // axes of size > 1, grouped into launch dimensions
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] > 1) groups.push_back({a});
  const size_t max_dims = size_t(std::max(caps.global_dims, 1));
  auto group_size = [&](const std::vector<size_t>& g) {
    int64_t n = 1;
    for (size_t a : g) n *= shape[a];
    return n;
  };
  // Too many axes: merge the two neighbours with the fewest work-groups together (the leading pair on a
  // tie). Neighbours keep the work-groups' order, so consecutive ones still touch consecutive elements;
  // the larger axes stay dimensions of their own, which a device may walk in its own order (the CPU walks
  // the one that shares the most data fastest: a 1x1 conv's output-channel tiles, not merged with the
  // batch, share each tile of its input).
  while (groups.size() > max_dims) {
    size_t best = 0;
    for (size_t i = 1; i + 1 < groups.size(); ++i)
      if (group_size(groups[i]) * group_size(groups[i + 1]) <
          group_size(groups[best]) * group_size(groups[best + 1]))
        best = i;
    groups[best].insert(groups[best].end(), groups[best + 1].begin(), groups[best + 1].end());
    groups.erase(groups.begin() + int64_t(best) + 1);
  }
  // Each group becomes one launch dimension, or two (hi, lo) when it is too large for one.
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const std::vector<size_t>& g = groups[gi];
    const int64_t n = group_size(g);
    const int d = int(m.dims.size());
    UOp gid;
    bool exact = true;  // gid takes exactly the values 0 .. n-1
    const int64_t here = caps.global_max[size_t(std::min(d, 2))],
                  next = caps.global_max[size_t(std::min(d + 1, 2))];
    if (n <= here) {
      m.dims.push_back(uint32_t(n));
      gid = special(d, n, idx_dt);
      m.specials.push_back(gid);
    } else {
      int64_t lo = largest_divisor(n, next), hi = n / lo;
      if (lo == 1 || hi > here) lo = next, hi = (n + lo - 1) / lo, exact = false;
      const size_t later = groups.size() - gi - 1;  // dimensions the groups after this one need
      SLUICE_CHECK_IN(Error, "global_dims", m.dims.size() + 2 + later <= max_dims && hi <= here)
          << "cannot map " << tuple_str(shape) << " onto " << caps.global_dims
          << " launch dimensions of at most " << here << " work-groups";
      m.dims.insert(m.dims.end(), {uint32_t(hi), uint32_t(lo)});
      UOp h = special(d, hi, idx_dt), l = special(d + 1, lo, idx_dt);
      m.specials.insert(m.specials.end(), {h, l});
      gid = h * lo + l;
      if (!exact) {
        UOp in_range = gid.lt(UOp::const_int(idx_dt, n));
        m.valid = m.valid ? m.valid.alu(Op::And, in_range) : in_range;
      }
    }
    // Row-major within the group: the last axis varies fastest.
    int64_t stride = 1;
    for (size_t k = g.size(); k-- > 0;) {
      const size_t a = g[k];
      UOp idx = stride == 1 ? gid : gid / stride;
      if (k > 0 || !exact) idx = idx % shape[a];
      m.axis_idx[a] = simplify(idx);
      stride *= shape[a];
    }
  }
  return m;
}

}  // namespace sluice::codegen
