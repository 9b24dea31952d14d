#pragma once
// The Vulkan loader, opened at run time (DESIGN.md §4): libvulkan.so.1 is dlopen'ed once per process and
// its entry points are fetched into dispatch tables, so one build runs with or without a Vulkan driver.
//
// - Loader / instance level: one process-wide VkInstance (Api 1.2+), created on first use, kept for the
//   process. With SLUICE_VULKAN_VALIDATION=1 the Khronos validation layer is enabled and a
//   VK_EXT_debug_utils messenger counts its errors (validation_errors()); each is printed to stderr, and a
//   process that saw any exits with status 3 at exit, so a test run with the layer fails on any error.
// - Device level: a DeviceTable per VkDevice, fetched with vkGetDeviceProcAddr (no loader trampoline).
// - Failures: check(result, "vkCall") throws DeviceError "[vkCall] failed: VK_ERROR_..." naming the call
//   and the VkResult.
//
// Threading: instance() and the tables are safe to use from any thread once built.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

namespace sluice::vulkan {

#define SLUICE_VK_INSTANCE_FNS(X)             \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)                      \
  X(vkCreateDebugUtilsMessengerEXT)           \
  X(vkDestroyDebugUtilsMessengerEXT)          \
  X(vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)

#define SLUICE_VK_DEVICE_FNS(X)          \
  X(vkDestroyDevice)                     \
  X(vkGetDeviceQueue)                    \
  X(vkDeviceWaitIdle)                    \
  X(vkQueueSubmit)                       \
  X(vkQueueWaitIdle)                     \
  X(vkAllocateMemory)                    \
  X(vkFreeMemory)                        \
  X(vkMapMemory)                         \
  X(vkUnmapMemory)                       \
  X(vkCreateBuffer)                      \
  X(vkDestroyBuffer)                     \
  X(vkGetBufferMemoryRequirements)       \
  X(vkBindBufferMemory)                  \
  X(vkCreateShaderModule)                \
  X(vkDestroyShaderModule)               \
  X(vkCreatePipelineCache)               \
  X(vkDestroyPipelineCache)              \
  X(vkGetPipelineCacheData)              \
  X(vkCreateComputePipelines)            \
  X(vkDestroyPipeline)                   \
  X(vkCreatePipelineLayout)              \
  X(vkDestroyPipelineLayout)             \
  X(vkCreateDescriptorSetLayout)         \
  X(vkDestroyDescriptorSetLayout)        \
  X(vkCreateDescriptorPool)              \
  X(vkDestroyDescriptorPool)             \
  X(vkResetDescriptorPool)               \
  X(vkAllocateDescriptorSets)            \
  X(vkUpdateDescriptorSets)              \
  X(vkCreateCommandPool)                 \
  X(vkDestroyCommandPool)                \
  X(vkAllocateCommandBuffers)            \
  X(vkResetCommandBuffer)                \
  X(vkBeginCommandBuffer)                \
  X(vkEndCommandBuffer)                  \
  X(vkCmdBindPipeline)                   \
  X(vkCmdBindDescriptorSets)             \
  X(vkCmdPushConstants)                  \
  X(vkCmdDispatch)                       \
  X(vkCmdCopyBuffer)                     \
  X(vkCmdPipelineBarrier)                \
  X(vkCmdWriteTimestamp)                 \
  X(vkCmdResetQueryPool)                 \
  X(vkCreateQueryPool)                   \
  X(vkDestroyQueryPool)                  \
  X(vkGetQueryPoolResults)               \
  X(vkCreateSemaphore)                   \
  X(vkDestroySemaphore)                  \
  X(vkGetSemaphoreCounterValue)          \
  X(vkWaitSemaphores)                    \
  X(vkSignalSemaphore)                   \
  X(vkCreateFence)                       \
  X(vkDestroyFence)                      \
  X(vkWaitForFences)                     \
  X(vkResetFences)                       \
  X(vkCmdPushDescriptorSetKHR)           \
  X(vkGetMemoryHostPointerPropertiesEXT) \
  X(vkGetCalibratedTimestampsEXT)

#define SLUICE_VK_MEMBER(name) PFN_##name name = nullptr;

struct InstanceTable {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  SLUICE_VK_INSTANCE_FNS(SLUICE_VK_MEMBER)
};

struct DeviceTable {
  SLUICE_VK_DEVICE_FNS(SLUICE_VK_MEMBER)
};

// The process-wide instance, or null with the reason in *why ("libvulkan.so.1 not found: ...",
// "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER").
struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  InstanceTable vk;
  uint32_t api_version = 0;
  bool validation = false;  // the validation layer is on
};
const Instance* instance(std::string* why);

DeviceTable load_device_table(const Instance& inst, VkDevice dev);

// A zero-initialised Vulkan struct of the given type (no -Wmissing-field-initializers noise).
template <class T>
T vk_struct(VkStructureType type, void* next = nullptr) {
  T s{};
  s.sType = type;
  s.pNext = next;
  return s;
}

const char* result_name(VkResult r);  // "VK_ERROR_DEVICE_LOST"
// Throws DeviceError "[call] failed: <result name>" unless r is VK_SUCCESS.
void check(VkResult r, const char* call);

uint64_t validation_errors();  // errors the validation layer reported so far in this process

}  // namespace sluice::vulkan
