// Lowering + rendering (no compiling) of the kernels of one GPT-2-small block (d=768, 12 heads, seq 128,
// causal attention, MLP 3072 with gelu, pre-norm, residuals), built with the Tensor API and scheduled once.
// Each iteration lowers, linearizes and renders every kernel as C for the CPU, timing each kernel on its
// own; the counters report the median and the slowest kernel (target: median <= 200 us).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/codegen/codegen.h"
#include "core/schedule/schedule.h"
#include "renderers/cpu.h"
#include "runtime/tensor.h"
#include "tools/bench/models.h"

namespace {

void BM_LowerRenderGpt2Block(benchmark::State& state) {
  const sluice::bench::Gpt block(1);
  sluice::Schedule s = sluice::schedule({block.forward().uop()});
  std::vector<sluice::UOp> asts;
  for (const sluice::ScheduleItem& it : s.items)
    if (it.ast.op() == sluice::Op::Sink) asts.push_back(it.ast);
  auto renderer = sluice::render::make_cpu_renderer();
  std::vector<std::vector<double>> us(asts.size());  // per kernel, one sample per iteration
  size_t bytes = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < asts.size(); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      std::string src = renderer->render(sluice::codegen::make_kernel(asts[i]));
      us[i].push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      bytes = src.size();
      benchmark::DoNotOptimize(src.data());
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::vector<double> per_kernel;
  for (const auto& v : us) per_kernel.push_back(median(v));
  state.counters["kernels"] = double(asts.size());
  state.counters["median_us_per_kernel"] = median(per_kernel);
  state.counters["max_us_per_kernel"] =
      per_kernel.empty() ? 0 : *std::max_element(per_kernel.begin(), per_kernel.end());
  state.counters["last_source_bytes"] = double(bytes);
  state.SetItemsProcessed(int64_t(state.iterations() * asts.size()));
}
BENCHMARK(BM_LowerRenderGpt2Block)->Unit(benchmark::kMillisecond);

}  // namespace
