#include "backends/cuda/device.h"

#include <algorithm>

#include "backends/cuda/compiler.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/queue.h"
#include "renderers/cuda.h"

namespace sluice::cuda {
namespace {

const Driver& driver(const char* func) {
  std::string why;
  const Driver* drv = cuda_driver(&why);
  if (!drv) SLUICE_FAIL(hcq::Error, func) << "CUDA is not available: " << why;
  return *drv;
}

}  // namespace

std::string absent_reason() {
  std::string why;
  cuda_driver(&why);
  return why;
}

std::unique_ptr<hcq::Device> open_device(int ordinal) {
  const Driver& drv = driver("open_device");
  const std::string name = ordinal == 0 ? "CUDA" : "CUDA:" + std::to_string(ordinal);
  int count = 0;
  SLUICE_DRV("open_device", name, drv, device_get_count, &count);
  SLUICE_CHECK_AS(hcq::Error, ordinal >= 0 && ordinal < count)
      << "no device " << name << ": the driver lists " << count << " CUDA device" << (count == 1 ? "" : "s");
  DeviceSpec spec;
  spec.drv = &drv;
  spec.name = name;
  SLUICE_DRV("open_device", name, drv, device_get, &spec.device, ordinal);

  hcq::Properties& p = spec.props;
  char buf[256] = {};
  SLUICE_DRV("open_device", name, drv, device_get_name, buf, int(sizeof buf) - 1, spec.device);
  p.device_name = buf;
  p.vendor = "NVIDIA";
  int version = 0;
  SLUICE_DRV("open_device", name, drv, driver_get_version, &version);
  p.driver_version = "CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  size_t mem = 0;
  SLUICE_DRV("open_device", name, drv, device_total_mem, &mem, spec.device);
  p.memory_bytes = mem;
  p.max_workgroup_size = uint32_t(device_attribute(drv, name, spec.device, kMaxThreadsPerBlock));
  p.local_memory_bytes = uint64_t(device_attribute(drv, name, spec.device, kMaxSharedMemoryPerBlock));
  p.float16 = p.bfloat16 = true;
  const int major = device_attribute(drv, name, spec.device, kComputeCapabilityMajor);
  const int minor = device_attribute(drv, name, spec.device, kComputeCapabilityMinor);
  const std::string arch = "sm_" + std::to_string(major) + std::to_string(minor);
  p.driver_version += ", " + arch;
  spec.make_compiler = [arch] { return make_compiler(arch); };
  return open_stream_device(std::move(spec));
}

codegen::DeviceCaps caps() {
  codegen::DeviceCaps c;
  c.global_dims = 3;
  c.global_max = {0x7fffffffLL, 65535, 65535};
  c.local_bytes = 48 * 1024;
  c.supports_float16 = true;
  c.accurate_transcendentals = true;
  c.has_local = true;
  c.max_local_size = 1024;
  c.local_max = {1024, 1024, 64};
  c.max_buffers = 256;
  c.compute_units = 108;  // SMs of an A100; a device reports its own
  return c;
}

render::Target stream_target(const hcq::Device& dev, std::shared_ptr<const render::Renderer> renderer,
                             codegen::DeviceCaps caps) {
  // The device's own limits where they are tighter than the architecture's.
  const hcq::Properties p = dev.properties();
  if (p.local_memory_bytes)
    caps.local_bytes = std::min<int64_t>(caps.local_bytes, int64_t(p.local_memory_bytes));
  if (p.max_workgroup_size)
    caps.max_local_size = std::min<int64_t>(caps.max_local_size, p.max_workgroup_size);
  return {std::move(renderer), caps};
}

render::Target target(const hcq::Device& dev) {
  static const std::shared_ptr<const render::Renderer> renderer = render::make_cuda_renderer();
  return stream_target(dev, renderer, caps());
}

}  // namespace sluice::cuda
