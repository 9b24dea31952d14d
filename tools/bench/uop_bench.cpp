// Cost of the UOp intern table: creating a node that does not exist yet (a miss), building one that
// does (a hash-consing hit), and dropping a graph. `per_node` is the time per node.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/ir/uop.h"

using sluice::UOp;

namespace {

// Distinct constants and a variable, held for the whole run so that only the ADD nodes come and go.
struct Chain {
  UOp x = UOp::variable("x", 0, 1 << 20);
  std::vector<UOp> consts;
  explicit Chain(int64_t n) {
    for (int64_t k = 0; k < n; ++k) consts.push_back(UOp::const_int(x.dtype(), k + 1));
  }
  UOp build() const {  // x + 1 + 2 + ... + n: n ADD nodes
    UOp acc = x;
    for (const UOp& c : consts) acc = acc + c;
    return acc;
  }
};

void per_node(benchmark::State& state, int64_t n) {
  state.counters["per_node"] = benchmark::Counter(
      double(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Every ADD is new: the previous iteration's chain was dropped (outside the timing).
void BM_InternNew(benchmark::State& state) {
  const int64_t n = state.range(0);
  Chain chain(n);
  const size_t before = UOp::table_size();
  for (auto _ : state) {
    UOp g = chain.build();
    benchmark::DoNotOptimize(g.get());
    state.PauseTiming();
    if (UOp::table_size() != before + size_t(n)) state.SkipWithError("nodes were not new");
    g = UOp();
    state.ResumeTiming();
  }
  per_node(state, n);
}

// Every ADD already exists (a copy of the chain is held): each step is a lookup that hits.
void BM_InternHit(benchmark::State& state) {
  const int64_t n = state.range(0);
  Chain chain(n);
  const UOp held = chain.build();
  for (auto _ : state) {
    UOp g = chain.build();
    benchmark::DoNotOptimize(g.get());
  }
  if (!(chain.build() == held)) state.SkipWithError("hash-consing missed");
  per_node(state, n);
}

// Dropping the last handle of a chain frees every ADD node and removes it from the table.
void BM_DropGraph(benchmark::State& state) {
  const int64_t n = state.range(0);
  Chain chain(n);
  for (auto _ : state) {
    state.PauseTiming();
    UOp g = chain.build();
    state.ResumeTiming();
    g = UOp();
    benchmark::ClobberMemory();
  }
  per_node(state, n);
}

// 1K nodes stay in cache; 128K nodes (tens of MB with the table) do not.
BENCHMARK(BM_InternNew)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);
BENCHMARK(BM_InternHit)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);
BENCHMARK(BM_DropGraph)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 17);

}  // namespace
