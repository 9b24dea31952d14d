// Queue-level costs (DESIGN.md §4). NULL completes everything at submit, so its figures are the host cost of
// the stack: recording and submitting an eager kernel launch, and replaying a graph per kernel. On the CPU
// device: the submit -> signal round trip of an empty kernel (median and p99 over the iterations), eager
// launches in bursts, and a graph replay per kernel, end to end.
// Run: hcq_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "backends/cpu/device.h"
#include "backends/null/device.h"
#include "hcq/graph.h"

namespace sluice {
namespace {

// The CPU kernel ABI (backends/cpu/program.h); the kernel touches nothing, so only the queue is measured.
constexpr const char* kEmpty =
    "void bench_empty(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores) "
    "{\n"
    "  (void)bufs, (void)vars, (void)launch, (void)core_id, (void)n_cores;\n"
    "}\n";

struct Bench {
  std::unique_ptr<hcq::Device> dev;
  std::unique_ptr<hcq::Program> empty;  // layout {2 buffers, 1 var}, like a small real kernel
  hcq::Buffer a, b;
};

Bench& setup(bool cpu) {
  auto make = [](std::unique_ptr<hcq::Device> dev) {
    Bench s{std::move(dev), nullptr, {}, {}};
    s.empty = s.dev->load_program("bench_empty", s.dev->compiler().compile(kEmpty), {2, 1});
    s.a = s.dev->allocator().alloc(4096);
    s.b = s.dev->allocator().alloc(4096);
    return s;
  };
  static Bench null_bench = make(null::open_device(0));
  static Bench cpu_bench = make(cpu::open_device(0));
  return cpu ? cpu_bench : null_bench;
}

std::unique_ptr<hcq::Graph> make_graph(Bench& s, int kernels) {
  std::vector<hcq::GraphItem> items;
  for (int i = 0; i < kernels; ++i)
    items.push_back(hcq::GraphExec{s.empty.get(), {{s.a.addr, s.b.addr}, {i}}, {1}});
  return std::make_unique<hcq::Graph>(*s.dev, items);
}

// One eager launch as a runtime does it: record a fresh queue (kernel + completion signal), submit.
void BM_NullEagerLaunch(benchmark::State& state) {
  Bench& s = setup(false);
  auto sig = s.dev->new_signal("bench");
  const hcq::KernelArgs args{{s.a.addr, s.b.addr}, {1}};
  uint64_t v = 0;
  for (auto _ : state) {
    hcq::HwQueue q;
    q.exec(*s.empty, args, {1}).signal(*sig, ++v);
    benchmark::DoNotOptimize(q.submit(*s.dev));
  }
}
BENCHMARK(BM_NullEagerLaunch);

// Replay with one patched input per replay; the counter is the cost per kernel.
void BM_NullGraphReplay(benchmark::State& state) {
  Bench& s = setup(false);
  const int n = int(state.range(0));
  auto g = make_graph(s, n);
  int i = 0;
  for (auto _ : state) {
    g->set_var(0, 0, ++i);
    benchmark::DoNotOptimize(g->replay());
  }
  state.counters["per_kernel"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_NullGraphReplay)->Arg(10)->Arg(100)->Arg(1000);

// Host submit of a recorded one-kernel queue until the host sees its signal.
void BM_CpuRoundTrip(benchmark::State& state) {
  Bench& s = setup(true);
  auto sig = s.dev->new_signal("bench");
  hcq::HwQueue q;
  hcq::HwQueue::Cmd cmd;
  q.exec(*s.empty, {{s.a.addr, s.b.addr}, {1}}, {1}).signal(*sig, 0, &cmd);
  std::vector<uint64_t> lat;
  lat.reserve(1 << 20);
  uint64_t v = sig->value();
  for (auto _ : state) {
    q.patch_value(cmd, ++v);
    uint64_t t0 = hcq::now_ns();
    q.submit(*s.dev);
    sig->wait(v);
    lat.push_back(hcq::now_ns() - t0);
  }
  std::sort(lat.begin(), lat.end());
  state.counters["p50_us"] = double(lat[lat.size() / 2]) / 1e3;
  state.counters["p99_us"] = double(lat[lat.size() * 99 / 100]) / 1e3;
}
BENCHMARK(BM_CpuRoundTrip)->UseRealTime();

// Eager launches in bursts of 16 (one kernel per submit, as sluice latency's kernel_eager), then a wait
// for the last: end to end per kernel, and the part of it the submitting thread spent submitting.
void BM_CpuEagerBurst(benchmark::State& state) {
  Bench& s = setup(true);
  const hcq::KernelArgs args{{s.a.addr, s.b.addr}, {1}};
  constexpr int kBurst = 16;
  uint64_t submit_ns = 0;
  for (auto _ : state) {
    const uint64_t t0 = hcq::now_ns();
    uint64_t last = 0;
    for (int i = 0; i < kBurst; ++i) last = hcq::HwQueue().exec(*s.empty, args, {1}).submit(*s.dev);
    submit_ns += hcq::now_ns() - t0;
    s.dev->timeline().wait(last);
  }
  state.counters["per_kernel"] =
      benchmark::Counter(kBurst, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["submit_ns"] = double(submit_ns) / double(state.iterations() * kBurst);
}
BENCHMARK(BM_CpuEagerBurst)->UseRealTime();

// Replay of n empty kernels and wait for it: the counter is the end-to-end cost per kernel.
void BM_CpuGraphReplay(benchmark::State& state) {
  Bench& s = setup(true);
  const int n = int(state.range(0));
  auto g = make_graph(s, n);
  int i = 0;
  for (auto _ : state) {
    g->set_var(0, 0, ++i);
    s.dev->timeline().wait(g->replay());
  }
  state.counters["per_kernel"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CpuGraphReplay)->Arg(10)->Arg(100)->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace sluice
