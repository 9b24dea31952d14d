#include "backends/vulkan/device.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

#include "backends/vulkan/allocator.h"
#include "backends/vulkan/compiler.h"
#include "backends/vulkan/context.h"
#include "backends/vulkan/driver.h"
#include "backends/vulkan/program.h"
#include "backends/vulkan/queue.h"
#include "hcq/error.h"
#include "hcq/processor_device.h"
#include "renderers/spirv.h"

namespace sluice::vulkan {
namespace {

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

std::vector<VkExtensionProperties> device_extensions(const Instance& inst, VkPhysicalDevice pd) {
  uint32_t n = 0;
  inst.vk.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> out(n);
  inst.vk.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, out.data());
  return out;
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// The family with compute, or UINT32_MAX.
uint32_t compute_family(const Instance& inst, VkPhysicalDevice pd) {
  uint32_t n = 0;
  inst.vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> f(n);
  inst.vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, f.data());
  for (uint32_t i = 0; i < n; ++i)
    if (f[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  return UINT32_MAX;
}

// Physical devices with a compute queue and timeline semaphores, in enumeration order.
std::vector<VkPhysicalDevice> usable_devices(const Instance& inst) {
  uint32_t n = 0;
  if (inst.vk.vkEnumeratePhysicalDevices(inst.handle, &n, nullptr) != VK_SUCCESS) return {};
  std::vector<VkPhysicalDevice> all(n), out;
  inst.vk.vkEnumeratePhysicalDevices(inst.handle, &n, all.data());
  for (VkPhysicalDevice pd : all) {
    VkPhysicalDeviceProperties p;
    inst.vk.vkGetPhysicalDeviceProperties(pd, &p);
    if (p.apiVersion < VK_API_VERSION_1_2 || compute_family(inst, pd) == UINT32_MAX) continue;
    auto f12 =
        vk_struct<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    auto f = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12);
    inst.vk.vkGetPhysicalDeviceFeatures2(pd, &f);
    if (f12.timelineSemaphore) out.push_back(pd);
  }
  return out;
}

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x10005: return "Mesa";
    default: {
      std::ostringstream os;
      os << "0x" << std::hex << id;
      return os.str();
    }
  }
}

// Devices open at process exit (one a static object holds) are destroyed after the driver's and the
// validation layer's own exit handlers, which tear down what a queue's threads still call into (lavapipe
// crashed in vkGetSemaphoreCounterValue). An exit handler registered once the first device exists runs
// before those: it drains and stops every open device's queues (Device::stop_queues) while the driver
// still works. Never destroyed: devices may be destroyed at any point of the exit.
class Device;
struct OpenDevices {
  std::mutex mu;
  std::set<Device*> devices;
};
OpenDevices& open_devices() {
  static auto* d = new OpenDevices;
  return *d;
}
void stop_open_devices();

class Device final : public hcq::ProcessorDevice {
 public:
  Device(std::string name, const Instance& inst, VkPhysicalDevice pd)
      : hcq::ProcessorDevice(std::move(name)) {
    ctx_.inst = &inst;
    ctx_.phys = pd;
    create_device();
    if (const char* n = std::getenv("SLUICE_VULKAN_TEST_DEVICE_LOST")) ctx_.lose_after_submits(std::atoll(n));
    allocator_ = make_allocator(*this, ctx_);
    compiler_ = make_compiler(&ctx_);
    load_pipeline_cache();
    calibrate();
    start_queues();
    static std::once_flag exit_handler;
    std::call_once(exit_handler, [] { std::atexit(stop_open_devices); });
    std::lock_guard lk(open_devices().mu);
    open_devices().devices.insert(this);
  }

  ~Device() override {
    {
      std::lock_guard lk(open_devices().mu);
      open_devices().devices.erase(this);
    }
    const bool clean = stop_queues();
    release_queues();
    if (!clean) {
      // The GPU did not finish within the hang timeout: what it may still touch (buffers, the VkDevice)
      // is left alive rather than destroyed under it or waited for without end.
      (void)allocator_.release();
      return;
    }
    if (ctx_.dev) ctx_.vk.vkDeviceWaitIdle(ctx_.dev);
    save_pipeline_cache();
    allocator_.reset();
    compiler_.reset();
    if (ctx_.pipeline_cache) ctx_.vk.vkDestroyPipelineCache(ctx_.dev, ctx_.pipeline_cache, nullptr);
    if (ctx_.dev) ctx_.vk.vkDestroyDevice(ctx_.dev, nullptr);
  }

  std::unique_ptr<hcq::Program> load_program(const std::string& name, const hcq::Binary& binary,
                                             hcq::KernelLayout layout) override {
    return std::make_unique<Program>(*this, ctx_, name, binary, layout);
  }

  hcq::Properties properties() const override {
    const auto& lim = ctx_.props.limits;
    hcq::Properties p;
    p.device_name = ctx_.props.deviceName;
    p.vendor = vendor_name(ctx_.props.vendorID);
    p.driver_version = driver_version_;
    for (uint32_t i = 0; i < ctx_.mem.memoryHeapCount; ++i)
      if (ctx_.mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        p.memory_bytes += ctx_.mem.memoryHeaps[i].size;
    p.max_workgroup_size = lim.maxComputeWorkGroupInvocations;
    p.local_memory_bytes = lim.maxComputeSharedMemorySize;
    p.max_buffers = lim.maxPerStageDescriptorStorageBuffers;
    p.float16 = ctx_.float16;
    p.bfloat16 = false;
    p.int64 = ctx_.int64;
    p.float64 = ctx_.float64;
    p.software = ctx_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    return p;
  }

 protected:
  std::unique_ptr<hcq::CommandProcessor> make_queue(int k, hcq::CommandProcessor::Config cp) override {
    QueueConfig c;
    c.processor = std::move(cp);
    c.ctx = &ctx_;
    c.allocator = static_cast<Allocator*>(allocator_.get());
    c.queue = k == kCompute ? ctx_.compute_queue : ctx_.copy_queue;
    c.family = k == kCompute ? ctx_.compute_family : ctx_.copy_family;
    c.compute = k == kCompute || ctx_.copy_family == ctx_.compute_family;
    c.period_ns = period_ns_;
    c.cpu_device = ctx_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    c.offset_ns = offset_ns_;
    return start_queue(std::move(c));
  }

 private:
  void create_device() {
    const Instance& inst = *ctx_.inst;
    VkPhysicalDevice pd = ctx_.phys;
    inst.vk.vkGetPhysicalDeviceProperties(pd, &ctx_.props);
    inst.vk.vkGetPhysicalDeviceMemoryProperties(pd, &ctx_.mem);
    auto exts = device_extensions(inst, pd);

    auto driver =
        vk_struct<VkPhysicalDeviceDriverProperties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
    auto push = vk_struct<VkPhysicalDevicePushDescriptorPropertiesKHR>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR, &driver);
    auto p2 = vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &push);
    inst.vk.vkGetPhysicalDeviceProperties2(pd, &p2);
    driver_version_ = std::string(driver.driverName) + " " + driver.driverInfo;

    std::vector<const char*> enable;
    auto want = [&](const char* e) {
      bool ok = has_extension(exts, e);
      if (ok) enable.push_back(e);
      return ok;
    };
    ctx_.push_descriptors =
        want(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) && !env_on("SLUICE_VULKAN_NO_PUSH_DESCRIPTORS");
    ctx_.max_push_descriptors = push.maxPushDescriptors;
    const bool clock = want(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);
    bool calibrated = want(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
    ctx_.force_staging = env_on("SLUICE_VULKAN_STAGING");

    // Every feature the device has is enabled (kernels may use any), except robust buffer access: a
    // bounds check on every access that costs real GPUs throughput.
    // VK_KHR_shader_clock: a kernel may bound a spin by the device clock (the conformance suite's does).
    auto fclock = vk_struct<VkPhysicalDeviceShaderClockFeaturesKHR>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR);
    auto f11 = vk_struct<VkPhysicalDeviceVulkan11Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, clock ? &fclock : nullptr);
    auto f12 = vk_struct<VkPhysicalDeviceVulkan12Features>(
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f11);
    auto f = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12);
    inst.vk.vkGetPhysicalDeviceFeatures2(pd, &f);
    f.features.robustBufferAccess = VK_FALSE;
    ctx_.float16 = f12.shaderFloat16;
    ctx_.int8 = f12.shaderInt8 && f12.storageBuffer8BitAccess;
    ctx_.int16 = f.features.shaderInt16 && f11.storageBuffer16BitAccess;
    ctx_.int64 = f.features.shaderInt64;
    ctx_.float64 = f.features.shaderFloat64;
    ctx_.update_after_bind = f12.descriptorBindingStorageBufferUpdateAfterBind;
    storage8_ = f12.storageBuffer8BitAccess;
    storage16_ = f11.storageBuffer16BitAccess;

    // Queues: compute, and a transfer-only family (a DMA engine) for the copy queue where there is one.
    uint32_t nf = 0;
    inst.vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nf);
    inst.vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fams.data());
    ctx_.compute_family = compute_family(inst, pd);
    ctx_.copy_family = ctx_.compute_family;
    for (uint32_t i = 0; i < nf; ++i)
      if ((fams[i].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
          !(fams[i].queueFlags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)) &&
          fams[i].timestampValidBits)
        ctx_.copy_family = i;
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qi[2] = {
        vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO),
        vk_struct<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO)};
    qi[0].queueFamilyIndex = ctx_.compute_family;
    qi[1].queueFamilyIndex = ctx_.copy_family;
    for (auto& q : qi) q.queueCount = 1, q.pQueuePriorities = &prio;

    auto ci = vk_struct<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f);
    ci.queueCreateInfoCount = ctx_.copy_family == ctx_.compute_family ? 1 : 2;
    ci.pQueueCreateInfos = qi;
    ci.enabledExtensionCount = uint32_t(enable.size());
    ci.ppEnabledExtensionNames = enable.data();
    check(inst.vk.vkCreateDevice(pd, &ci, nullptr, &ctx_.dev), "vkCreateDevice");
    ctx_.vk = load_device_table(inst, ctx_.dev);
    ctx_.vk.vkGetDeviceQueue(ctx_.dev, ctx_.compute_family, 0, &ctx_.compute_queue);
    ctx_.vk.vkGetDeviceQueue(ctx_.dev, ctx_.copy_family, 0, &ctx_.copy_queue);
    ctx_.timestamps =
        fams[ctx_.compute_family].timestampValidBits > 0 && ctx_.props.limits.timestampPeriod > 0;
    ctx_.calibrated = calibrated && ctx_.vk.vkGetCalibratedTimestampsEXT;
    if (ctx_.calibrated && inst.vk.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT) {
      uint32_t n = 0;
      inst.vk.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(pd, &n, nullptr);
      std::vector<VkTimeDomainEXT> d(n);
      inst.vk.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(pd, &n, d.data());
      ctx_.calibrated = std::count(d.begin(), d.end(), VK_TIME_DOMAIN_DEVICE_EXT) &&
                        std::count(d.begin(), d.end(), VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT);
    } else {
      ctx_.calibrated = false;
    }
  }

  // Device ticks to host-clock ns (hcq::now_ns is CLOCK_MONOTONIC through std::chrono::steady_clock).
  // Without calibrated timestamps, signals carry the host time at which completion was seen.
  void calibrate() {
    if (!ctx_.timestamps || !ctx_.calibrated) return;
    VkCalibratedTimestampInfoEXT info[2] = {
        vk_struct<VkCalibratedTimestampInfoEXT>(VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT),
        vk_struct<VkCalibratedTimestampInfoEXT>(VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT)};
    info[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
    info[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    uint64_t ts[2], dev_max = 0;
    if (ctx_.vk.vkGetCalibratedTimestampsEXT(ctx_.dev, 2, info, ts, &dev_max) != VK_SUCCESS) return;
    period_ns_ = ctx_.props.limits.timestampPeriod;
    offset_ns_ = int64_t(ts[1]) - int64_t(double(ts[0]) * period_ns_);
  }

  std::filesystem::path pipeline_cache_path() const {
    const auto& dir = compiler_->cache_dir();
    if (dir.empty()) return {};
    std::ostringstream os;
    os << ctx_.props.vendorID << ":" << ctx_.props.deviceID << ":" << ctx_.props.driverVersion << ":";
    os.write(reinterpret_cast<const char*>(ctx_.props.pipelineCacheUUID), VK_UUID_SIZE);
    return dir / "vulkan" / ("pipelines-" + hcq::sha256_hex(os.str()).substr(0, 16) + ".bin");
  }

  void load_pipeline_cache() {
    std::string data;
    if (auto path = pipeline_cache_path(); !path.empty()) {
      std::ifstream in(path, std::ios::binary);
      data.assign(std::istreambuf_iterator<char>(in), {});
    }
    auto ci = vk_struct<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
    ci.initialDataSize = data.size();
    ci.pInitialData = data.data();
    // The driver ignores data of another device or driver; a cache it cannot take at all starts empty.
    if (ctx_.vk.vkCreatePipelineCache(ctx_.dev, &ci, nullptr, &ctx_.pipeline_cache) != VK_SUCCESS) {
      ci.initialDataSize = 0;
      check(ctx_.vk.vkCreatePipelineCache(ctx_.dev, &ci, nullptr, &ctx_.pipeline_cache),
            "vkCreatePipelineCache");
    }
  }

  // Written to a temporary name and renamed, as the compiler cache; failures are ignored (a cache).
  void save_pipeline_cache() {
    auto path = pipeline_cache_path();
    if (path.empty() || !ctx_.pipeline_cache) return;
    size_t n = 0;
    if (ctx_.vk.vkGetPipelineCacheData(ctx_.dev, ctx_.pipeline_cache, &n, nullptr) != VK_SUCCESS) return;
    std::string data(n, '\0');
    if (ctx_.vk.vkGetPipelineCacheData(ctx_.dev, ctx_.pipeline_cache, &n, data.data()) != VK_SUCCESS) return;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    auto tmp = path;
    tmp += ".tmp" + std::to_string(::getpid()) + "-" + std::to_string(uintptr_t(this));
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(data.data(), std::streamsize(n));
      if (!out) return (void)std::filesystem::remove(tmp, ec);
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  }

 public:
  render::SpirvOptions spirv_options() const {
    render::SpirvOptions o;
    o.version = ctx_.inst->api_version >= VK_API_VERSION_1_3 && ctx_.props.apiVersion >= VK_API_VERSION_1_3
                    ? 0x00010600
                    : 0x00010500;
    o.int8 = ctx_.int8;
    o.int16 = ctx_.int16;
    o.int64 = ctx_.int64;
    o.float16 = ctx_.float16;
    o.float64 = ctx_.float64;
    o.storage8 = storage8_;
    o.storage16 = storage16_;
    return o;
  }
  const Context& context() const { return ctx_; }

 private:
  Context ctx_;
  std::string driver_version_;
  bool storage8_ = false, storage16_ = false;
  double period_ns_ = 0;
  int64_t offset_ns_ = 0;
};

void stop_open_devices() {
  std::lock_guard lk(open_devices().mu);
  for (Device* d : open_devices().devices) d->stop_queues();
}

}  // namespace

std::string absent_reason() {
  std::string why;
  const Instance* inst = instance(&why);
  if (!inst) return why;
  if (usable_devices(*inst).empty())
    return "no Vulkan 1.2 device with a compute queue and timeline semaphores";
  return "";
}

std::unique_ptr<hcq::Device> open_device(int ordinal) {
  std::string why;
  const Instance* inst = instance(&why);
  if (!inst) SLUICE_FAIL(DeviceError, "open_device") << "VULKAN is absent: " << why;
  auto devs = usable_devices(*inst);
  if (devs.empty())
    SLUICE_FAIL(DeviceError, "open_device")
        << "VULKAN is absent: no Vulkan 1.2 device with a compute queue and timeline semaphores";
  SLUICE_CHECK_IN(DeviceError, "open_device", ordinal >= 0 && size_t(ordinal) < devs.size())
      << "no Vulkan device " << ordinal << ": " << devs.size() << " present";
  return std::make_unique<Device>(ordinal == 0 ? "VULKAN" : "VULKAN:" + std::to_string(ordinal), *inst,
                                  devs[size_t(ordinal)]);
}

render::Target target(const hcq::Device& dev) {
  const auto& d = dynamic_cast<const Device&>(dev);
  const auto& lim = d.context().props.limits;
  codegen::DeviceCaps caps;
  caps.global_dims = 3;
  for (int i = 0; i < 3; ++i) caps.global_max[i] = lim.maxComputeWorkGroupCount[i];
  caps.local_bytes = lim.maxComputeSharedMemorySize;
  caps.supports_float16 = d.context().float16;
  // GLSL.std.450 has no float64 EXP2/LOG2/SIN (renderers/spirv.h): codegen's polynomials serve every type.
  caps.accurate_transcendentals = false;
  caps.has_local = true;
  caps.max_local_size = lim.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) caps.local_max[i] = lim.maxComputeWorkGroupSize[i];
  caps.max_buffers = int(std::min<uint32_t>(lim.maxPerStageDescriptorStorageBuffers, 1024));
  // llvmpipe, Mesa's CPU driver under lavapipe, ends shader loops after 65535 iterations silently.
  if (d.context().props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) caps.max_loop = 65535;
  return {std::shared_ptr<const render::Renderer>(render::make_spirv_renderer(d.spirv_options())), caps};
}

}  // namespace sluice::vulkan
