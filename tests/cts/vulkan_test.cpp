// VULKAN's own paths (issue #6), beyond the conformance suite:
// - graph replays run as command buffers recorded once and patched in place (backends/vulkan/graph.h):
//   patched buffers, variables and launch sizes, replays in flight at once, a program freed and another
//   loaded;
// - "A lost device fails its signals with an error; the process survives." SLUICE_VULKAN_TEST_DEVICE_LOST=n
// (backends/vulkan/device.h, test only) opens a device that behaves as lost after n submits: vkQueueSubmit,
// vkWaitSemaphores and vkGetSemaphoreCounterValue answer VK_ERROR_DEVICE_LOST from then on, as a driver does
// once its device is gone. Runs with the Khronos validation layer, as the conformance suite does, and fails
// on any error it reports.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/device.h"
#include "backends/vulkan/driver.h"
#include "conformance/kernels.h"
#include "hcq/device.h"
#include "hcq/error.h"
#include "hcq/graph.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

std::unique_ptr<hcq::Device> open_vulkan(std::string* why) {
  ::setenv("SLUICE_VULKAN_VALIDATION", "1", 0);  // before the instance exists
  *why = vulkan::absent_reason();
  return why->empty() ? vulkan::open_device(0) : nullptr;
}

// An ordinal past the devices present is an error (it used to open device 0 silently), as on CL.
TEST(VULKAN, OrdinalPastTheDevicesIsAnError) {
  std::string why;
  if (!open_vulkan(&why)) GTEST_SKIP() << "VULKAN is absent: " << why;
  try {
    vulkan::open_device(7);
    ADD_FAILURE() << "VULKAN:7 opened";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("[open_device] no Vulkan device 7: "), std::string::npos)
        << e.what();
  }
}

TEST(VULKAN, GraphReplaysInFlightWithPatchedBuffersVariablesAndSizes) {
  std::string why;
  std::unique_ptr<hcq::Device> dev = open_vulkan(&why);
  if (!dev) GTEST_SKIP() << "VULKAN is absent: " << why;
  constexpr uint32_t n = 64;
  constexpr int kReplays = 24, kSentinel = 0x5a5a5a5a;
  auto& al = dev->allocator();
  // The conformance suite's add (bufs {out, in}, vars {k}: out[g] = in[g] + k), spirv-as of its assembly.
  std::unique_ptr<hcq::Program> add = conformance::load_kernels(*dev, conformance::Language::SpirvAsm).add;
  std::vector<hcq::Buffer> x = {al.alloc(n * 4), al.alloc(n * 4)}, outs;
  hcq::Buffer y = al.alloc(n * 4);
  for (int k = 0; k < 2; ++k) {
    std::vector<int> v(n);
    for (uint32_t j = 0; j < n; ++j) v[j] = int(j) * (k ? -1 : 1);
    al.copyin(x[size_t(k)], v.data(), n * 4);
  }
  const std::vector<int> sentinel(n, kSentinel);
  for (int i = 0; i < kReplays; ++i) {
    outs.push_back(al.alloc(n * 4));
    al.copyin(outs.back(), sentinel.data(), n * 4);
  }
  uint64_t v = 0;
  std::vector<int> got(n);
  {
    hcq::Graph g(*dev, {hcq::GraphExec{add.get(), {{y.addr, x[0].addr}, {0}}, {n}},       // y = x + i
                        hcq::GraphExec{add.get(), {{outs[0].addr, y.addr}, {1}}, {n}}});  // out_i = y + 1
    // No waits between replays: they pipeline, so several recorded copies are in flight at once.
    for (int i = 0; i < kReplays; ++i) {
      g.set_buf(0, 1, x[size_t(i % 2)].addr);
      g.set_var(0, 0, i);
      g.set_buf(1, 0, outs[size_t(i)].addr);
      g.set_global(1, {i % 3 == 2 ? n / 2 : n});  // every third replay writes only the first half
      v = g.replay();
    }
    dev->synchronize();
    for (int i = 0; i < kReplays; ++i) {
      al.copyout(got.data(), outs[size_t(i)], n * 4);
      for (uint32_t j = 0; j < n; ++j) {
        const int want = i % 3 == 2 && j >= n / 2 ? kSentinel : int(j) * (i % 2 ? -1 : 1) + i + 1;
        ASSERT_EQ(got[j], want) << "replay " << i << " element " << j;
      }
    }
  }
  // A program freed and another loaded (perhaps at the same address) never reuses the old recording.
  add.reset();
  std::unique_ptr<hcq::Program> add2 = conformance::load_kernels(*dev, conformance::Language::SpirvAsm).add;
  hcq::Graph g2(*dev, {hcq::GraphExec{add2.get(), {{y.addr, x[1].addr}, {10}}, {n}},
                       hcq::GraphExec{add2.get(), {{outs[0].addr, y.addr}, {20}}, {n}}});
  for (int i = 0; i < 3; ++i) v = g2.replay();
  dev->synchronize();
  al.copyout(got.data(), outs[0], n * 4);
  for (uint32_t j = 0; j < n; ++j) ASSERT_EQ(got[j], 30 - int(j)) << "element " << j;
  for (hcq::Buffer* b : {&x[0], &x[1], &y}) b->last_use = v, al.free(*b);
  for (auto& b : outs) b.last_use = v, al.free(b);
  EXPECT_EQ(vulkan::validation_errors(), 0u) << "Vulkan validation errors (printed above as they happened)";
}

// The signal failed, and every wait on it rethrows an error that names the failing Vulkan call and
// VK_ERROR_DEVICE_LOST.
void expect_lost(const hcq::Signal& s) {
  std::string msg;
  try {
    s.wait(1, std::chrono::seconds(10));
  } catch (const hcq::FaultError& e) { msg = e.what(); }
  EXPECT_TRUE(s.failed()) << "signal '" << s.name() << "' (value " << s.value() << ")";
  // The call that found the device lost: the submit, or the wait for work in flight.
  EXPECT_TRUE(msg.find("[vkQueueSubmit]") != std::string::npos ||
              msg.find("[vkWaitSemaphores]") != std::string::npos)
      << "signal '" << s.name() << "': " << msg;
  EXPECT_NE(msg.find("VK_ERROR_DEVICE_LOST"), std::string::npos) << "signal '" << s.name() << "': " << msg;
  EXPECT_THROW(s.wait(0, std::chrono::seconds(1)), hcq::FaultError) << "a failed signal rethrows";
}

TEST(VULKAN, LostDeviceFailsPendingAndLaterSignalsAndTheProcessCarriesOn) {
  ::setenv("SLUICE_VULKAN_VALIDATION", "1", 0);  // before the instance exists
  if (std::string why = vulkan::absent_reason(); !why.empty()) GTEST_SKIP() << "VULKAN is absent: " << why;
  ::setenv("SLUICE_VULKAN_TEST_DEVICE_LOST", "1", 1);  // one submit works, the second finds the device lost
  std::unique_ptr<hcq::Device> dev = vulkan::open_device(0);
  ::unsetenv("SLUICE_VULKAN_TEST_DEVICE_LOST");
  {
    std::unique_ptr<hcq::Program> prog = conformance::load_kernels(*dev, conformance::Language::SpirvAsm).add;
    hcq::Buffer a = dev->allocator().alloc(256), b = dev->allocator().alloc(256);
    const hcq::KernelArgs args{{a.addr, b.addr}, {7}};
    auto before = dev->new_signal("before"), held = dev->new_signal("held"),
         queued = dev->new_signal("queued"), later = dev->new_signal("later"),
         copied = dev->new_signal("copied");
    hcq::Signal gate("gate");

    hcq::HwQueue().exec(*prog, args, {1}).signal(*before, 1).submit(*dev);
    before->wait(1);  // the first submit ran
    // Pending when the device is lost: one held back by a host wait, one queued behind it.
    hcq::HwQueue().wait(gate, 1).exec(*prog, args, {1}).signal(*held, 1).submit(*dev);
    hcq::HwQueue().exec(*prog, args, {1}).signal(*queued, 1).submit(*dev);
    EXPECT_FALSE(held->failed());
    EXPECT_EQ(held->value(), 0u);
    gate.set(1);  // the held submission is submitted: vkQueueSubmit finds the device lost
    expect_lost(*held);
    expect_lost(*queued);
    // Later work fails the same way, on the compute and the copy queue, and a graph replay too; the
    // timeline still passes every submission, so nothing waits forever.
    hcq::HwQueue().exec(*prog, args, {1}).signal(*later, 1).submit(*dev);
    expect_lost(*later);
    hcq::HwQueue(hcq::QueueKind::Copy).copy(b.addr, a.addr, 256).signal(*copied, 1).submit(*dev);
    expect_lost(*copied);
    hcq::Graph g(*dev, {hcq::GraphExec{prog.get(), args, {1}}, hcq::GraphExec{prog.get(), args, {2}}});
    EXPECT_NO_THROW(dev->timeline().wait(g.replay(), std::chrono::seconds(10)));
    EXPECT_NO_THROW(dev->synchronize(std::chrono::seconds(10)));
    EXPECT_FALSE(before->failed()) << "work that finished before the loss keeps its result";
    a.last_use = b.last_use = dev->timeline_value();
    dev->allocator().free(a);
    dev->allocator().free(b);
  }
  dev.reset();  // a lost device closes without hanging

  // Other devices keep working: the CPU, and a VULKAN device opened afresh.
  Tensor x = Tensor::from(std::vector<float>{1, 2, 3}, {3}, "CPU") + 1.0f;
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 3, 4}));
  auto fresh = vulkan::open_device(0);
  auto s = fresh->new_signal("fresh");
  hcq::HwQueue().signal(*s, 1).submit(*fresh);
  EXPECT_NO_THROW(s->wait(1, std::chrono::seconds(10)));
  EXPECT_EQ(vulkan::validation_errors(), 0u) << "Vulkan validation errors (printed above as they happened)";
}

}  // namespace
}  // namespace sluice
