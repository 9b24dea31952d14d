#include "backends/null/allocator.h"

#include <atomic>

namespace sluice::null {
namespace {

class Allocator final : public hcq::Allocator {
 public:
  using hcq::Allocator::Allocator;
  ~Allocator() override { release_cache(); }

 protected:
  // Addresses only need to be distinct: no command reads them.
  uint64_t raw_alloc(uint64_t size) override { return next_.fetch_add((size + 255) & ~uint64_t(255)); }
  void raw_free(uint64_t, uint64_t) override {}
  void raw_copyin(uint64_t, const void*, uint64_t) override {}
  void raw_copyout(void*, uint64_t, uint64_t) override {}

 private:
  std::atomic<uint64_t> next_{uint64_t(1) << 32};
};

}  // namespace

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev) { return std::make_unique<Allocator>(dev); }

}  // namespace sluice::null
