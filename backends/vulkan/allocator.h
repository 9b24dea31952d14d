#pragma once
// The Vulkan allocator: one VkBuffer with its own VkDeviceMemory per allocation, in device-local memory.
//
// Addresses: Buffer::addr is a virtual address this allocator hands out from a range no host pointer can
// take (the top 1/16 of the 64-bit space), so `addr + offset` arithmetic works as on the CPU and resolve()
// maps any address inside a live allocation back to its VkBuffer and offset.
//
// Host access: memory that is host-visible and coherent (lavapipe, UMA and resizable-BAR GPUs) is mapped
// once and copied with memcpy; otherwise, or with SLUICE_VULKAN_STAGING=1, copyin/copyout go through a
// host-visible staging buffer and vkCmdCopyBuffer on the compute VkQueue, waited for with a fence.
//
// Threading: thread-safe (hcq::Allocator; the address map has its own lock).
#include <memory>

#include "backends/vulkan/context.h"
#include "hcq/allocator.h"

namespace sluice::vulkan {

struct BufferRef {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;  // of addr inside buffer
  uint64_t size = 0;    // bytes from offset to the end of the buffer
};

class Allocator : public hcq::Allocator {
 public:
  using hcq::Allocator::Allocator;
  // Throws hcq::Error `[func] ...` for an address no live buffer holds.
  virtual BufferRef resolve(uint64_t addr, const char* func) = 0;
};

std::unique_ptr<Allocator> make_allocator(hcq::Device& dev, Context& ctx);

}  // namespace sluice::vulkan
