#include "backends/cpu/allocator.h"

#include <cstdlib>
#include <cstring>

#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::cpu {
namespace {

// Cache-line alignment: what vectorized kernels want, and no two buffers share a line.
constexpr uint64_t kAlign = 64;

class Allocator final : public hcq::Allocator {
 public:
  explicit Allocator(hcq::Device& dev) : hcq::Allocator(dev), dev_(dev) {}
  ~Allocator() override { release_cache(); }

 protected:
  uint64_t raw_alloc(uint64_t size) override {
    void* p = std::aligned_alloc(kAlign, (size + kAlign - 1) / kAlign * kAlign);
    if (!p)
      SLUICE_FAIL(hcq::Error, "alloc") << dev_.name() << ": out of memory allocating " << size << " bytes";
    return uint64_t(uintptr_t(p));
  }
  void raw_free(uint64_t addr, uint64_t) override { std::free(reinterpret_cast<void*>(uintptr_t(addr))); }
  void raw_copyin(uint64_t dst, const void* src, uint64_t size) override {
    std::memcpy(reinterpret_cast<void*>(uintptr_t(dst)), src, size);
  }
  void raw_copyout(void* dst, uint64_t src, uint64_t size) override {
    std::memcpy(dst, reinterpret_cast<const void*>(uintptr_t(src)), size);
  }

 private:
  hcq::Device& dev_;
};

}  // namespace

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev) { return std::make_unique<Allocator>(dev); }

}  // namespace sluice::cpu
