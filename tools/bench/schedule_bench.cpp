// Graph building + scheduling (no codegen, no execution) of whole models through the Tensor API: an MLP,
// a small CNN, one GPT-2-small block and twelve chained. Parameters are buffers made once; BM_Schedule
// builds the forward graph from them and schedules it each iteration (and drops both), BM_Build only
// builds, BM_ScheduleOnly only schedules a graph built once.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/schedule/schedule.h"
#include "models/models.h"
#include "runtime/tensor.h"

using sluice::Tensor;
using namespace sluice::bench;

namespace {

template <class Model>
void BM_Schedule(benchmark::State& state, const Model& model) {
  size_t kernels = 0;
  for (auto _ : state) {
    sluice::Schedule s = sluice::schedule({model.forward().uop()});
    kernels = s.items.size();
    benchmark::DoNotOptimize(s.items.data());
  }
  state.counters["kernels"] = double(kernels);
  state.counters["nodes"] = double(model.forward().uop().toposort().size());
}

// Scheduling alone: the graph is built once, outside the loop.
template <class Model>
void BM_ScheduleOnly(benchmark::State& state, const Model& model) {
  Tensor out = model.forward();
  for (auto _ : state) {
    sluice::Schedule s = sluice::schedule({out.uop()});
    benchmark::DoNotOptimize(s.items.data());
  }
}

template <class Model>
void BM_Build(benchmark::State& state, const Model& model) {
  for (auto _ : state) {
    Tensor out = model.forward();
    benchmark::DoNotOptimize(out.uop().get());
  }
}

const Mlp mlp;
const Cnn cnn;
const Gpt gpt1(1), gpt12(12);

BENCHMARK_CAPTURE(BM_Schedule, mlp, mlp)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Schedule, cnn, cnn)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Schedule, gpt2_block, gpt1)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Schedule, gpt2_12_blocks, gpt12)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Build, mlp, mlp)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Build, cnn, cnn)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Build, gpt2_block, gpt1)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Build, gpt2_12_blocks, gpt12)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ScheduleOnly, mlp, mlp)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ScheduleOnly, cnn, cnn)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ScheduleOnly, gpt2_block, gpt1)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ScheduleOnly, gpt2_12_blocks, gpt12)->Unit(benchmark::kMicrosecond);

}  // namespace
