#pragma once
// Device names (DESIGN.md §5): a kind (CPU, NULL, VULKAN, CL, CUDA, HIP) and an optional ordinal, "CUDA:1".
// Names are case-insensitive on input and canonical on output: upper case, and ":0" dropped, so "cpu:0",
// "CPU:0" and "CPU" all name the device "CPU". Pure string handling: any thread.
#include <span>
#include <string>
#include <string_view>

namespace sluice {

struct DeviceName {
  std::string kind;         // one of known_device_kinds()
  int ordinal = 0;          // >= 0
  std::string str() const;  // the canonical form: "CPU", "CUDA:1"
};

// The kinds sluice knows, in the order of DESIGN.md §5's preference: the registry's rows
// (runtime/device.cpp).
std::span<const std::string_view> known_device_kinds();
// Parses a name; throws DeviceError for an unknown kind or a malformed ordinal, listing the known kinds.
DeviceName parse_device(std::string_view name);
// parse_device(name).str(): the one spelling every Tensor carries.
std::string canonical_device(std::string_view name);
// The device tensors are created on when none is named: $SLUICE_DEVICE if set, else the first available
// device of the registry (runtime/device.h) in DESIGN.md §5's order CUDA, HIP, VULKAN, CL, CPU, with a
// GPU API emulated on the CPU (hcq::Properties::software) ranked after CPU. The choice is made once per
// process (it opens the GPU devices it ranks); $SLUICE_DEVICE is read on every call.
std::string default_device();

}  // namespace sluice
