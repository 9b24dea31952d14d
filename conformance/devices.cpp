#include "conformance/devices.h"

#include "backends/cpu/compiler.h"
#include "backends/cpu/device.h"
#include "backends/cuda/compiler.h"
#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"
#include "backends/hip/compiler.h"
#include "backends/hip/device.h"
#include "backends/hip/driver.h"
#include "backends/null/compiler.h"
#include "backends/null/device.h"
#include "backends/opencl/compiler.h"
#include "backends/opencl/device.h"
#include "backends/vulkan/device.h"
#include "base/error.h"
#include "runtime/device_name.h"

namespace sluice::conformance {
namespace {

// Ordinal n, or device 0 again on a machine that has only that one (DeviceEntry::open).
template <class E, class Open>
std::unique_ptr<hcq::Device> open_or_first(Open open, int ordinal) {
  try {
    return open(ordinal);
  } catch (const E&) {
    if (ordinal == 0) throw;
    return open(0);
  }
}

std::string cuda_arch() {  // of CUDA device 0, "" without one
  const cuda::Driver* drv = cuda::cuda_driver(nullptr);
  cuda::CUdevice d = 0;
  int major = 0, minor = 0;
  if (!drv || drv->device_get(&d, 0) != cuda::kSuccess ||
      drv->device_get_attribute(&major, cuda::kComputeCapabilityMajor, d) != cuda::kSuccess ||
      drv->device_get_attribute(&minor, cuda::kComputeCapabilityMinor, d) != cuda::kSuccess)
    return "";
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string hip_arch() {  // of HIP device 0, "" without one
  const cuda::Driver* drv = hip::hip_driver(nullptr);
  return drv ? hip::gfx_arch(*drv, 0) : "";
}

}  // namespace

const std::vector<const DeviceEntry*>& device_entries() {
  using Path = std::filesystem::path;
  static const DeviceEntry cpu{
      "CPU",
      [](int n) { return cpu::open_device(n); },
      [](const Path& dir) { return cpu::make_compiler(dir); },
      Language::C,
  };
  static const DeviceEntry null{
      "NULL",
      [](int n) { return null::open_device(n); },
      [](const Path&) { return null::make_compiler(); },
      Language::C,
  };
  static const DeviceEntry vulkan{
      "VULKAN",
      [](int n) { return open_or_first<DeviceError>(vulkan::open_device, n); },
      {},
      Language::SpirvAsm,
  };
  static const DeviceEntry cl{
      "CL",
      [](int n) { return open_or_first<DeviceError>(opencl::open_device, n); },
      [](const Path& dir) { return opencl::make_compiler(dir); },
      Language::OpenCL,
  };
  static const DeviceEntry cuda{
      "CUDA",
      [](int n) { return open_or_first<hcq::Error>(cuda::open_device, n); },
      [](const Path& dir) { return cuda::make_compiler(cuda_arch(), dir); },
      Language::Cuda,
  };
  static const DeviceEntry hip{
      "HIP",
      [](int n) { return open_or_first<hcq::Error>(hip::open_device, n); },
      [](const Path& dir) { return hip::make_compiler(hip_arch(), dir); },
      Language::Hip,
  };
  static const std::vector<const DeviceEntry*> entries = {&cpu, &null, &vulkan, &cl, &cuda, &hip};
  return entries;
}

const DeviceEntry& device_entry(const std::string& device) {
  const std::string kind = parse_device(device).kind;
  for (const DeviceEntry* e : device_entries())
    if (e->kind == kind) return *e;
  SLUICE_FAIL(DeviceError, "device_entry") << "no conformance entry for device kind " << kind;
}

}  // namespace sluice::conformance
