#include "backends/hip/device.h"

#include "backends/cuda/device.h"
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

codegen::DeviceCaps caps() {
  codegen::DeviceCaps c;
  c.global_dims = 3;
  c.global_max = {0x7fffffffLL, 65535, 65535};
  c.local_bytes = 64 * 1024;
  c.supports_float16 = true;
  c.accurate_transcendentals = false;
  c.has_local = true;
  c.max_local_size = 1024;
  c.local_max = {1024, 1024, 1024};
  c.max_buffers = 256;
  c.compute_units = 96;  // CUs of a gfx1100 (7900 XTX); a device reports its own
  return c;
}

render::Target target(const hcq::Device& dev) {
  static const std::shared_ptr<const render::Renderer> renderer = render::make_hip_renderer();
  return cuda::stream_target(dev, renderer, caps());
}

}  // namespace sluice::hip
