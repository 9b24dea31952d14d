#include "runtime/device.h"

#include <map>
#include <memory>
#include <mutex>

#include "backends/cpu/device.h"
#include "backends/null/device.h"
#include "base/error.h"
#include "runtime/device_name.h"
#include "runtime/realize.h"

namespace sluice {
namespace {

constexpr const char* kNoBackend = "no backend compiled in yet";

// Leaked on purpose (see device.h): devices and realizers must outlive every static destructor.
struct Registry {
  std::mutex mu;
  std::map<std::string, hcq::Device*> devices;
  std::map<std::string, Realizer*> realizers;
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
  std::unique_ptr<hcq::Device> dev;
  if (d.kind == "CPU")
    dev = cpu::open_device(d.ordinal);
  else if (d.kind == "NULL")
    dev = null::open_device(d.ordinal);
  else
    SLUICE_FAIL(DeviceError, "open_device") << "device " << canon << " is not available (" << kNoBackend
                                            << "): available devices are " << available_list();
  return *r.devices.emplace(canon, dev.release()).first->second;
}

}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  for (const char* const* k = known_device_kinds(); *k; ++k) {
    std::string kind = *k;
    bool built = kind == "CPU" || kind == "NULL";
    out.push_back({kind, built, built ? "" : kNoBackend});
  }
  return out;
}

hcq::Device& open_device(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return open_locked(r, name);
}

Realizer& realizer(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  hcq::Device& dev = open_locked(r, name);
  std::string canon = canonical_device(name);
  auto it = r.realizers.find(canon);
  if (it == r.realizers.end()) it = r.realizers.emplace(canon, new Realizer(dev)).first;
  return *it->second;
}

}  // namespace sluice
