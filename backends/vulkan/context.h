#pragma once
// vulkan::Context — the logical device every part of the backend shares: dispatch table, queues, memory
// types and the features chosen at open (device.cpp builds it; allocator, compiler, program and queue
// use it).
//
// Queues: one VkQueue of a compute family; where the device has a family with transfer but no compute
// (a DMA engine), a VkQueue of it backs the copy queue, else the copy queue shares the compute VkQueue.
// A VkQueue is externally synchronized: every vkQueueSubmit goes through submit() under that queue's
// mutex. Ordering inside an hcq queue never relies on which VkQueue it shares (queue.h), so two hcq
// queues can share one VkQueue.
//
// Lost device, test only: with SLUICE_VULKAN_TEST_DEVICE_LOST=n set when the device opens (device.h), the
// device behaves as lost after n successful submits: that submit and every later one, and every semaphore
// wait or read through wait_semaphores()/semaphore_value(), answer VK_ERROR_DEVICE_LOST, as a driver does
// once the device is gone. The backend's queues make their Vulkan calls through these wrappers.
//
// Threading: the members are set at open and read-only after (lose_after_ and lost_ are atomics);
// submit() and the wrappers are thread-safe.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "backends/vulkan/driver.h"

namespace sluice::vulkan {

struct Context {
  const Instance* inst = nullptr;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice dev = VK_NULL_HANDLE;
  DeviceTable vk;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem{};

  uint32_t compute_family = 0, copy_family = 0;
  VkQueue compute_queue = VK_NULL_HANDLE, copy_queue = VK_NULL_HANDLE;  // may be the same queue
  std::mutex compute_mu, copy_mu_storage;
  std::mutex& queue_mu(VkQueue q) { return q == compute_queue ? compute_mu : copy_mu_storage; }

  bool push_descriptors = false;  // VK_KHR_push_descriptor
  uint32_t max_push_descriptors = 0;
  bool calibrated = false;     // VK_EXT_calibrated_timestamps with a CLOCK_MONOTONIC domain
  bool timestamps = false;     // the compute family writes timestamps
  bool force_staging = false;  // SLUICE_VULKAN_STAGING=1: never map buffer memory, copy through staging
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;  // loaded from and saved to the compiler's cache dir
  bool float16 = false, int64 = false, float64 = false, int8 = false, int16 = false;
  // descriptorBindingStorageBufferUpdateAfterBind: a recorded command buffer's descriptor sets can be
  // rewritten before it is submitted again (graph.h).
  bool update_after_bind = false;

  // Failing calls name the call and the VkResult (driver.h).
  void submit(VkQueue q, const VkSubmitInfo& info, VkFence fence) {
    std::lock_guard lk(queue_mu(q));
    if (lose_after_.load(std::memory_order_relaxed) >= 0 && lose_after_.fetch_sub(1) <= 0) lost_ = true;
    check(lost_ ? VK_ERROR_DEVICE_LOST : vk.vkQueueSubmit(q, 1, &info, fence), "vkQueueSubmit");
  }
  VkResult wait_semaphores(const VkSemaphoreWaitInfo& info, uint64_t timeout_ns) const {
    return lost_ ? VK_ERROR_DEVICE_LOST : vk.vkWaitSemaphores(dev, &info, timeout_ns);
  }
  VkResult semaphore_value(VkSemaphore s, uint64_t* value) const {
    return lost_ ? VK_ERROR_DEVICE_LOST : vk.vkGetSemaphoreCounterValue(dev, s, value);
  }
  void lose_after_submits(int64_t n) { lose_after_ = n; }  // test only (above)

 private:
  std::atomic<int64_t> lose_after_{-1};  // submits left before the simulated loss; -1: never
  std::atomic<bool> lost_{false};
};

}  // namespace sluice::vulkan
