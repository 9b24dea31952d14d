#pragma once
// The device registry (DESIGN.md §5): which devices this build can open, and the one process-wide
// hcq::Device and Realizer per device name that tensors realize on.
//
// Ownership: a device is opened on first use and kept for the rest of the process; it is never destroyed
// (held by a leaked pointer), so static destruction order cannot close a device under a running queue.
// References returned here stay valid until
// exit. Threading: every call is safe from any thread (one registry mutex; opening a device holds it).
// Failures: DeviceError naming the device and listing the available ones.
#include <string>
#include <vector>

#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice {

class Realizer;

struct DeviceInfo {
  std::string name;    // canonical kind, ordinal 0: "CUDA", "CPU"
  bool available;      // a backend is compiled in (it may still fail to open: no driver, no GPU)
  std::string reason;  // why not, when !available
};

// Every known kind, in DESIGN.md §5's order of preference (CUDA, HIP, VULKAN, CL, CPU, NULL).
std::vector<DeviceInfo> list_devices();
// The device named `name` (any spelling parse_device accepts), opened on first use. Throws DeviceError
// for an unknown name or an absent backend, and whatever the backend throws when opening fails.
hcq::Device& open_device(const std::string& name);
// How kernels for that device are built and rendered (its backend's target); opens the device.
render::Target device_target(const std::string& name);
// The Realizer of that device, created on first use (opens the device).
Realizer& realizer(const std::string& name);
// The devices opened so far (for the profiler and the benchmarks).
std::vector<hcq::Device*> open_devices();
// Waits until the work submitted so far has finished: on every device opened so far, or on the one named
// (opening it). A device's failure or a timeout (hcq::kDefaultTimeout) throws its hcq error.
void synchronize();
void synchronize(const std::string& name);

}  // namespace sluice
