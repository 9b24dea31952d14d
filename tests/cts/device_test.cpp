// Device conformance: several devices together, and a kernel that never finishes.
#include <atomic>
#include <chrono>
#include <deque>

#include "hcq/error.h"
#include "tests/cts/devices.h"

using namespace std::chrono_literals;
using sluice::hcq::HwQueue;

namespace sluice::cts {
namespace {

using DeviceLevelTest = DeviceTest;

TEST_P(DeviceLevelTest, QueueWaitsOnAnotherDevicesSignal) {
  CTS_REQUIRE(BlockingWaits);
  auto other = entry().open(1);
  auto host = dev().new_signal("host"), a = dev().new_signal("a"), b = other->new_signal("b");
  HwQueue().wait(*host, 1).signal(*a, 1).submit(dev());
  HwQueue().wait(*a, 1).signal(*b, 1).submit(*other);  // `other` waits on this device's signal
  EXPECT_THROW(b->wait(1, 30ms), hcq::TimeoutError);
  host->set(1);
  b->wait(1);
  EXPECT_EQ(a->value(), 1u);
  other->synchronize();
}

TEST_P(DeviceLevelTest, HungKernelTimesOutFailsItsSignalsAndTheDeviceRecovers) {
  CTS_REQUIRE(Execution);
  CTS_REQUIRE(HangRecovery);
  auto d = entry().open(2);  // a private device: this test resets a queue
  d->set_hang_timeout(50ms);
  Kernels ks = entry().load_kernels(*d);
  // The abandoned threads read the flag after the test is over, so every flag lives for the whole process,
  // reachable from a static (not a leak to LeakSanitizer; a deque never moves its elements).
  static auto* flags = new std::deque<std::atomic<int>>();
  std::atomic<int>* release = &flags->emplace_back(0);
  auto done = d->new_signal("done"), after = d->new_signal("after");
  const hcq::Signal& old_timeline = d->timeline();
  HwQueue().exec(*ks.spin, {{uint64_t(uintptr_t(release))}, {}}, {4}).signal(*done, 1).submit(*d);
  HwQueue().signal(*after, 1).submit(*d);  // queued behind the stuck kernel: dropped
  // The hang is declared by the first timed-out wait that finds the kernel past its hang timeout; on a
  // loaded machine the kernel may start late, so keep waiting until one does.
  std::string m;
  for (int i = 0; i < 50 && m.find("reset") == std::string::npos; ++i) {
    try {
      done->wait(1, 100ms);
      FAIL() << "the kernel never returns: the wait must time out";
    } catch (const hcq::TimeoutError& e) { m = e.what(); }
  }
  EXPECT_EQ(m.rfind("[wait] " + d->name() + ": signal 'done' did not reach 1", 0), 0u) << m;
  EXPECT_NE(m.find("kernel 'cts_spin' on compute:0"), std::string::npos) << m;
  EXPECT_NE(m.find("the queue was reset"), std::string::npos) << m;
  EXPECT_THROW(done->wait(1), hcq::FaultError);
  try {
    after->wait(1);
    FAIL() << "a signal of the dropped work should be failed";
  } catch (const hcq::FaultError& e) {
    EXPECT_NE(std::string(e.what()).find("cts_spin"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(old_timeline.failed());
  EXPECT_NE(&d->timeline(), &old_timeline);
  // The device keeps working on a fresh queue and timeline.
  auto again = d->new_signal("again");
  HwQueue().exec(*ks.empty, {}, {1}).signal(*again, 1).submit(*d);
  again->wait(1);
  d->synchronize();
  release->store(1);  // let the abandoned threads finish and exit
}

CTS_INSTANTIATE(DeviceLevelTest);

}  // namespace
}  // namespace sluice::cts
