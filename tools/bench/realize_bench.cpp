// Runtime-level costs (DESIGN.md §5), through the whole stack (Realizer, Buffer, JIT, hcq, device):
// - NULL (completes everything at submit, so the figures are host cost): eager launch of a compiled kernel
//   (a schedule run again: buffers looked up, program found, queue recorded, submitted), a full realize of
//   `x + 1` (scheduling included), and a JIT replay per kernel (target: <= 2 us and <= 0.25 us).
// - CPU device: the round trip of a one-kernel schedule (submit -> done, median and p99), JIT replay per
//   kernel, elementwise add of 16M float32 beside a plain C++ loop, a sum of 16M float32 as one kernel and
//   split in two, 1024^3 float32 matmul beside OpenBLAS sgemm, cold compile of the GPT-2 block's kernels
//   with an empty cache, one core's FMA peak (the bound the matmul is measured against), and the benchmark
//   models (models/models.h) beside PyTorch CPU with 2 threads (a python3 subprocess in the same run;
//   counters sluice_ms, torch_ms, ratio). scripts/bench.py runs these beside their peers and states the
//   goals.
// Run: realize_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/device.h"
#include "models/models.h"
#include "runtime/device.h"
#include "runtime/jit.h"
#include "runtime/realize.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

Schedule schedule_of(const std::vector<Tensor>& ts) {
  std::vector<UOp> outs;
  for (const Tensor& t : ts) outs.push_back(t.uop());
  return schedule(outs);
}

// Long kernels on a shared machine: wait minutes, not the default 30 s, before calling a kernel hung.
constexpr std::chrono::minutes kPatience{5};
void sync(hcq::Device& dev) {
  dev.set_hang_timeout(kPatience);
  dev.synchronize(kPatience);
}

Tensor filled(const Shape& s, float v, const std::string& dev) {
  return Tensor::from(std::vector<float>(size_t(prod(s)), v), s, dev).realize();
}

// ---------------------------------------------------------------- NULL: host cost of the stack

void BM_NullEagerLaunch(benchmark::State& state) {
  Realizer& r = realizer("NULL");
  Tensor x = filled({16}, 1, "NULL");
  Schedule s = schedule_of({x + 1});
  r.run_schedule(s);  // compiles
  for (auto _ : state) r.run_schedule(s);
  state.counters["per_kernel_us"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_NullEagerLaunch);

void BM_NullRealize(benchmark::State& state) {  // x + 1 from the tensor graph: scheduling included
  Tensor x = filled({16}, 1, "NULL");
  (x + 1).realize();
  for (auto _ : state) {
    Tensor y = x + 1;
    y.realize();
  }
}
BENCHMARK(BM_NullRealize);

Jit chain_jit(int n) {
  return jit([n](const std::vector<Tensor>& in) {
    Tensor h = in[0];
    for (int i = 0; i < n; ++i) h = (h + 1).contiguous();
    return std::vector<Tensor>{h};
  });
}

void BM_NullJitReplay(benchmark::State& state) {
  const int n = int(state.range(0));
  Jit f = chain_jit(n);
  Tensor x = filled({16}, 1, "NULL");
  for (int i = 0; i < 3; ++i) f({x});
  for (auto _ : state) benchmark::DoNotOptimize(f({x}));
  state.counters["per_kernel_us"] =
      benchmark::Counter(double(state.iterations()) * double(f.kernel_count()) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_NullJitReplay)->Arg(100)->Arg(1000);

// ---------------------------------------------------------------- CPU device

void BM_CpuScheduleRoundTrip(benchmark::State& state) {  // one tiny kernel, submit -> device done
  Realizer& r = realizer("CPU");
  hcq::Device& dev = r.device();
  Tensor x = filled({16}, 1, "CPU");
  Schedule s = schedule_of({x + 1});
  r.run_schedule(s);
  std::vector<double> lat;
  for (auto _ : state) {
    auto t0 = Clock::now();
    r.run_schedule(s);
    dev.synchronize();
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(lat.begin(), lat.end());
  state.counters["p50_us"] = lat[lat.size() / 2];
  state.counters["p99_us"] = lat[lat.size() * 99 / 100];
}
BENCHMARK(BM_CpuScheduleRoundTrip)->UseRealTime();

void BM_CpuJitReplay(benchmark::State& state) {  // n tiny kernels replayed and waited for
  const int n = int(state.range(0));
  Jit f = chain_jit(n);
  Tensor x = filled({16}, 1, "CPU");
  for (int i = 0; i < 3; ++i) f({x});
  hcq::Device& dev = open_device("CPU");
  for (auto _ : state) {
    f({x});
    dev.synchronize();
  }
  state.counters["per_kernel_us"] =
      benchmark::Counter(double(state.iterations()) * double(f.kernel_count()) * 1e-6,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CpuJitReplay)->Arg(100)->UseRealTime();

constexpr int64_t kAddN = int64_t(1) << 24;

void BM_CpuAdd16M(benchmark::State& state) {
  Realizer& r = realizer("CPU");
  Tensor a = filled({kAddN}, 1, "CPU"), b = filled({kAddN}, 2, "CPU");
  Schedule s = schedule_of({a + b});
  r.run_schedule(s);
  sync(r.device());
  for (auto _ : state) {
    r.run_schedule(s);
    sync(r.device());
  }
  state.SetBytesProcessed(state.iterations() * kAddN * 12);
}
BENCHMARK(BM_CpuAdd16M)->UseRealTime();

// A sum of 16M float32 to one value: arg 0 as one kernel (one work-item loops over all of it), arg 1 as
// Tensor::sum runs it (split into partials and their sum, runtime/tensor.cpp detail::reduce).
void BM_CpuSum16M(benchmark::State& state) {
  Realizer& r = realizer("CPU");
  Tensor a = filled({kAddN}, 1, "CPU");
  Tensor total = state.range(0) ? a.sum() : Tensor(a.uop().reduce(Op::Add, {0}), "CPU");
  Schedule s = schedule_of({total});
  r.run_schedule(s);
  sync(r.device());
  for (auto _ : state) {
    r.run_schedule(s);
    sync(r.device());
  }
  state.SetBytesProcessed(state.iterations() * kAddN * 4);
  state.counters["kernels"] = double(s.items.size());
}
BENCHMARK(BM_CpuSum16M)->Arg(0)->Arg(1)->UseRealTime();

void BM_LoopAdd16M(benchmark::State& state) {  // the same add as a plain C++ loop, one thread
  std::vector<float> a(kAddN, 1), b(kAddN, 2), c(kAddN);
  for (auto _ : state) {
    for (int64_t i = 0; i < kAddN; ++i) c[size_t(i)] = a[size_t(i)] + b[size_t(i)];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kAddN * 12);
}
BENCHMARK(BM_LoopAdd16M)->UseRealTime();

constexpr int64_t kMm = 1024;

void BM_CpuMatmul1024(benchmark::State& state) {
  Realizer& r = realizer("CPU");
  Tensor a = filled({kMm, kMm}, 0.5f, "CPU"), b = filled({kMm, kMm}, 0.25f, "CPU");
  Schedule s = schedule_of({a.matmul(b)});
  r.run_schedule(s);
  sync(r.device());
  for (auto _ : state) {
    r.run_schedule(s);
    sync(r.device());
  }
  state.counters["GFLOPS"] = benchmark::Counter(double(state.iterations()) * 2.0 * kMm * kMm * kMm * 1e-9,
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CpuMatmul1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// With one thread per hardware thread, as the CPU device runs by default (SLUICE_CPU_THREADS unset);
// counter threads.
void BM_OpenblasSgemm1024(benchmark::State& state) {
  std::vector<float> a(kMm * kMm, 0.5f), b(kMm * kMm, 0.25f), c(kMm * kMm);
  const int threads = std::max(1, int(std::thread::hardware_concurrency()));
  openblas_set_num_threads(threads);
  state.counters["threads"] = threads;
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kMm, kMm, kMm, 1.0f, a.data(), kMm, b.data(), kMm,
                0.0f, c.data(), kMm);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(double(state.iterations()) * 2.0 * kMm * kMm * kMm * 1e-9,
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_OpenblasSgemm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// The FMA peak of one core: 12 independent vector accumulators, a*x+b per step, no memory traffic. The
// widest instruction set the CPU has (AVX-512, else AVX2+FMA) is picked at run time; counter GFLOPS, per
// thread. Run alone (BM_FmaPeak) and on every CPU at once (BM_FmaPeak/threads:N, what each core gets
// while the others work too, as they do in a matmul on every core: a core alone may clock higher, and
// on a virtual machine two virtual CPUs may share parts of one core).
#if defined(__x86_64__)
__attribute__((target("avx512f"))) float fma_loop_512(int64_t n) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(float(i));
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (int64_t k = 0; k < n; ++k)
#pragma GCC unroll 12  // the accumulators stay in registers only when the inner loop is unrolled
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  float s = 0;
  for (int i = 0; i < 12; ++i) s += _mm512_reduce_add_ps(acc[i]);
  return s;
}
__attribute__((target("avx2,fma"))) float fma_loop_256(int64_t n) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(float(i));
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (int64_t k = 0; k < n; ++k)
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  alignas(32) float lanes[8];
  float s = 0;
  for (int i = 0; i < 12; ++i) {
    _mm256_store_ps(lanes, acc[i]);
    for (float f : lanes) s += f;
  }
  return s;
}

void BM_FmaPeak(benchmark::State& state) {
  const bool wide = __builtin_cpu_supports("avx512f");
  if (!wide && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
    return state.SkipWithError("no AVX-512 or AVX2+FMA instructions");
  constexpr int64_t kSteps = 1 << 22;
  for (auto _ : state) benchmark::DoNotOptimize(wide ? fma_loop_512(kSteps) : fma_loop_256(kSteps));
  const double flops_per_step = 12.0 * (wide ? 16 : 8) * 2;
  state.counters["GFLOPS"] =
      benchmark::Counter(double(state.iterations()) * kSteps * flops_per_step * 1e-9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kAvgThreads);
  state.SetLabel(wide ? "avx512" : "avx2");
}
BENCHMARK(BM_FmaPeak)->UseRealTime();
BENCHMARK(BM_FmaPeak)->UseRealTime()->ThreadPerCpu();
#endif

// Lowering, rendering and compiling every kernel of one GPT-2 block on a fresh CPU device whose compiler
// cache is an empty temporary directory (and running them once). Counters: compile_ms, the host's time
// lowering, rendering, compiling and loading the kernels (RealizeReport's codegen_ms + compile_ms), of
// which codegen_ms lowering and rendering; run_ms, a second run of the same schedule (kernels only);
// first_run_ms, the cold run's time outside compile_ms: its kernels on memory touched for the first time
// (the parameters hold no data here, so each page's first read faults; on a virtual machine ~10 us each).
void BM_ColdCompileGpt2Block(benchmark::State& state) {
  int round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() /
                   ("sluice_cold_" + std::to_string(getpid()) + "_" + std::to_string(round++));
    fs::remove_all(dir);
    setenv("SLUICE_CACHE_DIR", dir.c_str(), 1);
    std::unique_ptr<hcq::Device> dev = cpu::open_device(0);
    {
      // Declared after the device: the model's buffers (allocated on it) go before it does.
      Realizer r(*dev, cpu::target(*dev));
      bench::Block block;
      Tensor x = Tensor::empty({1, 128, bench::Block::d}, dtypes::float32, "CPU");
      Schedule s = schedule_of({block.forward(x)});
      size_t kernels = 0;
      for (const ScheduleItem& it : s.items) kernels += it.ast.op() == Op::Sink;
      state.ResumeTiming();
      const auto t0 = Clock::now();
      RealizeReport rep;
      r.run_schedule(s, &rep);
      sync(*dev);
      const auto t1 = Clock::now();
      state.PauseTiming();
      // The same schedule again runs the loaded kernels only (run_ms); the cold run's time outside
      // compile_ms is first_run_ms.
      r.run_schedule(s);
      sync(*dev);
      const double run_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
      const double compile_ms = rep.codegen_ms + rep.compile_ms;
      state.counters["run_ms"] = run_ms;
      state.counters["compile_ms"] = compile_ms;
      state.counters["codegen_ms"] = rep.codegen_ms;  // of which lowering and rendering
      state.counters["first_run_ms"] =
          std::chrono::duration<double, std::milli>(t1 - t0).count() - compile_ms;
      state.counters["compiler_runs"] = double(rep.compiler_invocations);
      state.counters["kernels"] = double(kernels);
    }
    unsetenv("SLUICE_CACHE_DIR");
    fs::remove_all(dir);
    state.ResumeTiming();
  }
}
BENCHMARK(BM_ColdCompileGpt2Block)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(1);

// ---------------------------------------------------------------- models beside PyTorch

// PyTorch's median time (ms) for `model`, from a python3 subprocess with 2 threads; -1 when torch is missing.
double torch_ms(const std::string& model) {
  const char* script = R"PY(
import sys, time, statistics, torch
torch.set_num_threads(2)
m = sys.argv[1]
torch.manual_seed(0)
r = lambda *s: torch.randn(*s)
if m == "mlp":
    x, w1, b1, w2, b2 = r(64, 784), r(784, 512), r(512), r(512, 10), r(10)
    f = lambda: (torch.relu(x @ w1 + b1)) @ w2 + b2
elif m.startswith("cnn"):
    F = torch.nn.functional
    p = 1 if m == "cnn_pad1" else 0
    s = 5 + 2 * p
    x, c1, c1b, c2, c2b, w, b = r(64, 1, 28, 28), r(32, 1, 3, 3), r(32), r(64, 32, 3, 3), r(64), r(64 * s * s, 10), r(10)
    def f():
        h = F.max_pool2d(F.relu(F.conv2d(x, c1, c1b, padding=p)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, c2, c2b, padding=p)), 2)
        return h.flatten(1) @ w + b
else:
    F = torch.nn.functional
    d, H, hd, t = 768, 12, 64, 128
    x = r(1, t, d)
    p = dict(l1g=r(d), l1b=r(d), wqkv=r(d, 3 * d), bqkv=r(3 * d), wo=r(d, d), bo=r(d), l2g=r(d), l2b=r(d),
             w1=r(d, 4 * d), b1=r(4 * d), w2=r(4 * d, d), b2=r(d))
    def f():
        qkv = F.layer_norm(x, (d,), p["l1g"], p["l1b"]) @ p["wqkv"] + p["bqkv"]
        q, k, v = [a.reshape(1, t, H, hd).transpose(1, 2) for a in qkv.split(d, -1)]
        s = (q @ k.transpose(-1, -2)) / hd ** 0.5
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf")).softmax(-1)
        h = x + ((s @ v).transpose(1, 2).reshape(1, t, d) @ p["wo"] + p["bo"])
        m = F.gelu(F.layer_norm(h, (d,), p["l2g"], p["l2b"]) @ p["w1"] + p["b1"], approximate="tanh") @ p["w2"] + p["b2"]
        return h + m
with torch.no_grad():
    for _ in range(3): f()
    ts = []
    for _ in range(15):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
print(statistics.median(ts) * 1e3)
)PY";
  const std::string path =
      (std::filesystem::temp_directory_path() / ("sluice_torch_" + std::to_string(getpid()) + ".py"))
          .string();
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fputs(script, f);
    std::fclose(f);
  }
  const char* py = std::getenv("SLUICE_PYTHON");
  // The first interpreter on PATH, else the system one (where distribution packages such as torch live).
  std::string cmd = std::string(py ? py : "python3") + " " + path + " " + model + " 2>/dev/null";
  double ms = -1;
  for (const std::string& c : {cmd, "/usr/bin/python3 " + path + " " + model + " 2>/dev/null"}) {
    if (FILE* p = popen(c.c_str(), "r")) {
      if (std::fscanf(p, "%lf", &ms) != 1) ms = -1;
      pclose(p);
    }
    if (ms > 0 || py) break;
  }
  std::remove(path.c_str());
  return ms;
}

// The model with normal random parameters, as PyTorch's side has (models.h: why data matters).
template <class Model>
void model_vs_torch(benchmark::State& state, const std::string& name, Model m) {
  Realizer& r = realizer("CPU");
  bench::fill_normal(m.params());
  Schedule s = schedule_of({m.forward()});
  r.run_schedule(s);
  sync(r.device());
  std::vector<double> ms;
  for (auto _ : state) {
    auto t0 = Clock::now();
    r.run_schedule(s);
    sync(r.device());
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const double ours = ms[ms.size() / 2], theirs = torch_ms(name);
  state.counters["sluice_ms"] = ours;
  state.counters["torch_ms"] = theirs;
  state.counters["ratio"] = theirs > 0 ? ours / theirs : -1;
}
void BM_MlpVsTorch(benchmark::State& s) { model_vs_torch(s, "mlp", bench::Mlp()); }
void BM_CnnVsTorch(benchmark::State& s) { model_vs_torch(s, "cnn", bench::Cnn()); }
void BM_CnnPad1VsTorch(benchmark::State& s) { model_vs_torch(s, "cnn_pad1", bench::Cnn(1)); }
void BM_Gpt2BlockVsTorch(benchmark::State& s) { model_vs_torch(s, "gpt2", bench::Gpt(1)); }
BENCHMARK(BM_MlpVsTorch)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK(BM_CnnVsTorch)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_CnnPad1VsTorch)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_Gpt2BlockVsTorch)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace sluice
