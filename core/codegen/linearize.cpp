#include "core/codegen/linearize.h"

#include <algorithm>
#include <unordered_map>

#include "base/error.h"

namespace sluice::codegen {

std::vector<UOp> linearize(const UOp& sink) {
  const std::vector<UOp> topo = sink.toposort();
  const size_t n = topo.size();
  // Nodes by topological position; sources as positions (flat, with offsets), so the passes below do no
  // hashing.
  std::unordered_map<const UOpNode*, uint32_t> at;
  at.reserve(n);
  for (size_t i = 0; i < n; ++i) at.emplace(topo[i].get(), uint32_t(i));
  std::vector<uint32_t> src_at, first(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    first[i] = uint32_t(src_at.size());
    for (const UOp& s : topo[i].src()) src_at.push_back(at.at(s.get()));
  }
  first[n] = uint32_t(src_at.size());
  auto op = [&](uint32_t i) { return topo[i].op(); };

  struct Place {
    int stage = 0;
    size_t depth = 0;  // 0 outside the stage's loops, d inside its first d loops
  };
  std::vector<Place> place(n);

  // Stages: reading an accumulator's final value moves a node past the accumulator's nest. An ASSIGN's
  // stage is its operand's; its DEFINE_REG and RANGEs take that stage.
  for (bool changed = true; changed;) {  // a few passes: a DEFINE_REG's stage is known after its users
    changed = false;
    for (uint32_t i = 0; i < n; ++i) {
      const Op o = op(i);
      if (o == Op::Range || o == Op::DefineReg) continue;  // set from their ASSIGN
      int s = 0;
      for (uint32_t k = first[i]; k < first[i + 1]; ++k) {
        const uint32_t x = src_at[k];
        s = std::max(s, op(x) == Op::Assign && o != Op::Assign ? place[x].stage + 1 : place[x].stage);
      }
      changed |= place[i].stage != s;
      place[i].stage = s;
      if (o == Op::Assign) {
        const uint32_t reg = src_at[first[i]];
        place[reg].stage = s;
        for (uint32_t k = first[reg] + 1; k < first[reg + 1]; ++k) place[src_at[k]].stage = s;
      }
    }
  }
  int n_stages = 1;
  for (const Place& p : place) n_stages = std::max(n_stages, p.stage + 1);

  // The nests: each stage's RANGEs, ordered by arg.
  std::vector<std::vector<uint32_t>> nests(static_cast<size_t>(n_stages));
  for (uint32_t i = 0; i < n; ++i)
    if (op(i) == Op::Range) nests[size_t(place[i].stage)].push_back(i);
  for (auto& nest : nests) {
    std::sort(nest.begin(), nest.end(),
              [&](uint32_t a, uint32_t b) { return topo[a].arg_as<int64_t>() < topo[b].arg_as<int64_t>(); });
    SLUICE_CHECK_IN(Error, "linearize", nest.size() <= 64) << "too many loops: " << nest.size();
  }

  for (uint32_t i = 0; i < n; ++i) {
    Place& p = place[i];
    const std::vector<uint32_t>& nest = nests[size_t(p.stage)];
    switch (op(i)) {
      case Op::Range: p.depth = size_t(std::find(nest.begin(), nest.end(), i) - nest.begin()) + 1; break;
      case Op::DefineReg: break;  // declared before the loops it accumulates across
      case Op::Assign: p.depth = nest.size(); break;
      default:
        for (uint32_t k = first[i]; k < first[i + 1]; ++k) {
          const uint32_t x = src_at[k];
          const Place& q = place[x];
          if (q.stage != p.stage || op(x) == Op::Assign) continue;  // a final value: depth 0
          // The update of an accumulator runs every iteration, even when its operand is loop-invariant.
          if (op(x) == Op::DefineReg) p.depth = nest.size();
          p.depth = std::max(p.depth, q.depth);
        }
    }
  }

  // Blocks in order: per stage, its depth-0 nodes, its accumulators, then each loop's body.
  size_t max_depth = 0;
  for (const auto& nest : nests) max_depth = std::max(max_depth, nest.size());
  std::vector<std::vector<uint32_t>> block(size_t(n_stages) * (max_depth + 2));
  auto slot = [&](int stage, size_t depth, bool regs) {
    return size_t(stage) * (max_depth + 2) + (depth == 0 ? (regs ? 1 : 0) : depth + 1);
  };
  for (uint32_t i = 0; i < n; ++i) {
    const Op o = op(i);
    if (o == Op::Sink || o == Op::Range) continue;
    block[slot(place[i].stage, place[i].depth, o == Op::DefineReg)].push_back(i);
  }
  std::vector<UOp> out;
  out.reserve(n + 4 * nests.size());
  auto emit = [&](size_t b) {
    for (uint32_t i : block[b]) out.push_back(topo[i]);
  };
  for (int s = 0; s < n_stages; ++s) {
    const std::vector<uint32_t>& nest = nests[size_t(s)];
    emit(slot(s, 0, false));
    emit(slot(s, 0, true));
    for (size_t d = 1; d <= nest.size(); ++d) {
      out.push_back(topo[nest[d - 1]]);
      emit(slot(s, d, false));
    }
    for (size_t d = nest.size(); d > 0; --d)
      out.push_back(UOp::make(Op::EndRange, dtypes::void_, {topo[nest[d - 1]]}));
  }
  return out;
}

}  // namespace sluice::codegen
