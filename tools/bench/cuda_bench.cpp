// The CUDA device against the raw driver, in the same run (issue #7):
//   EagerLaunch      host cost of recording and submitting exec + signal, beside RawLaunch (cuLaunchKernel)
//   RoundTrip        submit -> signal seen on the host, beside RawRoundTrip (cuLaunchKernel +
//                    cuStreamSynchronize)
//   GraphReplay/N    an hcq::Graph of N empty kernels replayed and awaited, per kernel, beside RawGraph/N
//                    (a CUDA graph of the same N kernels, cuGraphLaunch + cuStreamSynchronize)
//   Elementwise      out = in + 1 over 64 Mi floats (bytes read + written per second), beside
//                    RawMemcpyDtoD (a device-to-device cuMemcpyAsync of the same buffer)
// Without a CUDA device every benchmark reports "CUDA is absent: <reason>" as its error and the run exits 0.
// Run: cuda_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/program.h"
#include "backends/cuda/queue.h"
#include "hcq/graph.h"

namespace sluice {
namespace {

constexpr const char* kSource =
    "extern \"C\" __global__ void bench_empty(float* a, float* b, int n) {}\n"
    "extern \"C\" __global__ void bench_add(float* out, const float* in, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = in[i] + 1.0f;\n"
    "}\n";
constexpr int kElems = 64 << 20;  // 256 MiB per buffer: far beyond any cache
constexpr unsigned kBlock = 256;

struct Bench {
  std::unique_ptr<hcq::Device> dev;
  std::unique_ptr<hcq::Program> empty, add;
  hcq::Buffer a, b;
  const cuda::Driver* drv = nullptr;
  cuda::CUcontext ctx = nullptr;
  cuda::CUstream stream = nullptr;  // for the raw figures
  std::string absent;
};

Bench& bench() {
  static Bench* s = [] {
    auto* b = new Bench;
    b->absent = cuda::absent_reason();
    if (!b->absent.empty()) return b;
    try {
      b->dev = cuda::open_device(0);
      hcq::Binary bin = b->dev->compiler().compile(kSource);
      b->empty = b->dev->load_program("bench_empty", bin, {2, 1});
      b->add = b->dev->load_program("bench_add", bin, {2, 1});
      b->a = b->dev->allocator().alloc(uint64_t(kElems) * 4);
      b->b = b->dev->allocator().alloc(uint64_t(kElems) * 4);
      b->drv = cuda::cuda_driver(nullptr);
      cuda::CUdevice d = 0;
      SLUICE_DRV("bench", "CUDA", *b->drv, device_get, &d, 0);
      SLUICE_DRV("bench", "CUDA", *b->drv, primary_ctx_retain, &b->ctx, d);
      cuda::make_current(*b->drv, b->ctx);
      SLUICE_DRV("bench", "CUDA", *b->drv, stream_create, &b->stream, cuda::kStreamNonBlocking);
    } catch (const std::exception& e) {
      b->absent = e.what();
      b->dev.reset();
    }
    return b;
  }();
  return *s;
}

bool skip(benchmark::State& state) {
  if (bench().absent.empty()) return false;
  state.SkipWithError(("CUDA is absent: " + bench().absent).c_str());
  return true;
}

void check(const cuda::Driver& drv, cuda::CUresult r, const char* field) {
  if (r != cuda::kSuccess) SLUICE_FAIL(hcq::Error, "bench") << drv.error(field, r);
}

void BM_EagerLaunch(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  auto sig = s.dev->new_signal("bench");
  const hcq::KernelArgs args{{s.a.addr, s.b.addr}, {1}};
  uint64_t v = 0;
  for (auto _ : state) {
    hcq::HwQueue q;
    q.exec(*s.empty, args, {1}).signal(*sig, ++v);
    q.submit(*s.dev);
    if (v % 1024 == 0) {  // keep the stream from growing without bound
      state.PauseTiming();
      sig->wait(v);
      state.ResumeTiming();
    }
  }
  sig->wait(v);
  s.dev->synchronize();
}
BENCHMARK(BM_EagerLaunch);

void BM_RawLaunch(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  cuda::make_current(*s.drv, s.ctx);
  cuda::KernelParams p;
  p.pack(hcq::KernelArgs{{s.a.addr, s.b.addr}, {1}});
  cuda::CUfunction f = cuda::function(*s.empty);
  int64_t n = 0;
  for (auto _ : state) {
    check(*s.drv, s.drv->launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, s.stream, p.params(), nullptr),
          "launch_kernel");
    if (++n % 1024 == 0) {
      state.PauseTiming();
      s.drv->stream_synchronize(s.stream);
      state.ResumeTiming();
    }
  }
  s.drv->stream_synchronize(s.stream);
}
BENCHMARK(BM_RawLaunch);

void BM_RoundTrip(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  auto sig = s.dev->new_signal("bench");
  const hcq::KernelArgs args{{s.a.addr, s.b.addr}, {1}};
  uint64_t v = 0;
  for (auto _ : state) {
    hcq::HwQueue q;
    q.exec(*s.empty, args, {1}).signal(*sig, ++v);
    q.submit(*s.dev);
    sig->wait(v);
  }
}
BENCHMARK(BM_RoundTrip)->UseRealTime();

void BM_RawRoundTrip(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  cuda::make_current(*s.drv, s.ctx);
  cuda::KernelParams p;
  p.pack(hcq::KernelArgs{{s.a.addr, s.b.addr}, {1}});
  cuda::CUfunction f = cuda::function(*s.empty);
  for (auto _ : state) {
    check(*s.drv, s.drv->launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, s.stream, p.params(), nullptr),
          "launch_kernel");
    check(*s.drv, s.drv->stream_synchronize(s.stream), "stream_synchronize");
  }
}
BENCHMARK(BM_RawRoundTrip)->UseRealTime();

// Seconds per kernel as an inverted rate, scaled to nanoseconds.
void per_kernel(benchmark::State& state, int kernels) {
  state.counters["ns_per_kernel"] = benchmark::Counter(
      double(state.iterations()) * kernels / 1e9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_GraphReplay(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  const int n = int(state.range(0));
  std::vector<hcq::GraphItem> items;
  for (int i = 0; i < n; ++i)
    items.push_back(hcq::GraphExec{s.empty.get(), {{s.a.addr, s.b.addr}, {i}}, {1}});
  hcq::Graph g(*s.dev, items);
  int32_t k = 0;
  for (auto _ : state) {
    g.set_var(0, 0, ++k);  // a replay with a patched argument, as a model step would do
    uint64_t v = g.replay();
    s.dev->timeline().wait(v);
  }
  per_kernel(state, n);
  // Whether the replays ran as one CUDA graph or fell back to single launches (backends/cuda/graph.h).
  const std::string why = cuda::graphs_unavailable(*s.dev);
  state.SetLabel(why.empty() ? "CUDA graph" : "single launches: " + why);
}
BENCHMARK(BM_GraphReplay)->Arg(10)->Arg(100)->UseRealTime();

void BM_RawGraph(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  const cuda::Driver& drv = *s.drv;
  if (!drv.has_graphs()) {
    state.SkipWithError("the driver has no graph entry points");
    return;
  }
  cuda::make_current(drv, s.ctx);
  const int n = int(state.range(0));
  cuda::CUgraph graph = nullptr;
  check(drv, drv.graph_create(&graph, 0), "graph_create");
  std::vector<cuda::CUgraphNode> nodes(n);
  std::vector<std::unique_ptr<cuda::KernelParams>> params;
  for (int i = 0; i < n; ++i) {
    params.push_back(std::make_unique<cuda::KernelParams>());
    params.back()->pack(hcq::KernelArgs{{s.a.addr, s.b.addr}, {i}});
    cuda::KernelNodeParams p;
    p.func = cuda::function(*s.empty);
    p.params = params.back()->params();
    check(drv, drv.graph_add_kernel_node(&nodes[i], graph, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p),
          "graph_add_kernel_node");
  }
  cuda::CUgraphExec exec = nullptr;
  check(drv, drv.graph_instantiate(&exec, graph, 0), "graph_instantiate");
  for (auto _ : state) {
    check(drv, drv.graph_launch(exec, s.stream), "graph_launch");
    check(drv, drv.stream_synchronize(s.stream), "stream_synchronize");
  }
  drv.graph_exec_destroy(exec);
  drv.graph_destroy(graph);
  per_kernel(state, n);
}
BENCHMARK(BM_RawGraph)->Arg(10)->Arg(100)->UseRealTime();

void BM_Elementwise(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  auto sig = s.dev->new_signal("bench");
  uint64_t v = 0;
  const hcq::KernelArgs args{{s.b.addr, s.a.addr}, {kElems}};
  for (auto _ : state) {
    hcq::HwQueue q;
    q.exec(*s.add, args, {(kElems + kBlock - 1) / kBlock}, {kBlock}).signal(*sig, ++v);
    q.submit(*s.dev);
    sig->wait(v);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kElems * 8);  // 4 bytes read + 4 written
}
BENCHMARK(BM_Elementwise)->UseRealTime();

void BM_RawMemcpyDtoD(benchmark::State& state) {
  if (skip(state)) return;
  Bench& s = bench();
  cuda::make_current(*s.drv, s.ctx);
  for (auto _ : state) {
    check(*s.drv, s.drv->memcpy_async(s.b.addr, s.a.addr, uint64_t(kElems) * 4, s.stream), "memcpy_async");
    check(*s.drv, s.drv->stream_synchronize(s.stream), "stream_synchronize");
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kElems * 8);
}
BENCHMARK(BM_RawMemcpyDtoD)->UseRealTime();

}  // namespace
}  // namespace sluice
