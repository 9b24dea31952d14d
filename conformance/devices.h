#pragma once
// The conformance suite's devices: one row per backend, saying how to open one of its devices (apart from
// the runtime's registry, so a check may open a private or a second one), how to make a fresh compiler
// over a given cache folder, and which language the suite's kernels are written in for it. What a device
// does not support is not here: it is a row of the one expectations table (runtime/expectations.cpp).
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "conformance/kernels.h"
#include "hcq/device.h"

namespace sluice::conformance {

struct DeviceEntry {
  std::string kind;  // "CPU", as the registry names the device (runtime/device_name.h)
  // Opens ordinal n. Where a machine has one device of the kind, n > 0 opens device 0 again (its own
  // context, queues and timeline): checks that want a second device use it. Throws when absent.
  std::function<std::unique_ptr<hcq::Device>(int ordinal)> open;
  // A fresh compiler of the device's kind over `cache_dir` (the disk-cache checks); null where the compiler
  // takes no source the checks can write (SPIR-V).
  std::function<std::unique_ptr<hcq::Compiler>(const std::filesystem::path& cache_dir)> make_compiler;
  Language language;
};

// Every backend's row, in the order the suite runs them.
const std::vector<const DeviceEntry*>& device_entries();
// The row of a device's kind ("VULKAN:1" -> VULKAN). Throws sluice::DeviceError for an unknown kind.
const DeviceEntry& device_entry(const std::string& device);

}  // namespace sluice::conformance
