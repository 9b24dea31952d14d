// Graph conformance: record once, replay many times with patched inputs.
#include "hcq/graph.h"
#include "tests/cts/devices.h"

using sluice::hcq::Buffer;

namespace sluice::cts {
namespace {

using GraphTest = DeviceTest;

TEST_P(GraphTest, Replay1000TimesWithChangingInputs) {
  CTS_REQUIRE(Execution);
  constexpr uint32_t n = 256;
  auto& al = dev().allocator();
  Buffer x[2] = {al.alloc(n * 4), al.alloc(n * 4)}, y = al.alloc(n * 4), z = al.alloc(n * 4),
         out = al.alloc(n * 4);
  for (int k = 0; k < 2; ++k) {
    std::vector<int> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = int(i) * (k ? -1 : 1);
    al.copyin(x[k], v.data(), n * 4);
  }
  const Kernels& ks = kernels();
  hcq::Graph g(dev(), {
                          hcq::GraphExec{ks.add.get(), {{y.addr, x[0].addr}, {0}}, {n}},  // y = x + i
                          hcq::GraphExec{ks.add.get(), {{z.addr, y.addr}, {1}}, {n}},     // z = y + 1
                          hcq::GraphCopy{out.addr, z.addr, n * 4},                        // out = z
                      });
  std::vector<int> got(n);
  uint64_t v = 0;
  for (int i = 0; i < 1000; ++i) {
    g.set_buf(0, 1, x[i % 2].addr);
    g.set_var(0, 0, i);
    v = g.replay();
    out.last_use = v;
    al.copyout(got.data(), out, n * 4);  // waits for the replay
    for (uint32_t j = 0; j < n; ++j)
      ASSERT_EQ(got[j], int(j) * (i % 2 ? -1 : 1) + i + 1) << "replay " << i << " element " << j;
  }
  g.set_copy(2, out.addr, x[1].addr, 8);  // patched copy: out[0..1] = x1[0..1]
  out.last_use = v = g.replay();
  al.copyout(got.data(), out, n * 4);
  EXPECT_EQ(got[1], -1);
  EXPECT_THROW(g.set_var(2, 0, 1), hcq::Error);  // item 2 is a copy
  EXPECT_THROW(g.set_buf(3, 0, 0), hcq::Error);  // no item 3
  for (Buffer* b : {&x[0], &x[1], &y, &z, &out}) {
    b->last_use = v;
    al.free(*b);
  }
}

CTS_INSTANTIATE(GraphTest);

}  // namespace
}  // namespace sluice::cts
