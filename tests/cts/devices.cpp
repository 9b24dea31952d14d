#include "tests/cts/devices.h"

#include <mutex>

#include "backends/cpu/compiler.h"
#include "backends/cpu/device.h"
#include "backends/cuda/compiler.h"
#include "backends/cuda/device.h"
#include "backends/hip/compiler.h"
#include "backends/hip/device.h"
#include "backends/null/compiler.h"
#include "backends/null/device.h"
#include "backends/opencl/compiler.h"
#include "backends/opencl/device.h"
#include "backends/vulkan/device.h"

namespace sluice::cts {

Kernels load_cuda_kernels(hcq::Device& dev);  // kernels_cuda.cpp
std::string cuda_arch();                      // of CUDA device 0, "" without one
std::string cuda_store_kernel(const std::string& name, int value);
Kernels load_hip_kernels(hcq::Device& dev);  // kernels_hip.cpp
std::string hip_arch();                      // of HIP device 0, "" without one
std::string hip_store_kernel(const std::string& name, int value);

const std::vector<const DeviceEntry*>& device_entries() {
  static const DeviceEntry cpu{
      "CPU",
      [](int ordinal) { return cpu::open_device(ordinal); },
      [](const std::filesystem::path& dir) { return cpu::make_compiler(dir); },
      {},
      load_c_kernels,
      {},
  };
  static const DeviceEntry null{
      "NULL",
      [](int ordinal) { return null::open_device(ordinal); },
      [](const std::filesystem::path&) { return null::make_compiler(); },
      {
          {Feature::Execution, "NULL runs no kernels and copies nothing: buffers have no contents to check"},
          {Feature::BlockingWaits,
           "NULL completes every command at submit: a queue's wait never holds anything back"},
          {Feature::DiskCache, "NULL's compiler runs no process and caches nothing"},
      },
      load_c_kernels,
      {},
  };
  static const DeviceEntry vulkan{
      "VULKAN",
      // As CL below: a machine with one Vulkan device opens it again for the tests that want a second.
      [](int ordinal) {
        // The suite runs with the Khronos validation layer (kernels_vulkan.cpp fails it on any error);
        // SLUICE_VULKAN_VALIDATION=0 in the environment turns it off.
        ::setenv("SLUICE_VULKAN_VALIDATION", "1", 0);
        try {
          return vulkan::open_device(ordinal);
        } catch (const DeviceError&) {
          if (ordinal == 0) throw;
          return vulkan::open_device(0);
        }
      },
      [](const std::filesystem::path&) -> std::unique_ptr<hcq::Compiler> { return nullptr; },
      {
          {Feature::DiskCache,
           "the compiler tests feed C sources; VULKAN's compiler takes SPIR-V modules (its cache is hcq's, "
           "keyed by device and driver)"},
          {Feature::HangRecovery,
           "Vulkan cannot cancel a dispatch: an abandoned kernel keeps the VkQueue (lavapipe has one) until "
           "it ends, and the suite's spin kernel cannot read its host-pointer flag from SPIR-V "
           "(kernels_vulkan.cpp)"},
      },
      load_spirv_kernels,
      {},
  };
  static const DeviceEntry cl{
      "CL",
      // A machine with one OpenCL device opens it again for the tests that want a second device: a
      // separate context and queues, so waits between them go through the host all the same.
      [](int ordinal) {
        try {
          return opencl::open_device(ordinal);
        } catch (const DeviceError&) {
          if (ordinal == 0) throw;
          return opencl::open_device(0);
        }
      },
      [](const std::filesystem::path& dir) { return opencl::make_compiler(dir); },
      {
          {Feature::HangRecovery,
           "OpenCL cannot stop a running kernel, and a driver's threads stay busy with it for good"},
      },
      load_opencl_kernels,
      opencl_store_kernel,
  };
  // CUDA and HIP: a machine with one GPU opens it again for the tests that want a second device (its own
  // streams and timeline over the same GPU).
  static const DeviceEntry cuda{
      "CUDA",
      [](int ordinal) {
        try {
          return cuda::open_device(ordinal);
        } catch (const hcq::Error&) {
          if (ordinal == 0) throw;
          return cuda::open_device(0);
        }
      },
      [](const std::filesystem::path& dir) { return cuda::make_compiler(cuda_arch(), dir); },
      {
          {Feature::HangRecovery,
           "a running CUDA kernel cannot be stopped, and the suite's spin kernel polls a pageable host flag "
           "that a GPU without HMM faults on, which would end the shared context for every later test"},
      },
      load_cuda_kernels,
      cuda_store_kernel,
  };
  static const DeviceEntry hip{
      "HIP",
      [](int ordinal) {
        try {
          return hip::open_device(ordinal);
        } catch (const hcq::Error&) {
          if (ordinal == 0) throw;
          return hip::open_device(0);
        }
      },
      [](const std::filesystem::path& dir) { return hip::make_compiler(hip_arch(), dir); },
      {
          {Feature::HangRecovery,
           "a running HIP kernel cannot be stopped, and the suite's spin kernel polls a pageable host flag "
           "that a GPU without HMM faults on, which would end the shared context for every later test"},
      },
      load_hip_kernels,
      hip_store_kernel,
  };
  static const std::vector<const DeviceEntry*> entries = {&cpu, &null, &vulkan, &cl, &cuda, &hip};
  return entries;
}

std::string device_param_name(const testing::TestParamInfo<const DeviceEntry*>& info) {
  return info.param->name;
}

namespace {
struct Shared {
  std::unique_ptr<hcq::Device> dev;  // declared first: destroyed after the programs that refer to it
  Kernels kernels;
  std::string error;  // why the device could not be opened
};
}  // namespace

void DeviceTest::SetUp() {
  static std::mutex mu;
  static std::map<std::string, Shared> shared;
  std::lock_guard lk(mu);
  Shared& s = shared[entry().name];
  if (!s.dev && s.error.empty()) {
    try {
      s.dev = entry().open(0);
      s.kernels = entry().load_kernels(*s.dev);
    } catch (const std::exception& e) {
      s.error = e.what();
      s.dev.reset();
    }
  }
  if (!s.dev) GTEST_SKIP() << entry().name << " is absent: " << s.error;
  dev_ = s.dev.get();
  kernels_ = &s.kernels;
}

std::string DeviceTest::unsupported(Feature f) const {
  auto it = entry().unsupported.find(f);
  return it == entry().unsupported.end() ? std::string() : it->second;
}

}  // namespace sluice::cts
