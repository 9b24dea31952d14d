#include "backends/cuda/allocator.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "hcq/device.h"

namespace sluice::cuda {
namespace {

// Large enough that a copy is bandwidth-bound, small enough to keep in pinned memory for good.
constexpr uint64_t kStagingBytes = uint64_t(8) << 20;

class Allocator final : public hcq::Allocator {
 public:
  Allocator(hcq::Device& dev, const Driver& drv, CUcontext ctx)
      : hcq::Allocator(dev), dev_(dev), drv_(drv), ctx_(ctx) {
    make_current(drv_, ctx_);
    SLUICE_DRV("make_allocator", dev_.name(), drv_, stream_create, &stream_, kStreamNonBlocking);
    SLUICE_DRV("make_allocator", dev_.name(), drv_, mem_host_alloc, &staging_, kStagingBytes,
               kHostAllocPortable);
  }
  ~Allocator() override {
    release_cache();
    make_current(drv_, ctx_);
    drv_.mem_free_host(staging_);
    drv_.stream_destroy(stream_);
  }

 protected:
  uint64_t raw_alloc(uint64_t size) override {
    make_current(drv_, ctx_);
    CUdeviceptr p = 0;
    SLUICE_DRV("alloc", dev_.name(), drv_, mem_alloc, &p, size);
    return p;
  }
  void raw_free(uint64_t addr, uint64_t) override {
    make_current(drv_, ctx_);
    drv_.mem_free(addr);  // a failure (a faulted context) leaves nothing to undo
  }
  void raw_copyin(uint64_t dst, const void* src, uint64_t size) override {
    std::lock_guard lk(mu_);
    make_current(drv_, ctx_);
    for (uint64_t off = 0; off < size; off += kStagingBytes) {
      uint64_t n = std::min(kStagingBytes, size - off);
      std::memcpy(staging_, static_cast<const char*>(src) + off, n);
      SLUICE_DRV("copyin", dev_.name(), drv_, memcpy_async, dst + off, CUdeviceptr(uintptr_t(staging_)), n,
                 stream_);
      SLUICE_DRV("copyin", dev_.name(), drv_, stream_synchronize, stream_);
    }
  }
  void raw_copyout(void* dst, uint64_t src, uint64_t size) override {
    std::lock_guard lk(mu_);
    make_current(drv_, ctx_);
    for (uint64_t off = 0; off < size; off += kStagingBytes) {
      uint64_t n = std::min(kStagingBytes, size - off);
      SLUICE_DRV("copyout", dev_.name(), drv_, memcpy_async, CUdeviceptr(uintptr_t(staging_)), src + off, n,
                 stream_);
      SLUICE_DRV("copyout", dev_.name(), drv_, stream_synchronize, stream_);
      std::memcpy(static_cast<char*>(dst) + off, staging_, n);
    }
  }

 private:
  hcq::Device& dev_;
  const Driver& drv_;
  CUcontext ctx_;
  CUstream stream_ = nullptr;
  void* staging_ = nullptr;
  std::mutex mu_;  // staging_
};

}  // namespace

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev, const Driver& drv, CUcontext ctx) {
  return std::make_unique<Allocator>(dev, drv, ctx);
}

}  // namespace sluice::cuda
