// Waits that fail after their submission was queued (issue #7): the commands behind the wait must not
// run, the submission's signals fail with the cause, and the queue goes on with the work after it.
#include <chrono>

#include "hcq/error.h"
#include "tests/cts/devices.h"

using namespace std::chrono_literals;
using sluice::hcq::Buffer;
using sluice::hcq::HwQueue;
using sluice::hcq::QueueKind;

namespace sluice::cts {
namespace {

class WaitFailureTest : public DeviceTest {
 protected:
  Buffer ints(hcq::Device& d, uint32_t n, int value) {
    Buffer b = d.allocator().alloc(uint64_t(n) * sizeof(int));
    std::vector<int> v(n, value);
    d.allocator().copyin(b, v.data(), b.size);
    return b;
  }
  std::vector<int> read(hcq::Device& d, const Buffer& b) {
    std::vector<int> v(b.size / sizeof(int));
    d.allocator().copyout(v.data(), b, b.size);
    return v;
  }
  // The FaultError message a wait on s throws; "" if it does not throw one.
  static std::string fault(const hcq::Signal& s) {
    try {
      s.wait(UINT64_MAX);
    } catch (const hcq::FaultError& e) { return e.what(); }
    return "";
  }
};

constexpr uint32_t kN = 1024;

TEST_P(WaitFailureTest, KernelQueuedBehindAWaitThatFailsDoesNotRun) {
  CTS_REQUIRE(Execution);
  CTS_REQUIRE(BlockingWaits);
  Buffer buf = ints(dev(), kN, 0);
  auto gate = dev().new_signal("gate"), out = dev().new_signal("out");
  HwQueue().wait(*gate, 1).exec(*kernels().inc, {{buf.addr}, {}}, {kN}).signal(*out, 1).submit(dev());
  EXPECT_THROW(out->wait(1, 20ms), hcq::TimeoutError);  // held back by the gate
  gate->fail("[test] producer fault");
  EXPECT_EQ(fault(*out), "[test] producer fault");
  dev().synchronize();  // the skipped submission still retires
  for (int x : read(dev(), buf)) ASSERT_EQ(x, 0) << "the kernel behind the failed wait ran";
  // The queue takes new work.
  auto again = dev().new_signal("again");
  uint64_t v = HwQueue().exec(*kernels().inc, {{buf.addr}, {}}, {kN}).signal(*again, 1).submit(dev());
  again->wait(1);
  for (int x : read(dev(), buf)) ASSERT_EQ(x, 1);
  buf.last_use = v;
  dev().allocator().free(buf);
}

// The failure stays with its submission: a later one on the same queue, queued while the wait was still
// pending, runs and signals.
TEST_P(WaitFailureTest, LaterSubmissionStillRuns) {
  CTS_REQUIRE(Execution);
  CTS_REQUIRE(BlockingWaits);
  Buffer a = ints(dev(), kN, 0), b = ints(dev(), kN, 0);
  auto gate = dev().new_signal("gate"), out_a = dev().new_signal("a"), out_b = dev().new_signal("b");
  HwQueue().wait(*gate, 1).exec(*kernels().inc, {{a.addr}, {}}, {kN}).signal(*out_a, 1).submit(dev());
  uint64_t v = HwQueue().exec(*kernels().inc, {{b.addr}, {}}, {kN}).signal(*out_b, 1).submit(dev());
  gate->fail("[test] producer fault");
  out_b->wait(1);
  EXPECT_EQ(fault(*out_a), "[test] producer fault");
  dev().timeline().wait(v);
  for (int x : read(dev(), a)) ASSERT_EQ(x, 0);
  for (int x : read(dev(), b)) ASSERT_EQ(x, 1);
  a.last_use = b.last_use = v;
  dev().allocator().free(a);
  dev().allocator().free(b);
}

// Only the commands after the failed wait are skipped: what came before it runs and signals.
TEST_P(WaitFailureTest, CommandsBeforeTheFailedWaitRun) {
  CTS_REQUIRE(Execution);
  CTS_REQUIRE(BlockingWaits);
  Buffer a = ints(dev(), kN, 0), b = ints(dev(), kN, 0);
  auto gate = dev().new_signal("gate"), first = dev().new_signal("first"),
       second = dev().new_signal("second");
  uint64_t v = HwQueue()
                   .exec(*kernels().inc, {{a.addr}, {}}, {kN})
                   .signal(*first, 1)
                   .wait(*gate, 1)
                   .exec(*kernels().inc, {{b.addr}, {}}, {kN})
                   .signal(*second, 1)
                   .submit(dev());
  first->wait(1);
  gate->fail("[test] producer fault");
  EXPECT_EQ(fault(*second), "[test] producer fault");
  dev().timeline().wait(v);
  EXPECT_FALSE(first->failed());
  for (int x : read(dev(), a)) ASSERT_EQ(x, 1);
  for (int x : read(dev(), b)) ASSERT_EQ(x, 0);
  a.last_use = b.last_use = v;
  dev().allocator().free(a);
  dev().allocator().free(b);
}

// A failure travels through the device's own signals: waits on a signal that a skipped submission would
// have written, on the same queue and on the copy queue, skip their work too.
TEST_P(WaitFailureTest, FailurePropagatesThroughWaitsOnBothQueues) {
  CTS_REQUIRE(Execution);
  CTS_REQUIRE(BlockingWaits);
  Buffer buf = ints(dev(), kN, 0), src = ints(dev(), kN, 7), dst = ints(dev(), kN, 0);
  auto gate = dev().new_signal("gate"), mid = dev().new_signal("mid"), out = dev().new_signal("out"),
       copied = dev().new_signal("copied");
  HwQueue().wait(*gate, 1).signal(*mid, 1).submit(dev());
  HwQueue().wait(*mid, 1).exec(*kernels().inc, {{buf.addr}, {}}, {kN}).signal(*out, 1).submit(dev());
  uint64_t v = HwQueue(QueueKind::Copy)
                   .wait(*mid, 1)
                   .copy(dst.addr, src.addr, dst.size)
                   .signal(*copied, 1)
                   .submit(dev());
  gate->fail("[test] producer fault");
  EXPECT_EQ(fault(*mid), "[test] producer fault");
  EXPECT_EQ(fault(*out), "[test] producer fault");
  EXPECT_EQ(fault(*copied), "[test] producer fault");
  dev().synchronize();
  for (int x : read(dev(), buf)) ASSERT_EQ(x, 0);
  for (int x : read(dev(), dst)) ASSERT_EQ(x, 0);
  for (Buffer* x : {&buf, &src, &dst}) {
    x->last_use = v;
    dev().allocator().free(*x);
  }
}

// The same with the failure there before submit, and the copy queue's wait submitted right behind it.
TEST_P(WaitFailureTest, FailureAtSubmitPropagatesToTheCopyQueue) {
  CTS_REQUIRE(Execution);
  CTS_REQUIRE(BlockingWaits);
  Buffer src = ints(dev(), kN, 7), dst = ints(dev(), kN, 0);
  auto bad = dev().new_signal("bad"), mid = dev().new_signal("mid"), copied = dev().new_signal("copied");
  bad->fail("[test] producer fault");
  HwQueue().wait(*bad, 1).signal(*mid, 1).submit(dev());
  uint64_t v = HwQueue(QueueKind::Copy)
                   .wait(*mid, 1)
                   .copy(dst.addr, src.addr, dst.size)
                   .signal(*copied, 1)
                   .submit(dev());
  EXPECT_EQ(fault(*copied), "[test] producer fault");
  dev().timeline().wait(v);
  for (int x : read(dev(), dst)) ASSERT_EQ(x, 0);
  for (Buffer* x : {&src, &dst}) {
    x->last_use = v;
    dev().allocator().free(*x);
  }
}

// A wait on another device's signal that fails: the same as a host signal.
TEST_P(WaitFailureTest, WaitOnAnotherDevicesFailedSignal) {
  CTS_REQUIRE(Execution);
  CTS_REQUIRE(BlockingWaits);
  auto other = entry().open(1);
  Buffer buf = ints(dev(), kN, 0);
  auto gate = other->new_signal("gate"), theirs = other->new_signal("theirs"), out = dev().new_signal("out");
  HwQueue().wait(*gate, 1).signal(*theirs, 1).submit(*other);
  HwQueue().wait(*theirs, 1).exec(*kernels().inc, {{buf.addr}, {}}, {kN}).signal(*out, 1).submit(dev());
  gate->fail("[test] producer fault");
  EXPECT_EQ(fault(*out), "[test] producer fault");
  other->synchronize();
  dev().synchronize();
  for (int x : read(dev(), buf)) ASSERT_EQ(x, 0);
  dev().allocator().free(buf);
}

// A device destroyed while a queue waits for a host signal that is never set (issue #6: never a hang):
// the waiting submission fails instead of running, its signals name the device, queue, signal and value,
// and the destructor returns without waiting for the signal.
TEST_P(WaitFailureTest, DestroyedWhileAQueueWaitsFailsTheSubmission) {
  CTS_REQUIRE(BlockingWaits);
  // Host signals: they outlive the device.
  hcq::Signal gate("gate"), out("out"), copied("copied"), after("after");
  std::string name;
  auto destroyed = std::chrono::steady_clock::now();
  {
    auto d = entry().open(0);
    name = d->name();
    Kernels ks = entry().load_kernels(*d);
    HwQueue().wait(gate, 1).exec(*ks.empty, {}, {1}).signal(out, 1).submit(*d);
    HwQueue().signal(after, 1).submit(*d);  // behind it, waiting for nothing: it still runs
    HwQueue(QueueKind::Copy).wait(gate, 2).signal(copied, 1).submit(*d);
    ks = {};
    destroyed = std::chrono::steady_clock::now();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - destroyed, 5s) << "the destructor waited for the host";
  ASSERT_TRUE(out.failed());
  EXPECT_EQ(out.value(), 0u);
  EXPECT_EQ(
      out.error().rfind(
          "[~Device] " + name + " was destroyed while compute:0 waited for signal 'gate' to reach 1", 0),
      0u)
      << out.error();
  ASSERT_TRUE(copied.failed());
  EXPECT_EQ(copied.error().rfind(
                "[~Device] " + name + " was destroyed while copy:0 waited for signal 'gate' to reach 2", 0),
            0u)
      << copied.error();
  EXPECT_FALSE(after.failed()) << after.error();
  EXPECT_EQ(after.value(), 1u);
}

CTS_INSTANTIATE(WaitFailureTest);

}  // namespace
}  // namespace sluice::cts
