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

using sluice::Shape;
using sluice::Tensor;

namespace {

Tensor param(const Shape& s) { return Tensor::empty(s, sluice::dtypes::float32, "CPU"); }

struct Block {
  static constexpr int64_t d = 768, heads = 12, hd = 64, seq = 128;
  Tensor x = param({1, seq, d}), ln1g = param({d}), ln1b = param({d}), wqkv = param({d, 3 * d}),
         bqkv = param({3 * d}), wo = param({d, d}), bo = param({d}), ln2g = param({d}), ln2b = param({d}),
         w1 = param({d, 4 * d}), b1 = param({4 * d}), w2 = param({4 * d, d}), b2 = param({d});
  Tensor forward() const {
    Tensor qkv = (x.layernorm() * ln1g + ln1b).matmul(wqkv) + bqkv;
    std::vector<Tensor> parts = qkv.split(d, -1);
    auto heads_of = [&](const Tensor& p) { return p.reshape({1, seq, heads, hd}).transpose(1, 2); };
    Tensor attn = heads_of(parts[0]).scaled_dot_product_attention(heads_of(parts[1]), heads_of(parts[2]),
                                                                  std::nullopt, true);
    Tensor h = x + (attn.transpose(1, 2).reshape({1, seq, d}).matmul(wo) + bo);
    Tensor m = ((h.layernorm() * ln2g + ln2b).matmul(w1) + b1).gelu().matmul(w2) + b2;
    return h + m;
  }
};

void BM_LowerRenderGpt2Block(benchmark::State& state) {
  Block block;
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
