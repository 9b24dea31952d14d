#include "backends/cpu/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::cpu {
namespace {

// Cache-line alignment: what vectorized kernels want, and no two buffers share a line.
constexpr uint64_t kAlign = 64;
// A buffer of 4 MB or more (numpy's threshold for the same hint) gets a mapping of its own, aligned to a huge
// page and advised to use huge pages, where the kernel's transparent-huge-page setting allows (commonly
// "madvise": only on request). First touching it then costs a fault per 2 MB instead of 512, and a fault
// costs ~10 us on a virtual machine (the GPT-2 block's first run: 113-129 -> 77-86 ms here). Its length is
// rounded to small pages only: a partial last huge page stays on small pages, so nothing beyond the buffer
// becomes resident. Its own mapping, not malloc's, so that the advice never reaches memory malloc later hands
// out for something else.
constexpr uint64_t kHugePage = 2u << 20, kHugeFrom = 4u << 20;

uint64_t page_rounded(uint64_t size) {
  static const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  return (size + page - 1) / page * page;
}

void* map_huge(uint64_t size) {
  const uint64_t len = page_rounded(size);
  void* raw = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto* const start = static_cast<char*>(raw);
  char* const p = start + (kHugePage - uintptr_t(start) % kHugePage) % kHugePage;
  char* const end = start + len + kHugePage;
  if (p > start) ::munmap(start, size_t(p - start));  // the unaligned head and the unused tail
  if (end > p + len) ::munmap(p + len, size_t(end - (p + len)));
  ::madvise(p, len, MADV_HUGEPAGE);  // a hint: refused, the buffer keeps small pages
  return p;
}

class Allocator final : public hcq::Allocator {
 public:
  explicit Allocator(hcq::Device& dev) : hcq::Allocator(dev), dev_(dev) {}
  ~Allocator() override { release_cache(); }

 protected:
  uint64_t raw_alloc(uint64_t size) override {
    void* p = size >= kHugeFrom ? map_huge(size)
                                : std::aligned_alloc(kAlign, (size + kAlign - 1) / kAlign * kAlign);
    if (!p)
      SLUICE_FAIL(hcq::Error, "alloc") << dev_.name() << ": out of memory allocating " << size << " bytes";
    return uint64_t(uintptr_t(p));
  }
  void raw_free(uint64_t addr, uint64_t size) override {
    void* p = reinterpret_cast<void*>(uintptr_t(addr));
    size >= kHugeFrom ? void(::munmap(p, page_rounded(size))) : std::free(p);
  }
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
