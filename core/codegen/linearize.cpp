#include "core/codegen/linearize.h"

#include <algorithm>
#include <unordered_map>

#include "base/error.h"

namespace sluice::codegen {

std::vector<UOp> linearize(const UOp& sink) {
  const std::vector<UOp> topo = sink.toposort();
  std::vector<UOp> ranges;
  for (const UOp& u : topo)
    if (u.op() == Op::Range) ranges.push_back(u);
  std::sort(ranges.begin(), ranges.end(),
            [](const UOp& a, const UOp& b) { return a.arg_as<int64_t>() < b.arg_as<int64_t>(); });
  SLUICE_CHECK_IN(Error, "linearize", ranges.size() <= 64) << "too many loops: " << ranges.size();

  // depth: 0 outside every loop, d inside the first d loops; after: reads an accumulator's final value.
  struct Place {
    size_t depth = 0;
    bool after = false;
  };
  std::unordered_map<const UOpNode*, Place> place;
  place.reserve(topo.size());
  const size_t inner = ranges.size();
  for (const UOp& u : topo) {
    Place p;
    switch (u.op()) {
      case Op::Range:
        p.depth = size_t(std::find(ranges.begin(), ranges.end(), u) - ranges.begin()) + 1;
        break;
      case Op::DefineReg: break;  // declared before the loops it accumulates across
      case Op::Assign: p.depth = inner; break;
      default:
        for (const UOp& s : u.src()) {
          const Place& q = place[s.get()];
          // An ASSIGN read by anything but itself is the accumulator's final value.
          if (s.op() == Op::Assign) {
            p.after = true;
            continue;
          }
          // The update of an accumulator runs every iteration, even when its operand is loop-invariant.
          if (s.op() == Op::DefineReg) p.depth = inner;
          p.depth = std::max(p.depth, q.depth);
          p.after |= q.after;
        }
    }
    SLUICE_ASSERT(!(p.after && p.depth > 0));  // one loop nest: nothing reads a result inside the loops
    place[u.get()] = p;
  }

  std::vector<UOp> out;
  out.reserve(topo.size() + 2 * ranges.size());
  auto emit = [&](size_t depth, bool after, bool regs) {
    for (const UOp& u : topo) {
      const Place& p = place[u.get()];
      if (u.op() == Op::Sink || u.op() == Op::Range || p.depth != depth || p.after != after) continue;
      if ((u.op() == Op::DefineReg) == regs) out.push_back(u);
    }
  };
  emit(0, false, false);
  emit(0, false, true);
  for (size_t d = 1; d <= inner; ++d) {
    out.push_back(ranges[d - 1]);
    emit(d, false, false);
  }
  for (size_t d = inner; d > 0; --d) out.push_back(UOp::make(Op::EndRange, dtypes::void_, {ranges[d - 1]}));
  emit(0, true, false);
  return out;
}

}  // namespace sluice::codegen
