#include "backends/vulkan/allocator.h"

#include <cstring>
#include <map>

#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::vulkan {
namespace {

constexpr uint64_t kVaBase = 0xF000'0000'0000'0000ull;
constexpr uint64_t kVaAlign = 256;               // descriptor offsets must be aligned (<= 256 everywhere)
constexpr uint64_t kStagingBytes = 16ull << 20;  // staged copies go in chunks of this

struct Alloc {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint64_t size = 0;
  uint8_t* mapped = nullptr;  // null: staged
};

class VkAllocator final : public Allocator {
 public:
  VkAllocator(hcq::Device& dev, Context& ctx) : Allocator(dev), dev_(dev), ctx_(ctx) {
    const auto& mp = ctx_.mem;
    // Device-local first; the host-visible flags only decide whether it can be mapped.
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i) {
      auto f = mp.memoryTypes[i].propertyFlags;
      if (!(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
      bool mappable = (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
      if (device_type_ == UINT32_MAX || (mappable && !device_mappable_)) {
        device_type_ = i;
        device_mappable_ = mappable;
      }
    }
    for (uint32_t i = 0; i < mp.memoryTypeCount && host_type_ == UINT32_MAX; ++i) {
      auto f = mp.memoryTypes[i].propertyFlags;
      if ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
        host_type_ = i;
    }
    if (device_type_ == UINT32_MAX) device_type_ = host_type_, device_mappable_ = true;
    if (ctx_.force_staging) device_mappable_ = false;
  }

  ~VkAllocator() override {
    release_cache();
    std::lock_guard lk(mu_);
    for (auto& [va, a] : live_) destroy(a);
    if (staging_.buffer) destroy(staging_);
    if (pool_) ctx_.vk.vkDestroyCommandPool(ctx_.dev, pool_, nullptr);
    if (fence_) ctx_.vk.vkDestroyFence(ctx_.dev, fence_, nullptr);
  }

  BufferRef resolve(uint64_t addr, const char* func) override {
    std::lock_guard lk(mu_);
    if (addr >= kVaBase) {
      auto it = live_.upper_bound(addr);
      if (it != live_.begin()) {
        --it;
        if (addr < it->first + it->second.size)
          return {it->second.buffer, addr - it->first, it->second.size - (addr - it->first)};
      }
    }
    SLUICE_FAIL(hcq::Error, func) << dev_.name() << ": address 0x" << std::hex << addr
                                  << " is inside no live buffer of this device";
  }

 protected:
  uint64_t raw_alloc(uint64_t size) override {
    Alloc a = create(size, device_type_, device_mappable_, "alloc");
    std::lock_guard lk(mu_);
    uint64_t va = next_va_;
    next_va_ += (size + kVaAlign - 1) / kVaAlign * kVaAlign + kVaAlign;  // a gap: addr+size is in no buffer
    live_[va] = a;
    return va;
  }
  void raw_free(uint64_t addr, uint64_t) override {
    Alloc a;
    {
      std::lock_guard lk(mu_);
      auto it = live_.find(addr);
      if (it == live_.end()) return;
      a = it->second;
      live_.erase(it);
    }
    destroy(a);
  }
  void raw_copyin(uint64_t dst, const void* src, uint64_t size) override {
    BufferRef r = resolve(dst, "copyin");
    if (uint8_t* p = mapped(dst)) return (void)std::memcpy(p, src, size);
    staged(r, const_cast<void*>(src), size, true);
  }
  void raw_copyout(void* dst, uint64_t src, uint64_t size) override {
    BufferRef r = resolve(src, "copyout");
    if (uint8_t* p = mapped(src)) return (void)std::memcpy(dst, p, size);
    staged(r, dst, size, false);
  }

 private:
  uint8_t* mapped(uint64_t addr) {
    std::lock_guard lk(mu_);
    auto it = --live_.upper_bound(addr);
    return it->second.mapped ? it->second.mapped + (addr - it->first) : nullptr;
  }

  Alloc create(uint64_t size, uint32_t type, bool map, const char* func, const void* import = nullptr) {
    const auto& vk = ctx_.vk;
    Alloc a;
    a.size = size;
    auto bi = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
    bi.size = (size + 15) / 16 * 16;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    auto ext =
        vk_struct<VkExternalMemoryBufferCreateInfo>(VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO);
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    if (import) bi.pNext = &ext, bi.size = size;
    check(vk.vkCreateBuffer(ctx_.dev, &bi, nullptr, &a.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vk.vkGetBufferMemoryRequirements(ctx_.dev, a.buffer, &req);
    auto ai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    auto imp =
        vk_struct<VkImportMemoryHostPointerInfoEXT>(VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT);
    if (import) {
      imp.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
      imp.pHostPointer = const_cast<void*>(import);
      ai.pNext = &imp;
      ai.allocationSize = size;
    }
    VkResult r = vk.vkAllocateMemory(ctx_.dev, &ai, nullptr, &a.memory);
    if (r != VK_SUCCESS) {
      vk.vkDestroyBuffer(ctx_.dev, a.buffer, nullptr);
      SLUICE_FAIL(hcq::Error, func) << dev_.name() << ": vkAllocateMemory of " << size
                                    << " bytes failed: " << result_name(r);
    }
    check(vk.vkBindBufferMemory(ctx_.dev, a.buffer, a.memory, 0), "vkBindBufferMemory");
    if (map && !import) {
      void* p = nullptr;
      check(vk.vkMapMemory(ctx_.dev, a.memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
      a.mapped = static_cast<uint8_t*>(p);
    }
    return a;
  }

  void destroy(const Alloc& a) {
    if (a.mapped) ctx_.vk.vkUnmapMemory(ctx_.dev, a.memory);
    ctx_.vk.vkDestroyBuffer(ctx_.dev, a.buffer, nullptr);
    ctx_.vk.vkFreeMemory(ctx_.dev, a.memory, nullptr);
  }

  // Synchronous copy through the staging buffer. The device is done with the buffer (hcq::Allocator waited
  // for its last_use), so no hcq queue orders against it.
  void staged(const BufferRef& r, void* host, uint64_t size, bool in) {
    std::lock_guard lk(staging_mu_);
    const auto& vk = ctx_.vk;
    if (!staging_.buffer) {
      staging_ = create(kStagingBytes, host_type_, true, "copyin");
      auto pi = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
      pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
      pi.queueFamilyIndex = ctx_.compute_family;
      check(vk.vkCreateCommandPool(ctx_.dev, &pi, nullptr, &pool_), "vkCreateCommandPool");
      auto ai = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
      ai.commandPool = pool_;
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = 1;
      check(vk.vkAllocateCommandBuffers(ctx_.dev, &ai, &cmd_), "vkAllocateCommandBuffers");
      auto fi = vk_struct<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
      check(vk.vkCreateFence(ctx_.dev, &fi, nullptr, &fence_), "vkCreateFence");
    }
    auto* h = static_cast<uint8_t*>(host);
    for (uint64_t done = 0; done < size;) {
      uint64_t n = std::min(kStagingBytes, size - done);
      if (in) std::memcpy(staging_.mapped, h + done, n);
      check(vk.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
      auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      check(vk.vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
      VkBufferCopy c{in ? 0 : r.offset + done, in ? r.offset + done : 0, n};
      vk.vkCmdCopyBuffer(cmd_, in ? staging_.buffer : r.buffer, in ? r.buffer : staging_.buffer, 1, &c);
      auto mb = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
      mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vk.vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0,
                              nullptr, 0, nullptr);
      check(vk.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
      auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cmd_;
      check(vk.vkResetFences(ctx_.dev, 1, &fence_), "vkResetFences");
      ctx_.submit(ctx_.compute_queue, si, fence_);
      VkResult w =
          vk.vkWaitForFences(ctx_.dev, 1, &fence_, VK_TRUE, uint64_t(hcq::kDefaultTimeout.count()) * 1000000);
      if (w == VK_TIMEOUT)
        SLUICE_FAIL(hcq::TimeoutError, in ? "copyin" : "copyout")
            << dev_.name() << ": the staging copy did not finish within " << hcq::kDefaultTimeout.count()
            << " ms";
      check(w, "vkWaitForFences");
      if (!in) std::memcpy(h + done, staging_.mapped, n);
      done += n;
    }
  }

  hcq::Device& dev_;
  Context& ctx_;
  uint32_t device_type_ = UINT32_MAX, host_type_ = UINT32_MAX;
  bool device_mappable_ = false;
  std::mutex mu_;
  uint64_t next_va_ = kVaBase;
  std::map<uint64_t, Alloc> live_;  // by virtual address
  std::mutex staging_mu_;
  Alloc staging_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

}  // namespace

std::unique_ptr<Allocator> make_allocator(hcq::Device& dev, Context& ctx) {
  return std::make_unique<VkAllocator>(dev, ctx);
}

}  // namespace sluice::vulkan
