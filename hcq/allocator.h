#pragma once
// hcq::Allocator — device memory with an LRU cache of freed buffers (DESIGN.md §4).
//
// Semantics
// - alloc(size) returns a buffer of exactly `size` bytes. It reuses a cached buffer of the same size if
//   the device is done with it (its last_use <= the device timeline's value), the one freed longest ago
//   first; otherwise it asks the backend for new memory. If the backend is out of memory, the cache is
//   trimmed and the request tried once more before the error propagates.
// - free(b) does not release memory: b goes into the cache, remembering b.last_use. When the cache holds
//   more than cache_limit() bytes, the buffers freed longest ago that the device is done with are
//   released. So memory is never handed out, or released, while a submitted command may still use it.
// - Buffer::last_use is the caller's promise: set it to the timeline value returned by the submit of the
//   last command that touches the buffer.
// - copyin/copyout move bytes between host memory and a buffer synchronously. They first wait (without a
//   timeout: as long as the work advances, device.h) until the device timeline reaches the buffer's
//   last_use, so they never race the device.
//   While the device profiles, each adds a ProfileRecord (queue "transfer", its direction) timed on the
//   host around the move itself, not the wait.
//
// Ownership and threading: the caller owns a Buffer from alloc until free; a Buffer is a plain value
// (copies name the same memory). Every member is thread-safe. The allocator belongs to its Device; buffers
// still cached when the device is destroyed are released then, buffers never freed are leaked.
#include <atomic>
#include <cstdint>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace sluice::hcq {

class Device;

struct Buffer {
  uint64_t addr = 0;      // device address; on the CPU a host pointer
  uint64_t size = 0;      // bytes
  uint64_t last_use = 0;  // timeline value after which the device no longer touches this memory
};

class Allocator {
 public:
  static constexpr uint64_t kDefaultCacheLimit = uint64_t(1) << 30;

  explicit Allocator(Device& dev) : dev_(dev) {}
  virtual ~Allocator() = default;  // backends release the cache in theirs (release_cache)
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  Buffer alloc(uint64_t size);  // throws Error for size 0 or when out of memory
  void free(const Buffer& b);

  // Throw Error if [offset, offset+size) is not inside the buffer; TimeoutError/FaultError from the wait.
  void copyin(const Buffer& dst, const void* src, uint64_t size, uint64_t offset = 0);
  void copyout(void* dst, const Buffer& src, uint64_t size, uint64_t offset = 0);

  void trim();                    // releases every cached buffer the device is done with
  uint64_t in_use_bytes() const;  // handed out by alloc and not freed yet (SLUICE_DEBUG's memory in use)
  uint64_t cached_bytes() const;
  uint64_t cache_limit() const;
  void set_cache_limit(uint64_t bytes);  // trims down to the new limit

 protected:
  // The backend's memory: raw_alloc throws Error when out of memory.
  virtual uint64_t raw_alloc(uint64_t size) = 0;
  virtual void raw_free(uint64_t addr, uint64_t size) = 0;
  virtual void raw_copyin(uint64_t dst, const void* src, uint64_t size) = 0;
  virtual void raw_copyout(void* dst, uint64_t src, uint64_t size) = 0;
  // Releases every cached buffer without looking at the timeline: for a backend's destructor, once its
  // queues are stopped (the base destructor cannot: raw_free is gone by then).
  void release_cache();

 private:
  using Entry = std::list<Buffer>::iterator;
  void evict_locked(uint64_t limit, std::vector<Buffer>& out);  // picks buffers to release, under mu_
  void release(const std::vector<Buffer>& bufs);

  Device& dev_;
  mutable std::mutex mu_;
  std::list<Buffer> lru_;                                     // cached, freed longest ago first
  std::unordered_map<uint64_t, std::vector<Entry>> by_size_;  // the same entries, per size, in lru_ order
  uint64_t cached_bytes_ = 0, limit_ = kDefaultCacheLimit;
  std::atomic<uint64_t> in_use_{0};
};

}  // namespace sluice::hcq
