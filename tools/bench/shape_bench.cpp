// Cost of the shape layer: building a 6-op movement chain, and turning it into (index, valid) UOps.
// Two chains: one that stays a single masked view (a padded, broadcast, transposed, flipped image) and one
// that stacks three views (a transpose flattened, padded, cut across the padding and reshaped).
#include <benchmark/benchmark.h>

#include <vector>

#include "core/ir/shape_tracker.h"

using sluice::ShapeTracker;
using sluice::UOp;

namespace {

ShapeTracker one_view() {
  return ShapeTracker::from_shape({2, 3, 32, 32})
      .pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}})
      .reshape({2, 1, 3, 34, 34})
      .expand({2, 8, 3, 34, 34})
      .permute({0, 1, 3, 4, 2})
      .shrink({{0, 2}, {0, 8}, {0, 32}, {0, 32}, {0, 3}})
      .flip({2});
}

ShapeTracker multi_view() {
  return ShapeTracker::from_shape({4, 64, 32})
      .permute({0, 2, 1})
      .reshape({4, 2048})
      .pad({{0, 0}, {1, 1}})
      .shrink({{0, 4}, {0, 2048}})
      .reshape({4, 32, 64})
      .flip({1});
}

void BM_BuildChain(benchmark::State& state, ShapeTracker (*chain)()) {
  for (auto _ : state) {
    ShapeTracker st = chain();
    benchmark::DoNotOptimize(st.views.data());
  }
  state.counters["views"] = double(chain().views.size());
}

// The index variables are held; the expression nodes are dropped after each call, as they are when a
// kernel has been lowered, so every call builds and simplifies them afresh.
void BM_ToIndexed(benchmark::State& state, ShapeTracker (*chain)()) {
  ShapeTracker st = chain();
  std::vector<UOp> idxs;
  for (size_t a = 0; a < st.shape().size(); a++)
    idxs.push_back(UOp::variable("i" + std::to_string(a), 0, st.shape()[a] - 1));
  for (auto _ : state) {
    auto [idx, valid] = st.to_indexed(idxs);
    benchmark::DoNotOptimize(idx.get());
    benchmark::DoNotOptimize(valid.get());
  }
  auto [idx, valid] = st.to_indexed(idxs);
  state.counters["nodes"] = double(UOp::sink({idx, valid}).toposort().size() - 1);
}

BENCHMARK_CAPTURE(BM_BuildChain, one_view, one_view);
BENCHMARK_CAPTURE(BM_BuildChain, multi_view, multi_view);
BENCHMARK_CAPTURE(BM_ToIndexed, one_view, one_view);
BENCHMARK_CAPTURE(BM_ToIndexed, multi_view, multi_view);

}  // namespace
