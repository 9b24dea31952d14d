// graph_rewrite throughput: the symbolic rules over a graph of >= 100k nodes, reported as input nodes per
// second. The graph is many independent index expressions of the shapes movement ops produce, each with
// its own variable so nothing is shared between them.
#include <benchmark/benchmark.h>

#include "core/ir/symbolic.h"

using namespace sluice;

namespace {
UOp index_graph(int exprs) {
  std::vector<UOp> outs;
  for (int i = 0; i < exprs; i++) {
    UOp a = UOp::variable("a" + std::to_string(i), 0, 63), b = UOp::variable("b" + std::to_string(i), 0, 3);
    UOp flat = (a * 4 + b) + 0;                                   // reshape (64,4) -> (256,)
    UOp back = (flat / 4) * 1 + (flat % 4) * 64;                  // reshape back and permute
    UOp valid = (flat + 2).lt(200) & (flat * 1).lt(i % 7 + 250);  // pad mask
    outs.push_back(valid.where(back + (i % 5), back.const_like_int(0)));
  }
  return UOp::sink(outs);
}
}  // namespace

static void BM_SymbolicRewrite(benchmark::State& state) {
  UOp g = index_graph(int(state.range(0)));
  size_t n = g.toposort().size();
  for (auto _ : state) {
    UOp out = simplify(g);
    benchmark::DoNotOptimize(out);
  }
  state.counters["nodes"] = double(n);
  state.counters["nodes_per_s"] =
      benchmark::Counter(double(n) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SymbolicRewrite)->Arg(6000)->Unit(benchmark::kMillisecond);

// A long dependency chain (each node uses the previous one): the iterative rewriter's worst case for depth.
static void BM_SymbolicRewriteChain(benchmark::State& state) {
  UOp x = UOp::variable("x", 0, 1000);
  for (int i = 0; i < state.range(0); i++) x = (x + 1) * 1 + 0;
  size_t n = x.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(simplify(x));
  state.counters["nodes"] = double(n);
  state.counters["nodes_per_s"] =
      benchmark::Counter(double(n) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SymbolicRewriteChain)->Arg(40000)->Unit(benchmark::kMillisecond);
