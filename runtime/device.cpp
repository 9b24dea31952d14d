#include "runtime/device.h"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "backends/cpu/device.h"
#include "backends/cuda/device.h"
#include "backends/hip/device.h"
#include "backends/null/device.h"
#include "backends/opencl/device.h"
#include "backends/vulkan/device.h"
#include "base/error.h"
#include "runtime/device_name.h"
#include "runtime/realize.h"

namespace sluice {
namespace {

// The backends compiled in, one row each, in DESIGN.md §5's order of preference: adding a device kind is
// adding a row. `absent` says why no device of the kind can open on this
// machine ("" when one can: the driver library loads); `target` describes a device's kernels.
struct Backend {
  const char* kind;
  std::string (*absent)();
  std::unique_ptr<hcq::Device> (*open)(int ordinal);
  render::Target (*target)(const hcq::Device&);
};
std::string always_present() { return ""; }
constexpr Backend kBackends[] = {
    {"CUDA", cuda::absent_reason, cuda::open_device, cuda::target},
    {"HIP", hip::absent_reason, hip::open_device, hip::target},
    {"VULKAN", vulkan::absent_reason, vulkan::open_device, vulkan::target},
    {"CL", opencl::absent_reason, opencl::open_device, opencl::target},
    {"CPU", cpu::absent_reason, cpu::open_device, cpu::target},
    {"NULL", always_present, null::open_device, null::target},
};
const Backend* backend(const std::string& kind) {
  for (const Backend& b : kBackends)
    if (kind == b.kind) return &b;
  return nullptr;
}

// Leaked on purpose (see device.h): devices and realizers must outlive every static destructor.
struct Registry {
  std::mutex mu;
  std::map<std::string, hcq::Device*> devices;
  std::map<const hcq::Device*, const Backend*> backend_of;
  std::map<std::string, Realizer*> realizers;
  std::optional<std::chrono::nanoseconds> hang_timeout;  // set_hang_timeout's, for devices opened later
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

std::string available_list() {
  std::string out;
  for (const DeviceInfo& d : list_devices())
    if (d.available) out += (out.empty() ? "" : ", ") + d.name;
  return out;
}

hcq::Device& open_locked(Registry& r, const std::string& name) {
  DeviceName d;
  try {
    d = parse_device(name);
  } catch (const DeviceError&) {
    SLUICE_FAIL(DeviceError, "open_device")
        << "unknown device \"" << name << "\": available devices are " << available_list();
  }
  std::string canon = d.str();
  if (auto it = r.devices.find(canon); it != r.devices.end()) return *it->second;
  const Backend* b = backend(d.kind);  // parse_device accepted the kind: it has a row
  std::string why = b->absent();
  if (!why.empty())
    SLUICE_FAIL(DeviceError, "open_device") << "device " << canon << " is not available (" << why
                                            << "): available devices are " << available_list();
  hcq::Device* dev = b->open(d.ordinal).release();
  if (r.hang_timeout) dev->set_hang_timeout(*r.hang_timeout);
  r.backend_of[dev] = b;
  return *r.devices.emplace(canon, dev).first->second;
}

}  // namespace

std::span<const std::string_view> known_device_kinds() {
  // canonical_device asks on every tensor op: built once.
  static const auto kinds = [] {
    std::array<std::string_view, std::size(kBackends)> out;
    for (size_t i = 0; i < out.size(); ++i) out[i] = kBackends[i].kind;
    return out;
  }();
  return kinds;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  for (const Backend& b : kBackends) {
    std::string why = b.absent();
    out.push_back({b.kind, why.empty(), why});
  }
  return out;
}

hcq::Device& open_device(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return open_locked(r, name);
}

render::Target device_target(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  hcq::Device& dev = open_locked(r, name);
  return r.backend_of.at(&dev)->target(dev);
}

Realizer& realizer(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  hcq::Device& dev = open_locked(r, name);
  std::string canon = canonical_device(name);
  auto it = r.realizers.find(canon);
  if (it == r.realizers.end())
    it = r.realizers.emplace(canon, new Realizer(dev, r.backend_of.at(&dev)->target(dev))).first;
  return *it->second;
}

std::vector<hcq::Device*> open_devices() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<hcq::Device*> out;
  for (const auto& [name, dev] : r.devices) out.push_back(dev);
  return out;
}

void synchronize() {
  for (hcq::Device* d : open_devices()) d->synchronize();
}
void synchronize(const std::string& name) { open_device(name).synchronize(); }

void set_hang_timeout(std::chrono::nanoseconds limit) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.hang_timeout = limit;
  for (const auto& [name, dev] : r.devices) dev->set_hang_timeout(limit);
}

}  // namespace sluice
