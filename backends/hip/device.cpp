#include "backends/hip/device.h"

#include <algorithm>

#include "backends/cuda/queue.h"
#include "backends/hip/compiler.h"
#include "backends/hip/driver.h"
#include "renderers/hip.h"

namespace sluice::hip {

std::string absent_reason() {
  std::string why;
  hip_driver(&why);
  return why;
}

std::unique_ptr<hcq::Device> open_device(int ordinal) {
  std::string why;
  const cuda::Driver* drv = hip_driver(&why);
  if (!drv) SLUICE_FAIL(hcq::Error, "open_device") << "HIP is not available: " << why;
  const std::string name = ordinal == 0 ? "HIP" : "HIP:" + std::to_string(ordinal);
  int count = 0;
  SLUICE_DRV("open_device", name, *drv, device_get_count, &count);
  SLUICE_CHECK_AS(hcq::Error, ordinal >= 0 && ordinal < count)
      << "no device " << name << ": the driver lists " << count << " HIP device" << (count == 1 ? "" : "s");
  cuda::DeviceSpec spec;
  spec.drv = drv;
  spec.name = name;
  SLUICE_DRV("open_device", name, *drv, device_get, &spec.device, ordinal);
  const std::string arch = gfx_arch(*drv, ordinal);
  SLUICE_CHECK_AS(hcq::Error, !arch.empty())
      << name << ": cannot tell the device's gfx architecture (hipGetDeviceProperties, KFD topology)";

  hcq::Properties& p = spec.props;
  char buf[256] = {};
  SLUICE_DRV("open_device", name, *drv, device_get_name, buf, int(sizeof buf) - 1, spec.device);
  p.device_name = buf;
  p.vendor = "AMD";
  int version = 0;
  SLUICE_DRV("open_device", name, *drv, driver_get_version, &version);
  p.driver_version = "HIP " + std::to_string(version) + ", " + arch;
  size_t mem = 0;
  SLUICE_DRV("open_device", name, *drv, device_total_mem, &mem, spec.device);
  p.memory_bytes = mem;
  p.max_workgroup_size = uint32_t(cuda::device_attribute(*drv, name, spec.device, cuda::kMaxThreadsPerBlock));
  p.local_memory_bytes =
      uint64_t(cuda::device_attribute(*drv, name, spec.device, cuda::kMaxSharedMemoryPerBlock));
  p.float16 = p.bfloat16 = true;
  spec.make_compiler = [arch] { return make_compiler(arch); };
  return cuda::open_stream_device(std::move(spec));
}

render::Target target(const hcq::Device& dev) {
  static const std::shared_ptr<const render::Renderer> renderer = render::make_hip_renderer();
  codegen::DeviceCaps caps = render::hip_caps();
  const hcq::Properties p = dev.properties();
  if (p.local_memory_bytes)
    caps.local_bytes = std::min<int64_t>(caps.local_bytes, int64_t(p.local_memory_bytes));
  if (p.max_workgroup_size)
    caps.max_local_size = std::min<int64_t>(caps.max_local_size, p.max_workgroup_size);
  return {renderer, caps};
}

}  // namespace sluice::hip
