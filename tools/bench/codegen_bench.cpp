// Lowering + rendering (no compiling) of the kernels of one GPT-2-small block (d=768, 12 heads, seq 128,
// causal attention, MLP 3072 with gelu, pre-norm, residuals), built with the Tensor API and scheduled once.
// Each iteration lowers, linearizes and renders every kernel as C for the CPU device (its target: renderer
// and DeviceCaps), timing each kernel on its own; the counters report the median and the slowest kernel
// (target: median <= 200 us). The heuristic's actions are on (as make_kernel's default).
//
// BM_CpuKernel/<case>/<opt>: the run time on the CPU device of one kernel built without (opt 0,
// SLUICE_NOOPT's kernel) and with (opt 1) the heuristic's actions: case 0 a 256x256 matmul, case 1 a sum
// of 2^24 floats. Compiling is outside the timed region.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "core/codegen/codegen.h"
#include "core/schedule/schedule.h"
#include "hcq/device.h"
#include "hcq/queue.h"
#include "models/models.h"
#include "renderers/cpu.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace {

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}

void BM_LowerRenderGpt2Block(benchmark::State& state) {
  const sluice::bench::Gpt block(1);
  sluice::Schedule s = sluice::schedule({block.forward().uop()});
  std::vector<sluice::UOp> asts;
  for (const sluice::ScheduleItem& it : s.items)
    if (it.ast.op() == sluice::Op::Sink) asts.push_back(it.ast);
  const sluice::render::Target target = sluice::device_target("CPU");
  std::vector<std::vector<double>> us(asts.size());      // per kernel, one sample per iteration
  std::vector<std::vector<double>> cpu_us(asts.size());  // the same in this thread's CPU time
  size_t bytes = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < asts.size(); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      const double c0 = thread_cpu_us();
      std::string src = target.renderer->render(sluice::codegen::make_kernel(asts[i], target.caps));
      us[i].push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      cpu_us[i].push_back(thread_cpu_us() - c0);
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
  std::vector<double> cpu_per_kernel;
  for (const auto& v : cpu_us) cpu_per_kernel.push_back(median(v));
  // CPU time is what the work costs when other processes share the cores (wall time then includes waits).
  state.counters["median_cpu_us_per_kernel"] = median(cpu_per_kernel);
  state.counters["kernels"] = double(asts.size());
  state.counters["median_us_per_kernel"] = median(per_kernel);
  state.counters["max_us_per_kernel"] =
      per_kernel.empty() ? 0 : *std::max_element(per_kernel.begin(), per_kernel.end());
  state.counters["last_source_bytes"] = double(bytes);
  state.SetItemsProcessed(int64_t(state.iterations() * asts.size()));
}
BENCHMARK(BM_LowerRenderGpt2Block)->Unit(benchmark::kMillisecond);

sluice::Tensor filled(const sluice::Shape& shape) {
  std::vector<float> v(size_t(sluice::prod(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 7) * 0.25f - 0.5f;
  return sluice::Tensor::from(v, shape, "CPU");
}

void BM_CpuKernel(benchmark::State& state) {
  using namespace sluice;
  const Tensor t = state.range(0) == 0
                       ? filled({256, 256}).matmul(filled({256, 256}))
                       : Tensor(filled({1 << 24}).uop().reduce(Op::Add, {0}), "CPU");  // one kernel
  const Schedule s = schedule({t.uop()});
  const ScheduleItem* it = nullptr;
  for (const ScheduleItem& i : s.items)
    if (i.ast.op() == Op::Sink) it = &i;
  const codegen::DeviceCaps caps = device_target("CPU").caps;
  const codegen::Kernel k =
      state.range(1) ? codegen::make_kernel(it->ast, caps) : codegen::make_kernel(it->ast, caps, {});
  hcq::Device& dev = open_device("CPU");
  const std::string src = render::make_cpu_renderer()->render(k);
  auto prog = dev.load_program(k.name, dev.compiler().compile_many(std::vector<std::string>{src}).at(0),
                               {uint32_t(it->bufs.size()), 0});
  hcq::Allocator& alloc = dev.allocator();
  std::vector<hcq::Buffer> mem;
  hcq::KernelArgs args;
  for (const UOp& b : it->bufs) {
    const uint64_t bytes = uint64_t(b.arg_as<int64_t>()) * uint64_t(b.dtype().itemsize());
    mem.push_back(alloc.alloc(bytes));
    if (auto host = host_buffer(b)) alloc.copyin(mem.back(), host->bytes.data(), bytes);
    args.bufs.push_back(mem.back().addr);
  }
  for (auto _ : state) {
    hcq::HwQueue q;
    q.exec(*prog, args, {k.global_size[0], k.global_size[1], k.global_size[2]});
    q.submit(dev);
    dev.synchronize();
  }
  for (hcq::Buffer& b : mem) alloc.free(b);  // synchronized: the device is done with them
  state.SetLabel(k.name + (k.opts.empty() ? " (no opts)" : " (" + std::to_string(k.opts.size()) + " opts)"));
}
BENCHMARK(BM_CpuKernel)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
