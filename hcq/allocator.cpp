#include "hcq/allocator.h"

#include <algorithm>

#include "hcq/counter.h"
#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::hcq {

Buffer Allocator::alloc(uint64_t size) {
  SLUICE_CHECK_AS(::sluice::hcq::Error, size > 0) << dev_.name() << ": cannot allocate 0 bytes";
  {
    std::lock_guard lk(mu_);
    auto it = by_size_.find(size);
    if (it != by_size_.end()) {
      uint64_t done = dev_.timeline().value();
      auto& entries = it->second;
      auto e = std::find_if(entries.begin(), entries.end(), [&](Entry x) { return x->last_use <= done; });
      if (e != entries.end()) {
        Buffer b = **e;
        lru_.erase(*e);
        entries.erase(e);
        if (entries.empty()) by_size_.erase(it);
        cached_bytes_ -= size;
        in_use_ += size;
        return b;
      }
    }
  }
  uint64_t addr = 0;
  try {
    addr = raw_alloc(size);
  } catch (const Error&) {
    trim();  // out of memory: what the cache holds may be enough
    addr = raw_alloc(size);
  }
  in_use_ += size;
  return Buffer{addr, size, 0};
}

void Allocator::free(const Buffer& b) {
  if (b.size == 0) return;
  in_use_ -= b.size;
  std::vector<Buffer> out;
  {
    std::lock_guard lk(mu_);
    by_size_[b.size].push_back(lru_.insert(lru_.end(), b));
    cached_bytes_ += b.size;
    if (cached_bytes_ > limit_) evict_locked(limit_, out);
  }
  release(out);
}

void Allocator::evict_locked(uint64_t limit, std::vector<Buffer>& out) {
  uint64_t done = dev_.timeline().value();
  for (auto e = lru_.begin(); e != lru_.end() && cached_bytes_ > limit;) {
    if (e->last_use > done) {  // the device may still use it: keep it for a later pass
      ++e;
      continue;
    }
    auto& entries = by_size_[e->size];
    entries.erase(std::find(entries.begin(), entries.end(), e));
    if (entries.empty()) by_size_.erase(e->size);
    cached_bytes_ -= e->size;
    out.push_back(*e);
    e = lru_.erase(e);
  }
}

void Allocator::release(const std::vector<Buffer>& bufs) {
  for (const Buffer& b : bufs) raw_free(b.addr, b.size);
}

void Allocator::trim() {
  std::vector<Buffer> out;
  {
    std::lock_guard lk(mu_);
    evict_locked(0, out);
  }
  release(out);
}

void Allocator::release_cache() {
  std::lock_guard lk(mu_);
  for (const Buffer& b : lru_) raw_free(b.addr, b.size);
  lru_.clear();
  by_size_.clear();
  cached_bytes_ = 0;
}

uint64_t Allocator::in_use_bytes() const { return in_use_.load(); }

uint64_t Allocator::cached_bytes() const {
  std::lock_guard lk(mu_);
  return cached_bytes_;
}

uint64_t Allocator::cache_limit() const {
  std::lock_guard lk(mu_);
  return limit_;
}

void Allocator::set_cache_limit(uint64_t bytes) {
  std::vector<Buffer> out;
  {
    std::lock_guard lk(mu_);
    limit_ = bytes;
    evict_locked(limit_, out);
  }
  release(out);
}

void Allocator::copyin(const Buffer& dst, const void* src, uint64_t size, uint64_t offset) {
  SLUICE_CHECK_AS(::sluice::hcq::Error, offset <= dst.size && size <= dst.size - offset)
      << dev_.name() << ": " << size << " bytes at offset " << offset << " do not fit a buffer of "
      << dst.size;
  dev_.timeline().wait(dst.last_use);
  const bool timed = dev_.profiling();
  const uint64_t t0 = now_ns();
  raw_copyin(dst.addr + offset, src, size);
  if (timed)
    dev_.add_profile({dev_.name(), "transfer", "copy", t0, now_ns(), size, 0, 0, Transfer::HostToDevice});
}

void Allocator::copyout(void* dst, const Buffer& src, uint64_t size, uint64_t offset) {
  SLUICE_CHECK_AS(::sluice::hcq::Error, offset <= src.size && size <= src.size - offset)
      << dev_.name() << ": " << size << " bytes at offset " << offset << " do not fit a buffer of "
      << src.size;
  dev_.timeline().wait(src.last_use);
  const bool timed = dev_.profiling();
  const uint64_t t0 = now_ns();
  raw_copyout(dst, src.addr + offset, size);
  if (timed)
    dev_.add_profile({dev_.name(), "transfer", "copy", t0, now_ns(), size, 0, 0, Transfer::DeviceToHost});
}

}  // namespace sluice::hcq
