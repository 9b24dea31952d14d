// Copy, allocator and graph conformance: small, large and many copies, chained copies on either queue; the
// allocator's LRU cache and last-use values; a graph recorded once and replayed with patched inputs.
#include <algorithm>
#include <set>

#include "conformance/buffers.h"
#include "conformance/check.h"
#include "hcq/error.h"
#include "hcq/graph.h"

namespace sluice::conformance {
namespace {

using hcq::Buffer;
using hcq::HwQueue;
using hcq::QueueKind;

Buffer bytes(hcq::Device& d, uint64_t n, uint8_t seed) {
  Buffer b = d.allocator().alloc(n);
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = uint8_t(seed + i * 7);
  d.allocator().copyin(b, v.data(), n);
  return b;
}
std::vector<uint8_t> read_bytes(hcq::Device& d, const Buffer& b) {
  std::vector<uint8_t> v(b.size);
  d.allocator().copyout(v.data(), b, b.size);
  return v;
}
void release_all(hcq::Device& d, std::initializer_list<Buffer*> bufs, uint64_t last_use) {
  for (Buffer* b : bufs) release(d, *b, last_use);
}
// The first byte where two buffers' contents differ (a mismatch of 64 MiB is not printed whole).
void expect_same(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const char* what) {
  CONF_EXPECT_EQ(got.size(), want.size()) << what;
  auto [g, w] = std::mismatch(got.begin(), got.end(), want.begin());
  CONF_EXPECT(g == got.end()) << what << ": byte " << (g - got.begin()) << " is " << int(*g) << ", want "
                              << int(*w);
}

void copy_sized(Context& c, uint64_t n) {
  hcq::Device& dev = c.dev();
  Buffer src = bytes(dev, n, 1), dst = bytes(dev, n, 100);
  uint64_t v = HwQueue(QueueKind::Copy).copy(dst.addr, src.addr, n).submit(dev);
  dev.timeline().wait(v);
  std::vector<uint8_t> got = read_bytes(dev, dst), want = read_bytes(dev, src);
  release_all(dev, {&src, &dst}, v);
  expect_same(got, want, "the copy");
}
void copy_8b(Context& c) { copy_sized(c, 8); }
void copy_64mib(Context& c) { copy_sized(c, uint64_t(64) << 20); }

void copy_256x1b(Context& c) {  // 256 one-byte copies in one queue, reversing the buffer
  hcq::Device& dev = c.dev();
  Buffer src = bytes(dev, 256, 0), dst = bytes(dev, 256, 0);
  HwQueue q(QueueKind::Copy);
  for (uint64_t i = 0; i < 256; ++i) q.copy(dst.addr + i, src.addr + 255 - i, 1);
  uint64_t v = q.submit(dev);
  dev.timeline().wait(v);
  std::vector<uint8_t> s = read_bytes(dev, src), d = read_bytes(dev, dst);
  release_all(dev, {&src, &dst}, v);
  for (int i = 0; i < 256; ++i) CONF_EXPECT_EQ(int(d[size_t(i)]), int(s[size_t(255 - i)])) << "at " << i;
}

void copy_chained(Context& c) {  // two chained copies in one queue, on either kind of queue
  hcq::Device& dev = c.dev();
  for (QueueKind kind : {QueueKind::Copy, QueueKind::Compute}) {
    Buffer a = bytes(dev, 4096, 5), b = bytes(dev, 4096, 50), d = bytes(dev, 4096, 90);
    uint64_t v = HwQueue(kind).copy(b.addr, a.addr, 4096).copy(d.addr, b.addr, 4096).submit(dev);
    dev.timeline().wait(v);
    std::vector<uint8_t> got = read_bytes(dev, d), want = read_bytes(dev, a);
    release_all(dev, {&a, &b, &d}, v);
    expect_same(got, want, hcq::queue_kind_name(kind));
  }
}

// The allocator's cache limit back to its default when a check ends (the device is shared).
struct CacheReset {
  hcq::Device& dev;
  ~CacheReset() {
    dev.allocator().set_cache_limit(hcq::Allocator::kDefaultCacheLimit);
    dev.allocator().trim();
  }
};

void allocator_reuse(Context& c) {  // a freed buffer is reused only after its last use
  hcq::Device& dev = c.dev();
  CacheReset reset{dev};
  auto& al = dev.allocator();
  dev.synchronize();
  al.trim();
  constexpr uint64_t size = 12345;  // a size no other check uses
  Buffer a = al.alloc(size);
  a.last_use = dev.timeline_value() + 1;  // the next submission: not done yet
  al.free(a);
  CONF_EXPECT_EQ(al.cached_bytes(), size);
  Buffer b = al.alloc(size);
  CONF_EXPECT(b.addr != a.addr) << "reused memory the device may still use";
  CONF_EXPECT_EQ(al.cached_bytes(), size);
  HwQueue().submit(dev);  // reaches a.last_use
  dev.synchronize();
  Buffer d = al.alloc(size);
  CONF_EXPECT_EQ(d.addr, a.addr) << "the device is done with it: it should come from the cache";
  CONF_EXPECT_EQ(al.cached_bytes(), 0u);
  al.free(b);
  al.free(d);
}

void allocator_lru(Context& c) {  // over the limit, the least recently freed buffer goes
  hcq::Device& dev = c.dev();
  CacheReset reset{dev};
  auto& al = dev.allocator();
  dev.synchronize();
  al.trim();
  constexpr uint64_t size = 4096;
  al.set_cache_limit(3 * size);
  Buffer b[4];
  for (Buffer& x : b) x = al.alloc(size);
  for (Buffer& x : b) al.free(x);  // b[0] freed first: the one to go
  CONF_EXPECT_EQ(al.cached_bytes(), 3 * size);
  std::set<uint64_t> reused;
  for (int i = 0; i < 3; ++i) reused.insert(al.alloc(size).addr);
  for (uint64_t addr : reused) al.free(Buffer{addr, size, 0});
  CONF_EXPECT(reused == (std::set<uint64_t>{b[1].addr, b[2].addr, b[3].addr}))
      << "the three buffers freed last should come back";
}

void allocator_round_trip(Context& c) {  // copyin, copyout at an offset, and a copyout past the end
  auto& al = c.dev().allocator();
  Buffer b = al.alloc(100);
  std::vector<uint8_t> in(100), out(100, 0);
  for (int i = 0; i < 100; ++i) in[size_t(i)] = uint8_t(i * 3);
  al.copyin(b, in.data(), 100);
  al.copyout(out.data(), b, 40, 60);
  bool past_end = false;
  try {
    al.copyout(out.data(), b, 41, 60);
  } catch (const hcq::Error&) { past_end = true; }
  al.free(b);
  CONF_EXPECT(std::equal(out.begin(), out.begin() + 40, in.begin() + 60)) << "bytes 60..99 read back";
  CONF_EXPECT(past_end) << "a copyout past the end of the buffer did not throw";
}

void graph_replay(Context& c) {  // 1000 replays with changing inputs, then a patched copy
  hcq::Device& dev = c.dev();
  const Kernels& ks = c.kernels();
  constexpr uint32_t n = 256;
  auto& al = dev.allocator();
  Buffer x[2] = {al.alloc(n * 4), al.alloc(n * 4)}, y = al.alloc(n * 4), z = al.alloc(n * 4),
         out = al.alloc(n * 4);
  for (int k = 0; k < 2; ++k) {
    std::vector<int> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = int(i) * (k ? -1 : 1);
    al.copyin(x[k], v.data(), n * 4);
  }
  uint64_t v = 0;
  std::string failure;
  {
    hcq::Graph g(dev, {
                          hcq::GraphExec{ks.add.get(), {{y.addr, x[0].addr}, {0}}, {n}},  // y = x + i
                          hcq::GraphExec{ks.add.get(), {{z.addr, y.addr}, {1}}, {n}},     // z = y + 1
                          hcq::GraphCopy{out.addr, z.addr, n * 4},                        // out = z
                      });
    std::vector<int> got(n);
    for (int i = 0; i < 1000 && failure.empty(); ++i) {
      g.set_buf(0, 1, x[i % 2].addr);
      g.set_var(0, 0, i);
      out.last_use = v = g.replay();
      al.copyout(got.data(), out, n * 4);  // waits for the replay
      for (uint32_t j = 0; j < n && failure.empty(); ++j)
        if (const int want = int(j) * (i % 2 ? -1 : 1) + i + 1; got[j] != want)
          failure = "replay " + std::to_string(i) + " element " + std::to_string(j) + ": got " +
                    std::to_string(got[j]) + ", want " + std::to_string(want);
    }
    if (failure.empty()) {
      g.set_copy(2, out.addr, x[1].addr, 8);  // patched copy: out[0..1] = x1[0..1]
      out.last_use = v = g.replay();
      al.copyout(got.data(), out, n * 4);
      if (got[1] != -1) failure = "after the patched copy out[1] is " + std::to_string(got[1]) + ", want -1";
    }
    if (failure.empty()) {
      CONF_EXPECT_THROW(g.set_var(2, 0, 1), hcq::Error);  // item 2 is a copy
      CONF_EXPECT_THROW(g.set_buf(3, 0, 0), hcq::Error);  // no item 3
    }
  }
  for (Buffer* b : {&x[0], &x[1], &y, &z, &out}) release(dev, *b, v);
  CONF_EXPECT(failure.empty()) << failure;
}

}  // namespace

std::vector<Check> memory_checks() {
  return {
      {"queue/copy_8B", copy_8b},
      {"queue/copy_64MiB", copy_64mib},
      {"queue/copy_256x1B", copy_256x1b},
      {"queue/copy_chained", copy_chained},
      {"queue/allocator_reuse", allocator_reuse},
      {"queue/allocator_lru", allocator_lru},
      {"queue/allocator_round_trip", allocator_round_trip},
      {"queue/graph_replay", graph_replay},
  };
}

}  // namespace sluice::conformance
