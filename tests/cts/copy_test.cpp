// Copy conformance: small, large and many copies, on the copy queue, and chained in one queue.
#include <numeric>

#include "tests/cts/devices.h"

using sluice::hcq::Buffer;
using sluice::hcq::HwQueue;
using sluice::hcq::QueueKind;

namespace sluice::cts {
namespace {

class CopyTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    CTS_REQUIRE(Execution);
  }
  Buffer bytes(uint64_t n, uint8_t seed) {
    Buffer b = dev().allocator().alloc(n);
    std::vector<uint8_t> v(n);
    for (uint64_t i = 0; i < n; ++i) v[i] = uint8_t(seed + i * 7);
    dev().allocator().copyin(b, v.data(), n);
    return b;
  }
  std::vector<uint8_t> read(const Buffer& b) {
    std::vector<uint8_t> v(b.size);
    dev().allocator().copyout(v.data(), b, b.size);
    return v;
  }
  void release(std::initializer_list<Buffer*> bufs, uint64_t last_use) {
    for (Buffer* b : bufs) {
      b->last_use = last_use;
      dev().allocator().free(*b);
    }
  }
};

TEST_P(CopyTest, EightBytes) {
  Buffer src = bytes(8, 1), dst = bytes(8, 100);
  uint64_t v = HwQueue(QueueKind::Copy).copy(dst.addr, src.addr, 8).submit(dev());
  dev().timeline().wait(v);
  EXPECT_EQ(read(dst), read(src));
  release({&src, &dst}, v);
}

TEST_P(CopyTest, SixtyFourMiB) {
  constexpr uint64_t n = uint64_t(64) << 20;
  Buffer src = bytes(n, 3), dst = dev().allocator().alloc(n);
  uint64_t v = HwQueue(QueueKind::Copy).copy(dst.addr, src.addr, n).submit(dev());
  dev().timeline().wait(v);
  EXPECT_TRUE(read(dst) == read(src));  // not EXPECT_EQ: a mismatch would print 64 MiB
  release({&src, &dst}, v);
}

TEST_P(CopyTest, ManyOneByteCopies) {
  Buffer src = bytes(256, 0), dst = bytes(256, 0);
  HwQueue q(QueueKind::Copy);
  for (uint64_t i = 0; i < 256; ++i) q.copy(dst.addr + i, src.addr + 255 - i, 1);  // reversed
  uint64_t v = q.submit(dev());
  dev().timeline().wait(v);
  std::vector<uint8_t> s = read(src), d = read(dst);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(d[i], s[255 - i]) << "at " << i;
  release({&src, &dst}, v);
}

TEST_P(CopyTest, TwoChainedCopiesInOneQueue) {
  for (QueueKind kind : {QueueKind::Copy, QueueKind::Compute}) {
    Buffer a = bytes(4096, 5), b = bytes(4096, 50), c = bytes(4096, 90);
    uint64_t v = HwQueue(kind).copy(b.addr, a.addr, 4096).copy(c.addr, b.addr, 4096).submit(dev());
    dev().timeline().wait(v);
    EXPECT_EQ(read(c), read(a)) << hcq::queue_kind_name(kind) << " queue";
    release({&a, &b, &c}, v);
  }
}

CTS_INSTANTIATE(CopyTest);

}  // namespace
}  // namespace sluice::cts
