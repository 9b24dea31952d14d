// The Vulkan backend of a build made without the Vulkan headers: always absent, with the reason.
#include "backends/vulkan/device.h"
#include "base/error.h"

namespace sluice::vulkan {

std::string absent_reason() { return "built without Vulkan headers"; }

std::unique_ptr<hcq::Device> open_device(int) {
  SLUICE_FAIL(DeviceError, "open_device") << "VULKAN is absent: built without Vulkan headers";
}

render::Target target(const hcq::Device&) {
  SLUICE_FAIL(DeviceError, "target") << "VULKAN is absent: built without Vulkan headers";
}

}  // namespace sluice::vulkan
