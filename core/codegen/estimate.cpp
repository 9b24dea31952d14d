#include "core/codegen/estimate.h"

#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace sluice::codegen {

Estimate estimate(const Kernel& k) {
  Estimate e;
  for (const KernelBuffer& b : k.bufs) e.bytes += uint64_t(b.size) * uint64_t(b.dtype.itemsize());

  // How often each uop runs in one work-item: the product of the extents of the loops open around it.
  std::unordered_map<UOp, double> runs;
  std::vector<double> open = {1};
  for (const UOp& u : k.uops) {
    if (u.op() == Op::EndRange) {
      if (open.size() > 1) open.pop_back();
      continue;
    }
    runs[u] = open.back();
    if (u.op() == Op::Range) open.push_back(open.back() * std::max(0.0, u.src(0).vmax()));
  }

  // The data path: from each stored or accumulated value back through ALU ops; loads, constants and
  // accumulators end it, so index arithmetic (under INDEX) is never reached.
  std::unordered_set<UOp> seen;
  std::vector<UOp> todo;
  for (const UOp& u : k.uops)
    if ((u.op() == Op::Store || u.op() == Op::Assign) && u.num_src() > 1) todo.push_back(u.src(1));
  double per_item = 0;
  while (!todo.empty()) {
    UOp u = todo.back();
    todo.pop_back();
    const Op op = u.op();
    const bool through =
        is_alu(op) || op == Op::Cast || op == Op::Bitcast || op == Op::Vectorize || op == Op::Gep;
    if (!through || !seen.insert(u).second) continue;
    if (is_alu(op)) {
      auto r = runs.find(u);
      per_item += (op == Op::MulAcc ? 2.0 : 1.0) * u.dtype().count * (r == runs.end() ? 1.0 : r->second);
    }
    for (const UOp& s : u.src()) todo.push_back(s);
  }
  const double items = double(k.global_count()) * k.local_size[0] * k.local_size[1] * k.local_size[2];
  e.flops = uint64_t(std::llround(per_item * items));
  return e;
}

}  // namespace sluice::codegen
