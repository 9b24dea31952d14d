#pragma once
// The devices the op suites run over, shared by their files (ops_test.cpp keeps its own `absent`, which also
// turns on buffer guards).
#include <exception>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace sluice::testing_devices {

// Every device kind of the registry, present or not.
inline std::vector<std::string> device_names() {
  std::vector<std::string> out;
  for (const DeviceInfo& d : list_devices()) out.push_back(d.name);
  return out;
}
// The same without NULL, which computes nothing.
inline std::vector<std::string> devices_with_values() {
  std::vector<std::string> out;
  for (const std::string& d : device_names())
    if (d != "NULL") out.push_back(d);
  return out;
}
// Why `device` cannot run here ("" when it can): absent from the registry, or failing to open.
inline std::string absent(const std::string& device) {
  for (const DeviceInfo& d : list_devices())
    if (d.name == device && !d.available) return d.reason;
  try {
    open_device(device);
  } catch (const std::exception& e) { return std::string("cannot open: ") + e.what(); }
  return "";
}

}  // namespace sluice::testing_devices
