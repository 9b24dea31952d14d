#pragma once
// The device registry (DESIGN.md §5): which devices this build can open, and the one process-wide
// hcq::Device and Realizer per device name that tensors realize on.
//
// Ownership: a device is opened on first use and kept for the rest of the process; it is never destroyed
// (held by a leaked pointer), so static destruction order cannot close a device under a running queue.
// References returned here stay valid until
// exit. Threading: every call is safe from any thread (one registry mutex; opening a device holds it).
// Failures: DeviceError naming the device and listing the available ones.
#include <chrono>
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
// (opening it). It waits as long as the work advances (a slow kernel is waited for); a device's failure,
// a kernel it declares hung, or nothing advancing for hcq::kDefaultTimeout throws its hcq error
// (hcq/device.h, "Hangs and faults").
void synchronize();
void synchronize(const std::string& name);
// How long a kernel may go without progress before a wait declares it hung (its queue is reset and the
// wait fails), on every device opened so far and every one opened later; it overrides
// $SLUICE_HANG_TIMEOUT. Zero or less: never declare a kernel hung. Devices that cannot see a kernel's
// progress (Vulkan, CUDA) count from its start.
void set_hang_timeout(std::chrono::nanoseconds limit);

}  // namespace sluice
