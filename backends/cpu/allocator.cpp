#include "backends/cpu/allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::cpu {
namespace {

// Cache-line alignment: what vectorized kernels want, and no two buffers share a line.
constexpr uint64_t kAlign = 64;
// A buffer of 4 MB or more is aligned to a huge page and asks for huge pages (transparent huge pages are
// commonly "madvise" only; numpy asks for them from the same size): first touching it costs one fault
// per 2 MB instead of 512, and a fault costs ~10 us on a virtual machine (the GPT-2 block's first run:
// 110 -> 45 ms here); a kernel striding through it crosses fewer pages. From 4 MB, rounding up to whole huge
// pages wastes at most a third.
constexpr uint64_t kHugePage = 2u << 20, kHugeFrom = 4u << 20;

class Allocator final : public hcq::Allocator {
 public:
  explicit Allocator(hcq::Device& dev) : hcq::Allocator(dev), dev_(dev) {}
  ~Allocator() override { release_cache(); }

 protected:
  uint64_t raw_alloc(uint64_t size) override {
    const uint64_t align = size >= kHugeFrom ? kHugePage : kAlign;
    const uint64_t padded = (size + align - 1) / align * align;
    void* p = std::aligned_alloc(align, padded);
    if (!p)
      SLUICE_FAIL(hcq::Error, "alloc") << dev_.name() << ": out of memory allocating " << size << " bytes";
    if (align == kHugePage) ::madvise(p, padded, MADV_HUGEPAGE);  // a hint: without it, small pages
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
