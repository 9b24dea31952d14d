#include "runtime/device_name.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "base/error.h"
#include "runtime/device.h"

namespace sluice {
namespace {
std::string kind_list() {
  std::string out;
  for (std::string_view k : known_device_kinds()) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}
}  // namespace

std::string DeviceName::str() const { return ordinal == 0 ? kind : kind + ":" + std::to_string(ordinal); }

DeviceName parse_device(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  size_t colon = upper.find(':');
  DeviceName d{upper.substr(0, colon)};
  std::span<const std::string_view> kinds = known_device_kinds();
  bool known = std::find(kinds.begin(), kinds.end(), d.kind) != kinds.end();
  SLUICE_CHECK_IN(DeviceError, "device", known)
      << "unknown device \"" << name << "\": known kinds are " << kind_list();
  if (colon != std::string::npos) {
    std::string_view n = std::string_view(upper).substr(colon + 1);
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), d.ordinal);
    SLUICE_CHECK_IN(DeviceError, "device",
                    !n.empty() && ec == std::errc() && end == n.data() + n.size() && d.ordinal >= 0)
        << "bad ordinal in device \"" << name << "\": expected KIND or KIND:n with n >= 0";
  }
  return d;
}

std::string canonical_device(std::string_view name) {
  // Every tensor op passes its device through here, nearly always already canonical ("CPU"): skip parsing.
  for (std::string_view k : known_device_kinds())
    if (name == k) return std::string(name);
  return parse_device(name).str();
}

std::string default_device() {
  // $SLUICE_DEVICE is read on every call (a getenv, cheap, and tests change it); the registry's choice,
  // which cannot change while the process runs, is made once.
  const char* env = std::getenv("SLUICE_DEVICE");
  if (env && *env) return canonical_device(env);
  // Real accelerators first, in the registry's order, then the CPU device; a GPU API emulated on the CPU
  // (lavapipe, PoCL) only after it: it computes on the same cores, many times slower. NULL computes
  // nothing and is never the default. Telling an emulation apart opens the device, once per process.
  static const std::string best = [] {
    std::string emulated;
    for (const DeviceInfo& d : list_devices()) {
      if (!d.available || d.name == "NULL") continue;
      if (d.name == "CPU") return d.name;
      try {
        if (!open_device(d.name).properties().software) return d.name;
        if (emulated.empty()) emulated = d.name;
      } catch (const std::exception&) {}  // present but failing to open: not a default
    }
    return emulated.empty() ? std::string("CPU") : emulated;
  }();
  return best;
}

}  // namespace sluice
