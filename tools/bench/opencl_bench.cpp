// OpenCL backend costs (issue #7), each beside the raw OpenCL loop doing the same work in the same run:
// - eager launch, host cost: record + submit of exec+signal  vs  clSetKernelArg + clEnqueueNDRangeKernel;
// - launch -> completion round trip: submit + signal wait     vs  clEnqueueNDRangeKernel + clFinish;
// - graph replay per kernel (replay + timeline wait)          vs  N x clEnqueueNDRangeKernel + clFinish;
// - elementwise bandwidth: c = a + b over 16 Mi floats        vs  clEnqueueCopyBuffer of the same bytes.
// The raw side uses its own context on the same device (CL:0). Absent OpenCL: every case is skipped with
// the reason.
// Run: opencl_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/opencl/device.h"
#include "backends/opencl/driver.h"
#include "hcq/graph.h"

namespace sluice {
namespace {

using opencl::api;

// In the sluice ABI (backends/opencl/program.h: each buffer a base and a byte offset); the raw loop sets
// the same arguments once, with offset 0.
constexpr const char* kSource =
    "__kernel void bench_empty(__global float* a, ulong ao, __global const float* b, ulong bo, int k) {}\n"
    "__kernel void bench_add(__global float* c, ulong co, __global const float* a, ulong ao,\n"
    "                        __global const float* b, ulong bo) {\n"
    "  const size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n";
constexpr uint32_t kElems = 16u << 20, kLocal = 256;
constexpr int kSyncEvery = 256;  // eager host-cost loops drain the queue this often, untimed

struct Sluice {
  std::unique_ptr<hcq::Device> dev;
  std::unique_ptr<hcq::Program> empty, add;
  hcq::Buffer a, b, c;
};

struct Raw {
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_kernel empty = nullptr, add = nullptr;
  cl_mem a = nullptr, b = nullptr, c = nullptr;
};

std::string& absent() {
  static std::string why = opencl::absent_reason();
  return why;
}

Sluice& sluice_setup() {
  static Sluice s = [] {
    Sluice s;
    s.dev = opencl::open_device(0);
    hcq::Binary bin = s.dev->compiler().compile(kSource);
    s.empty = s.dev->load_program("bench_empty", bin, {2, 1});
    s.add = s.dev->load_program("bench_add", bin, {3, 0});
    for (hcq::Buffer* x : {&s.a, &s.b, &s.c}) *x = s.dev->allocator().alloc(uint64_t(kElems) * 4);
    std::vector<float> ones(kElems, 1.0f);
    s.dev->allocator().copyin(s.a, ones.data(), ones.size() * 4);
    s.dev->allocator().copyin(s.b, ones.data(), ones.size() * 4);
    return s;
  }();
  return s;
}

Raw& raw_setup() {
  static Raw r = [] {
    Raw r;
    const auto d = opencl::devices()[0];
    cl_int err = CL_SUCCESS;
    r.ctx = api().clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
    r.q = api().clCreateCommandQueue(r.ctx, d.device, 0, &err);
    const char* src = kSource;
    cl_program p = api().clCreateProgramWithSource(r.ctx, 1, &src, nullptr, &err);
    SLUICE_CL(clBuildProgram(p, 1, &d.device, "", nullptr, nullptr), "bench");
    r.empty = api().clCreateKernel(p, "bench_empty", &err);
    r.add = api().clCreateKernel(p, "bench_add", &err);
    for (cl_mem* m : {&r.a, &r.b, &r.c})
      *m = api().clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, size_t(kElems) * 4, nullptr, &err);
    int k = 1;
    cl_ulong zero = 0;
    for (cl_kernel kn : {r.empty, r.add}) {
      api().clSetKernelArg(kn, 0, sizeof(cl_mem), kn == r.add ? &r.c : &r.a);
      api().clSetKernelArg(kn, 1, sizeof zero, &zero);
      api().clSetKernelArg(kn, 2, sizeof(cl_mem), kn == r.add ? &r.a : &r.b);
      api().clSetKernelArg(kn, 3, sizeof zero, &zero);
    }
    api().clSetKernelArg(r.empty, 4, sizeof k, &k);
    api().clSetKernelArg(r.add, 4, sizeof(cl_mem), &r.b);
    api().clSetKernelArg(r.add, 5, sizeof zero, &zero);
    return r;
  }();
  return r;
}

bool skip(benchmark::State& state) {
  if (absent().empty()) return false;
  state.SkipWithError(("OpenCL absent: " + absent()).c_str());
  return true;
}

void BM_EagerLaunchHost(benchmark::State& state) {
  if (skip(state)) return;
  Sluice& s = sluice_setup();
  auto sig = s.dev->new_signal("bench");
  uint64_t v = 0;
  for (auto _ : state) {
    hcq::HwQueue q;
    q.exec(*s.empty, {{s.a.addr, s.b.addr}, {int(v)}}, {1}).signal(*sig, ++v);
    benchmark::DoNotOptimize(q.submit(*s.dev));
    if (v % kSyncEvery == 0) {
      state.PauseTiming();
      s.dev->synchronize();
      state.ResumeTiming();
    }
  }
  s.dev->synchronize();
}
BENCHMARK(BM_EagerLaunchHost);

void BM_RawEagerLaunchHost(benchmark::State& state) {
  if (skip(state)) return;
  Raw& r = raw_setup();
  const size_t g = 1;
  int k = 0;
  for (auto _ : state) {
    ++k;
    api().clSetKernelArg(r.empty, 4, sizeof k, &k);
    api().clEnqueueNDRangeKernel(r.q, r.empty, 1, nullptr, &g, &g, 0, nullptr, nullptr);
    api().clFlush(r.q);
    if (k % kSyncEvery == 0) {
      state.PauseTiming();
      api().clFinish(r.q);
      state.ResumeTiming();
    }
  }
  api().clFinish(r.q);
}
BENCHMARK(BM_RawEagerLaunchHost);

void BM_RoundTrip(benchmark::State& state) {
  if (skip(state)) return;
  Sluice& s = sluice_setup();
  auto sig = s.dev->new_signal("bench");
  uint64_t v = 0;
  for (auto _ : state) {
    hcq::HwQueue().exec(*s.empty, {{s.a.addr, s.b.addr}, {1}}, {1}).signal(*sig, ++v).submit(*s.dev);
    sig->wait(v);
  }
}
BENCHMARK(BM_RoundTrip)->UseRealTime();

void BM_RawRoundTrip(benchmark::State& state) {
  if (skip(state)) return;
  Raw& r = raw_setup();
  const size_t g = 1;
  for (auto _ : state) {
    api().clEnqueueNDRangeKernel(r.q, r.empty, 1, nullptr, &g, &g, 0, nullptr, nullptr);
    api().clFinish(r.q);
  }
}
BENCHMARK(BM_RawRoundTrip)->UseRealTime();

void BM_GraphReplay(benchmark::State& state) {
  if (skip(state)) return;
  Sluice& s = sluice_setup();
  const int n = int(state.range(0));
  std::vector<hcq::GraphItem> items;
  for (int i = 0; i < n; ++i)
    items.push_back(hcq::GraphExec{s.empty.get(), {{s.a.addr, s.b.addr}, {i}}, {1}});
  hcq::Graph g(*s.dev, items);
  int i = 0;
  for (auto _ : state) {
    g.set_var(0, 0, ++i);
    s.dev->timeline().wait(g.replay());
  }
  state.counters["per_kernel"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_GraphReplay)->Arg(10)->Arg(100)->UseRealTime();

void BM_RawEnqueueLoop(benchmark::State& state) {
  if (skip(state)) return;
  Raw& r = raw_setup();
  const int n = int(state.range(0));
  const size_t g = 1;
  for (auto _ : state) {
    for (int i = 0; i < n; ++i) {
      api().clSetKernelArg(r.empty, 4, sizeof i, &i);
      api().clEnqueueNDRangeKernel(r.q, r.empty, 1, nullptr, &g, &g, 0, nullptr, nullptr);
    }
    api().clFinish(r.q);
  }
  state.counters["per_kernel"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RawEnqueueLoop)->Arg(10)->Arg(100)->UseRealTime();

// Bytes moved: a and b read, c written.
void BM_ElementwiseAdd(benchmark::State& state) {
  if (skip(state)) return;
  Sluice& s = sluice_setup();
  auto sig = s.dev->new_signal("bench");
  uint64_t v = 0;
  for (auto _ : state) {
    hcq::HwQueue()
        .exec(*s.add, {{s.c.addr, s.a.addr, s.b.addr}, {}}, {kElems / kLocal}, {kLocal})
        .signal(*sig, ++v)
        .submit(*s.dev);
    sig->wait(v);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 3 * int64_t(kElems) * 4);
}
BENCHMARK(BM_ElementwiseAdd)->UseRealTime();

// Bytes moved: read once, written once.
void BM_RawCopyBuffer(benchmark::State& state) {
  if (skip(state)) return;
  Raw& r = raw_setup();
  for (auto _ : state) {
    api().clEnqueueCopyBuffer(r.q, r.a, r.c, 0, 0, size_t(kElems) * 4, 0, nullptr, nullptr);
    api().clFinish(r.q);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 2 * int64_t(kElems) * 4);
}
BENCHMARK(BM_RawCopyBuffer)->UseRealTime();

}  // namespace
}  // namespace sluice
