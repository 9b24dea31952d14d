#pragma once
// The Vulkan device (DESIGN.md §4): compute kernels as SPIR-V (renderers/spirv.h) on any Vulkan 1.2
// driver with timeline semaphores; lavapipe on machines without a GPU.
//
// - `VULKAN:n` opens the n-th physical device that has a compute queue and timeline semaphores, counted
//   modulo their number: on a one-GPU machine every ordinal is a separate logical device on that GPU
//   (its own queues, timeline and allocator), as every CPU ordinal is a separate device on the host.
// - Queues: compute:0 and copy:0 (queue.h); the copy queue runs on a transfer-only queue family where the
//   device has one, else on the compute VkQueue with its own ordering.
// - A kernel that never returns: once it has run past hang_timeout() and a wait times out, its queue is
//   abandoned and replaced (its pending signals fail, the timeline is replaced). The abandoned GPU work is
//   not stopped: it still holds the VkQueue until it ends (Vulkan has no way to cancel a dispatch; a real
//   GPU's watchdog ends it with VK_ERROR_DEVICE_LOST, which fails the queue's signals).
// - Environment: SLUICE_VULKAN_VALIDATION=1 (driver.h), SLUICE_VULKAN_STAGING=1 (allocator.h),
//   SLUICE_VULKAN_NO_PUSH_DESCRIPTORS=1 (descriptor sets from pools even where pushing is possible), and,
//   for tests only, SLUICE_VULKAN_TEST_DEVICE_LOST=n: a device opened while it is set behaves as lost
//   after n successful vkQueueSubmit calls (context.h), so tests can check that a lost device fails its
//   signals with "[vkQueueSubmit] failed: VK_ERROR_DEVICE_LOST" and the process carries on.
#include <memory>
#include <string>

#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice::vulkan {

// "" when a device can be opened, else why not: "libvulkan.so.1 not found: ...", "vkCreateInstance
// failed: ...", "no Vulkan device with a compute queue and timeline semaphores", or "built without Vulkan
// headers".
std::string absent_reason();
// Named "VULKAN" for ordinal 0, "VULKAN:<n>" otherwise. Throws DeviceError with absent_reason() when absent.
std::unique_ptr<hcq::Device> open_device(int ordinal = 0);
render::Target target(const hcq::Device& dev);

}  // namespace sluice::vulkan
