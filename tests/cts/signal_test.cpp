// Signal conformance on the host side: values, timed-out waits, failures.
#include <chrono>
#include <thread>

#include "hcq/error.h"
#include "tests/cts/devices.h"

using namespace std::chrono_literals;

namespace sluice::cts {
namespace {

using SignalTest = DeviceTest;

TEST_P(SignalTest, HostSetWakesWaiter) {
  auto s = dev().new_signal("cts", 1);
  std::thread setter([&] {
    std::this_thread::sleep_for(5ms);
    s->set(3);
  });
  s->wait(3);
  setter.join();
  EXPECT_EQ(s->value(), 3u);
  EXPECT_EQ(s->timestamp_ns(), 0u);  // host writes leave the device timestamp alone
  s->wait(2);                        // an older value is reached too
}

TEST_P(SignalTest, TimedOutWaitNamesDeviceSignalAndValues) {
  auto s = dev().new_signal("cts-timeout", 3);
  try {
    s->wait(5, 20ms);
    FAIL() << "the wait should time out";
  } catch (const hcq::TimeoutError& e) {
    std::string m = e.what();
    std::string want =
        "[wait] " + dev().name() + ": signal 'cts-timeout' did not reach 5 within 20 ms (value 3)";
    EXPECT_EQ(m.substr(0, want.size()), want) << m;
  }
  EXPECT_FALSE(s->failed());                     // a timeout alone fails nothing
  EXPECT_THROW(s->wait(5, 1ms), sluice::Error);  // queue errors are sluice::Errors like any other
}

TEST_P(SignalTest, FailedSignalRethrowsOnEveryLaterWait) {
  auto s = dev().new_signal("cts-fail", 1);
  std::thread waiter([&] { EXPECT_THROW(s->wait(2), hcq::FaultError); });  // woken by fail()
  std::this_thread::sleep_for(5ms);
  s->fail("[test] device fault");
  waiter.join();
  for (int i = 0; i < 2; ++i) {
    try {
      s->wait(1);  // even a value already reached
      FAIL() << "the wait should rethrow";
    } catch (const hcq::FaultError& e) { EXPECT_STREQ(e.what(), "[test] device fault"); }
  }
  s->fail("[test] second");
  EXPECT_EQ(s->error(), "[test] device fault");  // the first failure wins
}

CTS_INSTANTIATE(SignalTest);

}  // namespace
}  // namespace sluice::cts
