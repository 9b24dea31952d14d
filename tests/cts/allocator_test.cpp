// Allocator conformance: the LRU cache and the last-use timeline value.
#include <set>

#include "tests/cts/devices.h"

using sluice::hcq::Buffer;
using sluice::hcq::HwQueue;

namespace sluice::cts {
namespace {

class AllocatorTest : public DeviceTest {
 protected:
  void TearDown() override {
    if (IsSkipped()) return;
    dev().allocator().set_cache_limit(hcq::Allocator::kDefaultCacheLimit);  // the device is shared
    dev().allocator().trim();
  }
};

TEST_P(AllocatorTest, ReusesFreedBufferOnlyAfterItsLastUse) {
  auto& al = dev().allocator();
  dev().synchronize();
  al.trim();
  constexpr uint64_t size = 12345;  // a size no other test uses
  Buffer a = al.alloc(size);
  a.last_use = dev().timeline_value() + 1;  // the next submission: not done yet
  al.free(a);
  EXPECT_EQ(al.cached_bytes(), size);
  Buffer b = al.alloc(size);
  EXPECT_NE(b.addr, a.addr) << "reused memory the device may still use";
  EXPECT_EQ(al.cached_bytes(), size);
  HwQueue().submit(dev());  // reaches a.last_use
  dev().synchronize();
  Buffer c = al.alloc(size);
  EXPECT_EQ(c.addr, a.addr) << "the device is done with it: it should come from the cache";
  EXPECT_EQ(al.cached_bytes(), 0u);
  al.free(b);
  al.free(c);
}

TEST_P(AllocatorTest, EvictsTheLeastRecentlyFreedOverTheLimit) {
  auto& al = dev().allocator();
  dev().synchronize();
  al.trim();
  constexpr uint64_t size = 4096;
  al.set_cache_limit(3 * size);
  Buffer b[4];
  for (Buffer& x : b) x = al.alloc(size);
  for (Buffer& x : b) al.free(x);  // b[0] freed first: the one to go
  EXPECT_EQ(al.cached_bytes(), 3 * size);
  std::set<uint64_t> reused;
  for (int i = 0; i < 3; ++i) reused.insert(al.alloc(size).addr);
  EXPECT_EQ(reused, (std::set<uint64_t>{b[1].addr, b[2].addr, b[3].addr}));
  EXPECT_EQ(al.cached_bytes(), 0u);
  for (uint64_t addr : reused) al.free(Buffer{addr, size, 0});
}

TEST_P(AllocatorTest, CopyinCopyoutRoundTrip) {
  CTS_REQUIRE(Execution);
  auto& al = dev().allocator();
  Buffer b = al.alloc(100);
  std::vector<uint8_t> in(100), out(100, 0);
  for (int i = 0; i < 100; ++i) in[i] = uint8_t(i * 3);
  al.copyin(b, in.data(), 100);
  al.copyout(out.data(), b, 40, 60);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 40, in.begin() + 60));
  EXPECT_THROW(al.copyout(out.data(), b, 41, 60), hcq::Error);
  al.free(b);
}

CTS_INSTANTIATE(AllocatorTest);

}  // namespace
}  // namespace sluice::cts
