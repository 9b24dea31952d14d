// The Vulkan device (DESIGN.md §4) beside a minimal raw-Vulkan loop doing the same dispatches, on the same
// physical device, in the same run:
// - dispatch overhead per kernel: eager (record an hcq queue with one exec + signal, submit; 64 in flight)
//   and graph (hcq::Graph of n kernels replayed and waited for), against raw (record a command buffer:
//   bind, push descriptors, push constants, dispatch; vkQueueSubmit with a timeline semaphore signal) and
//   a pre-recorded raw command buffer of n dispatches resubmitted;
// - submit -> signal round trip of one empty kernel (p50 / p99), against raw submit -> vkWaitSemaphores;
// - elementwise add of 16M float32 (bandwidth) and a 512x512 float32 matmul (GFLOP/s) through the Tensor
//   API on VULKAN beside the CPU device.
// Report sluice/raw from the medians: the per_kernel_us / p50_us counters of the Vk* and Raw* rows, or
// the ratio counter of the *Paired rows, which alternate sluice and raw iteration by iteration so that
// both see the same machine load (the figures to quote on a shared machine).
// Run: vulkan_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/vulkan/device.h"
#include "backends/vulkan/driver.h"
#include "hcq/graph.h"
#include "runtime/device.h"
#include "runtime/realize.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

// bench_empty: 2 storage buffers (bindings 0, 1), 1 push constant, an empty body (spirv-as of the obvious
// assembly, SPIR-V 1.5).
constexpr uint32_t kEmptyWords[] = {
    0x07230203, 0x00010500, 0x00070000, 0x0000000e, 0x00000000, 0x00020011, 0x00000001, 0x0003000e,
    0x00000000, 0x00000001, 0x0009000f, 0x00000005, 0x00000001, 0x636e6562, 0x6d655f68, 0x00797470,
    0x00000002, 0x00000003, 0x00000004, 0x00060010, 0x00000001, 0x00000011, 0x00000001, 0x00000001,
    0x00000001, 0x00040047, 0x00000005, 0x00000006, 0x00000004, 0x00050048, 0x00000006, 0x00000000,
    0x00000023, 0x00000000, 0x00030047, 0x00000006, 0x00000002, 0x00040047, 0x00000002, 0x00000022,
    0x00000000, 0x00040047, 0x00000002, 0x00000021, 0x00000000, 0x00040047, 0x00000003, 0x00000022,
    0x00000000, 0x00040047, 0x00000003, 0x00000021, 0x00000001, 0x00050048, 0x00000007, 0x00000000,
    0x00000023, 0x00000000, 0x00030047, 0x00000007, 0x00000002, 0x00020013, 0x00000008, 0x00030021,
    0x00000009, 0x00000008, 0x00040015, 0x0000000a, 0x00000020, 0x00000001, 0x0003001d, 0x00000005,
    0x0000000a, 0x0003001e, 0x00000006, 0x00000005, 0x00040020, 0x0000000b, 0x0000000c, 0x00000006,
    0x0004003b, 0x0000000b, 0x00000002, 0x0000000c, 0x0004003b, 0x0000000b, 0x00000003, 0x0000000c,
    0x0003001e, 0x00000007, 0x0000000a, 0x00040020, 0x0000000c, 0x00000009, 0x00000007, 0x0004003b,
    0x0000000c, 0x00000004, 0x00000009, 0x00050036, 0x00000008, 0x00000001, 0x00000000, 0x00000009,
    0x000200f8, 0x0000000d, 0x000100fd, 0x00010038};
constexpr int kInFlight = 64;

struct Sluice {
  std::unique_ptr<hcq::Device> dev;
  std::unique_ptr<hcq::Program> empty;
  hcq::Buffer a, b;
};

Sluice& sluice_dev() {
  static Sluice s = [] {
    Sluice s;
    s.dev = vulkan::open_device(0);
    s.empty = s.dev->load_program("bench_empty",
                                  s.dev->compiler().compile(std::string(
                                      reinterpret_cast<const char*>(kEmptyWords), sizeof kEmptyWords)),
                                  {2, 1});
    s.a = s.dev->allocator().alloc(4096);
    s.b = s.dev->allocator().alloc(4096);
    return s;
  }();
  return s;
}

// ---------------------------------------------------------------- raw Vulkan, the same work

struct Raw {
  const vulkan::Instance* inst = nullptr;
  VkDevice dev = VK_NULL_HANDLE;
  vulkan::DeviceTable vk;
  VkQueue queue = VK_NULL_HANDLE;
  VkSemaphore sem = VK_NULL_HANDLE;
  uint64_t value = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> cmds;  // a ring of kInFlight
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkBuffer buf[2] = {};
  VkDeviceMemory mem[2] = {};

  void record_dispatch(VkCommandBuffer c, int32_t var) {
    VkDescriptorBufferInfo info[2] = {{buf[0], 0, VK_WHOLE_SIZE}, {buf[1], 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet w[2];
    for (int i = 0; i < 2; ++i) {
      w[i] = vulkan::vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      w[i].dstBinding = uint32_t(i);
      w[i].descriptorCount = 1;
      w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w[i].pBufferInfo = &info[i];
    }
    vk.vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vk.vkCmdPushDescriptorSetKHR(c, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 2, w);
    vk.vkCmdPushConstants(c, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &var);
    vk.vkCmdDispatch(c, 1, 1, 1);
  }
  void begin(VkCommandBuffer c, VkCommandBufferUsageFlags flags) {
    vk.vkResetCommandBuffer(c, 0);
    auto bi = vulkan::vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    bi.flags = flags;
    vk.vkBeginCommandBuffer(c, &bi);
  }
  // c recorded again as one dispatch for one submission (what an eager launch costs).
  void record_one(VkCommandBuffer c, int32_t var) {
    begin(c, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    record_dispatch(c, var);
    vk.vkEndCommandBuffer(c);
  }
  // c recorded once as n dispatches with memory barriers between them, for submitting again and again.
  void record_chain(VkCommandBuffer c, int n) {
    begin(c, 0);
    for (int i = 0; i < n; ++i) {
      if (i) {
        auto mb = vulkan::vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
        mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
        vk.vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                0, 1, &mb, 0, nullptr, 0, nullptr);
      }
      record_dispatch(c, i);
    }
    vk.vkEndCommandBuffer(c);
  }
  // Submits c signalling the next semaphore value; returns it.
  uint64_t submit(VkCommandBuffer c) {
    uint64_t v = ++value;
    auto ti =
        vulkan::vk_struct<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &v;
    auto si = vulkan::vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti);
    si.commandBufferCount = 1;
    si.pCommandBuffers = &c;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &sem;
    vulkan::check(vk.vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
    return v;
  }
  void wait(uint64_t v) {
    auto wi = vulkan::vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem;
    wi.pValues = &v;
    vulkan::check(vk.vkWaitSemaphores(dev, &wi, UINT64_MAX), "vkWaitSemaphores");
  }
};

// The first usable physical device, as VULKAN opens it; errors abort the benchmark.
Raw& raw() {
  static Raw r = [] {
    Raw r;
    std::string why;
    r.inst = vulkan::instance(&why);
    if (!r.inst) throw std::runtime_error(why);
    const auto& ivk = r.inst->vk;
    uint32_t n = 0;
    ivk.vkEnumeratePhysicalDevices(r.inst->handle, &n, nullptr);
    std::vector<VkPhysicalDevice> pds(n);
    ivk.vkEnumeratePhysicalDevices(r.inst->handle, &n, pds.data());
    VkPhysicalDevice pd = pds.at(0);
    uint32_t nf = 0;
    ivk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nf);
    ivk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fams.data());
    uint32_t family = 0;
    while (!(fams[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;
    const float prio = 1;
    auto qi = vulkan::vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
    qi.queueFamilyIndex = family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &prio;
    auto f12 = vulkan::vk_struct<VkPhysicalDeviceVulkan12Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    f12.timelineSemaphore = VK_TRUE;
    const char* ext = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    auto ci = vulkan::vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f12);
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &qi;
    ci.enabledExtensionCount = 1;
    ci.ppEnabledExtensionNames = &ext;
    vulkan::check(ivk.vkCreateDevice(pd, &ci, nullptr, &r.dev), "vkCreateDevice");
    r.vk = vulkan::load_device_table(*r.inst, r.dev);
    auto& vk = r.vk;
    vk.vkGetDeviceQueue(r.dev, family, 0, &r.queue);
    auto ti = vulkan::vk_struct<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
    ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    auto si = vulkan::vk_struct<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ti);
    vk.vkCreateSemaphore(r.dev, &si, nullptr, &r.sem);
    auto pi = vulkan::vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = family;
    vk.vkCreateCommandPool(r.dev, &pi, nullptr, &r.pool);
    r.cmds.resize(kInFlight + 1);
    auto ai = vulkan::vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ai.commandPool = r.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = uint32_t(r.cmds.size());
    vk.vkAllocateCommandBuffers(r.dev, &ai, r.cmds.data());
    VkPhysicalDeviceMemoryProperties mp;
    ivk.vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (int i = 0; i < 2; ++i) {
      auto bi = vulkan::vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
      bi.size = 4096;
      bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
      vk.vkCreateBuffer(r.dev, &bi, nullptr, &r.buf[i]);
      VkMemoryRequirements req;
      vk.vkGetBufferMemoryRequirements(r.dev, r.buf[i], &req);
      auto mi = vulkan::vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
      mi.allocationSize = req.size;
      while (!(req.memoryTypeBits >> mi.memoryTypeIndex & 1)) ++mi.memoryTypeIndex;
      vk.vkAllocateMemory(r.dev, &mi, nullptr, &r.mem[i]);
      vk.vkBindBufferMemory(r.dev, r.buf[i], r.mem[i], 0);
    }
    VkDescriptorSetLayoutBinding b[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr}};
    auto li = vulkan::vk_struct<VkDescriptorSetLayoutCreateInfo>(
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    li.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    li.bindingCount = 2;
    li.pBindings = b;
    VkDescriptorSetLayout set_layout;
    vk.vkCreateDescriptorSetLayout(r.dev, &li, nullptr, &set_layout);
    VkPushConstantRange pc{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    auto pli = vulkan::vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pc;
    vk.vkCreatePipelineLayout(r.dev, &pli, nullptr, &r.layout);
    auto smi = vulkan::vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    smi.codeSize = sizeof kEmptyWords;
    smi.pCode = kEmptyWords;
    VkShaderModule module;
    vk.vkCreateShaderModule(r.dev, &smi, nullptr, &module);
    auto cpi = vulkan::vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    cpi.stage = vulkan::vk_struct<VkPipelineShaderStageCreateInfo>(
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = module;
    cpi.stage.pName = "bench_empty";
    cpi.layout = r.layout;
    vulkan::check(vk.vkCreateComputePipelines(r.dev, VK_NULL_HANDLE, 1, &cpi, nullptr, &r.pipeline),
                  "vkCreateComputePipelines");
    return r;
  }();
  return r;
}

// ---------------------------------------------------------------- dispatch overhead, eager

void BM_VkEagerDispatch(benchmark::State& state) {
  Sluice& s = sluice_dev();
  auto sig = s.dev->new_signal("bench");
  const hcq::KernelArgs args{{s.a.addr, s.b.addr}, {1}};
  uint64_t v = sig->value();
  for (auto _ : state) {
    hcq::HwQueue q;
    q.exec(*s.empty, args, {1}).signal(*sig, ++v);
    q.submit(*s.dev);
    if (v > kInFlight) sig->wait(v - kInFlight);
  }
  sig->wait(v);
  state.counters["per_kernel_us"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_VkEagerDispatch)->UseRealTime();

void BM_RawEagerDispatch(benchmark::State& state) {
  Raw& r = raw();
  uint64_t i = 0, first = r.value;
  for (auto _ : state) {
    VkCommandBuffer c = r.cmds[i++ % kInFlight];
    if (r.value - first >= kInFlight) r.wait(r.value - kInFlight + 1);  // c's last use is done
    r.record_one(c, int32_t(i));
    r.submit(c);
  }
  r.wait(r.value);
  state.counters["per_kernel_us"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RawEagerDispatch)->UseRealTime();

// Both of the above alternating, kInFlight dispatches each per iteration, each batch waited for (see
// BM_GraphReplayPaired): the medians per kernel and sluice/raw.
void BM_EagerDispatchPaired(benchmark::State& state) {
  Sluice& s = sluice_dev();
  Raw& r = raw();
  auto sig = s.dev->new_signal("bench");
  const hcq::KernelArgs args{{s.a.addr, s.b.addr}, {1}};
  uint64_t v = sig->value();
  r.wait(r.value);
  std::vector<double> vk_us, raw_us;
  for (auto _ : state) {
    uint64_t t0 = hcq::now_ns();
    for (int i = 0; i < kInFlight; ++i) {
      hcq::HwQueue q;
      q.exec(*s.empty, args, {1}).signal(*sig, ++v);
      q.submit(*s.dev);
    }
    sig->wait(v);
    uint64_t t1 = hcq::now_ns();
    for (int i = 0; i < kInFlight; ++i) {
      VkCommandBuffer c = r.cmds[size_t(i)];
      r.record_one(c, i);
      r.submit(c);
    }
    r.wait(r.value);
    uint64_t t2 = hcq::now_ns();
    vk_us.push_back(double(t1 - t0) / 1e3 / kInFlight);
    raw_us.push_back(double(t2 - t1) / 1e3 / kInFlight);
  }
  std::sort(vk_us.begin(), vk_us.end());
  std::sort(raw_us.begin(), raw_us.end());
  state.counters["vk_per_kernel_us"] = vk_us[vk_us.size() / 2];
  state.counters["raw_per_kernel_us"] = raw_us[raw_us.size() / 2];
  state.counters["ratio"] = vk_us[vk_us.size() / 2] / raw_us[raw_us.size() / 2];
}
BENCHMARK(BM_EagerDispatchPaired)->UseRealTime();

// ---------------------------------------------------------------- dispatch overhead, graph

void BM_VkGraphReplay(benchmark::State& state) {
  Sluice& s = sluice_dev();
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
  state.counters["per_kernel_us"] = benchmark::Counter(
      double(state.iterations()) * n * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_VkGraphReplay)->Arg(100)->UseRealTime();

// A pre-recorded command buffer of n dispatches with barriers between them, submitted and waited for.
void BM_RawGraphReplay(benchmark::State& state) {
  Raw& r = raw();
  const int n = int(state.range(0));
  r.wait(r.value);
  VkCommandBuffer c = r.cmds[kInFlight];
  r.record_chain(c, n);
  for (auto _ : state) r.wait(r.submit(c));
  state.counters["per_kernel_us"] = benchmark::Counter(
      double(state.iterations()) * n * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RawGraphReplay)->Arg(100)->UseRealTime();

// Both of the above alternating, one replay each per iteration: on a shared machine whose load moves
// during a run, only this pairs each sluice replay with a raw one under the same load. Reports the
// medians per kernel and sluice/raw.
void BM_GraphReplayPaired(benchmark::State& state) {
  Sluice& s = sluice_dev();
  Raw& r = raw();
  const int n = int(state.range(0));
  std::vector<hcq::GraphItem> items;
  for (int i = 0; i < n; ++i)
    items.push_back(hcq::GraphExec{s.empty.get(), {{s.a.addr, s.b.addr}, {i}}, {1}});
  hcq::Graph g(*s.dev, items);
  r.wait(r.value);
  VkCommandBuffer c = r.cmds[kInFlight];
  r.record_chain(c, n);
  std::vector<double> vk_us, raw_us;
  int i = 0;
  for (auto _ : state) {
    uint64_t t0 = hcq::now_ns();
    g.set_var(0, 0, ++i);
    s.dev->timeline().wait(g.replay());
    uint64_t t1 = hcq::now_ns();
    r.wait(r.submit(c));
    uint64_t t2 = hcq::now_ns();
    vk_us.push_back(double(t1 - t0) / 1e3 / n);
    raw_us.push_back(double(t2 - t1) / 1e3 / n);
  }
  std::sort(vk_us.begin(), vk_us.end());
  std::sort(raw_us.begin(), raw_us.end());
  state.counters["vk_per_kernel_us"] = vk_us[vk_us.size() / 2];
  state.counters["raw_per_kernel_us"] = raw_us[raw_us.size() / 2];
  state.counters["ratio"] = vk_us[vk_us.size() / 2] / raw_us[raw_us.size() / 2];
}
BENCHMARK(BM_GraphReplayPaired)->Arg(100)->UseRealTime();

// ---------------------------------------------------------------- submit -> signal round trip

template <class F>
void round_trip(benchmark::State& state, F once) {
  std::vector<uint64_t> lat;
  lat.reserve(1 << 20);
  for (auto _ : state) {
    uint64_t t0 = hcq::now_ns();
    once();
    lat.push_back(hcq::now_ns() - t0);
  }
  std::sort(lat.begin(), lat.end());
  state.counters["p50_us"] = double(lat[lat.size() / 2]) / 1e3;
  state.counters["p99_us"] = double(lat[lat.size() * 99 / 100]) / 1e3;
}

void BM_VkRoundTrip(benchmark::State& state) {
  Sluice& s = sluice_dev();
  auto sig = s.dev->new_signal("bench");
  hcq::HwQueue q;
  hcq::HwQueue::Cmd cmd;
  q.exec(*s.empty, {{s.a.addr, s.b.addr}, {1}}, {1}).signal(*sig, 0, &cmd);
  uint64_t v = sig->value();
  round_trip(state, [&] {
    q.patch_value(cmd, ++v);
    q.submit(*s.dev);
    sig->wait(v);
  });
}
BENCHMARK(BM_VkRoundTrip)->UseRealTime();

void BM_RawRoundTrip(benchmark::State& state) {
  Raw& r = raw();
  r.wait(r.value);
  VkCommandBuffer c = r.cmds[0];
  round_trip(state, [&] {
    r.record_one(c, 1);
    r.wait(r.submit(c));
  });
}
BENCHMARK(BM_RawRoundTrip)->UseRealTime();

// Both of the above alternating, one round trip each per iteration (see BM_GraphReplayPaired): the
// sluice and raw p50 and p99 and sluice/raw of the p50s. Both wait in vkWaitSemaphores (sluice through
// Signal::wait -> Device::wait_in_driver).
void BM_RoundTripPaired(benchmark::State& state) {
  Sluice& s = sluice_dev();
  Raw& r = raw();
  auto sig = s.dev->new_signal("bench");
  hcq::HwQueue q;
  hcq::HwQueue::Cmd cmd;
  q.exec(*s.empty, {{s.a.addr, s.b.addr}, {1}}, {1}).signal(*sig, 0, &cmd);
  uint64_t v = sig->value();
  r.wait(r.value);
  VkCommandBuffer c = r.cmds[0];
  std::vector<uint64_t> vk, rw;
  vk.reserve(1 << 20), rw.reserve(1 << 20);
  for (auto _ : state) {
    uint64_t t0 = hcq::now_ns();
    q.patch_value(cmd, ++v);
    q.submit(*s.dev);
    sig->wait(v);
    uint64_t t1 = hcq::now_ns();
    r.record_one(c, 1);
    r.wait(r.submit(c));
    uint64_t t2 = hcq::now_ns();
    vk.push_back(t1 - t0);
    rw.push_back(t2 - t1);
  }
  std::sort(vk.begin(), vk.end());
  std::sort(rw.begin(), rw.end());
  auto us = [](const std::vector<uint64_t>& x, size_t num, size_t den) {
    return double(x[x.size() * num / den]) / 1e3;
  };
  state.counters["vk_p50_us"] = us(vk, 1, 2);
  state.counters["raw_p50_us"] = us(rw, 1, 2);
  state.counters["vk_p99_us"] = us(vk, 99, 100);
  state.counters["raw_p99_us"] = us(rw, 99, 100);
  state.counters["ratio"] = us(vk, 1, 2) / us(rw, 1, 2);
}
BENCHMARK(BM_RoundTripPaired)->UseRealTime();

// ---------------------------------------------------------------- Tensor API: bandwidth and matmul

// Long kernels on a shared machine: minutes, not the default 30 s, before a kernel counts as hung.
void sync(hcq::Device& dev) {
  dev.set_hang_timeout(std::chrono::minutes(5));
  dev.synchronize(std::chrono::minutes(5));
}

Schedule schedule_of(const Tensor& t) { return schedule({t.uop()}); }

Tensor filled(const Shape& s, float v, const std::string& dev) {
  return Tensor::from(std::vector<float>(size_t(prod(s)), v), s, dev).realize();
}

constexpr int64_t kAddN = int64_t(1) << 24;

void add16m(benchmark::State& state, const std::string& device) {
  Realizer& r = realizer(device);
  Tensor a = filled({kAddN}, 1, device), b = filled({kAddN}, 2, device);
  Schedule s = schedule_of(a + b);
  r.run_schedule(s);
  sync(r.device());
  for (auto _ : state) {
    r.run_schedule(s);
    sync(r.device());
  }
  state.SetBytesProcessed(state.iterations() * kAddN * 12);
}
void BM_VkAdd16M(benchmark::State& state) { add16m(state, "VULKAN"); }
void BM_CpuAdd16M(benchmark::State& state) { add16m(state, "CPU"); }
BENCHMARK(BM_VkAdd16M)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuAdd16M)->UseRealTime()->Unit(benchmark::kMillisecond);

constexpr int64_t kMm = 512;

void matmul(benchmark::State& state, const std::string& device) {
  Realizer& r = realizer(device);
  Tensor a = filled({kMm, kMm}, 0.5f, device), b = filled({kMm, kMm}, 0.25f, device);
  Schedule s = schedule_of(a.matmul(b));
  r.run_schedule(s);
  sync(r.device());
  for (auto _ : state) {
    r.run_schedule(s);
    sync(r.device());
  }
  state.counters["GFLOPS"] = benchmark::Counter(double(state.iterations()) * 2.0 * kMm * kMm * kMm * 1e-9,
                                                benchmark::Counter::kIsRate);
}
void BM_VkMatmul512(benchmark::State& state) { matmul(state, "VULKAN"); }
void BM_CpuMatmul512(benchmark::State& state) { matmul(state, "CPU"); }
BENCHMARK(BM_VkMatmul512)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CpuMatmul512)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice
