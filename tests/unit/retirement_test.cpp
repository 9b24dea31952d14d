// hcq::Retirement (hcq/retirement.h) without a device: a timeline signal written in order, values that
// come early, a replaced timeline, and threads retiring interleaved values at once.
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "hcq/retirement.h"
#include "hcq/signal.h"

namespace sluice::hcq {
namespace {

struct Timeline {
  Signal s{"timeline"};
  std::atomic<Signal*> current{&s};
  Retirement r{current};
};

// A signal's value and the time of its last write.
using At = std::pair<uint64_t, uint64_t>;
At at(const Signal& s) { return {s.value(), s.timestamp_ns()}; }

TEST(Retirement, AValueInOrderIsWrittenWithItsTime) {
  Timeline t;
  t.r.done(1, 10);
  EXPECT_EQ(at(t.s), At(1, 10));
  t.r.done(2, 20);
  EXPECT_EQ(at(t.s), At(2, 20));
}

TEST(Retirement, EarlyValuesWaitForTheOneBeforeThemAndPassInOneWrite) {
  Timeline t;
  t.r.done(3, 30);
  t.r.done(2, 40);
  EXPECT_EQ(at(t.s), At(0, 0));
  t.r.done(1, 35);
  EXPECT_EQ(at(t.s), At(3, 40));  // the latest of the advance's times
  t.r.done(5, 50);
  EXPECT_EQ(t.s.value(), 3u);
  t.r.done(4, 45);
  EXPECT_EQ(at(t.s), At(5, 50));
}

TEST(Retirement, AReplacedTimelineCountsWhatItStartsAtAndLaterValuesContinueOnIt) {
  Timeline t;
  t.r.done(1, 10);
  t.r.done(4, 40);  // early, then counted by the replacement
  Signal next("timeline#2", 5);
  t.current = &next;
  t.r.done(3, 30);
  t.r.done(5, 50);
  EXPECT_EQ(at(next), At(5, 0));  // nothing of what it counted is written
  t.r.done(7, 70);
  t.r.done(6, 60);
  EXPECT_EQ(at(next), At(7, 70));
  EXPECT_EQ(t.s.value(), 1u);
}

// Four threads retire interleaved values (thread i: i+1, i+5, ...) with the value as its time. Writes
// land in order: whoever sees a value sees at least its time, and the last write is the last value.
TEST(Retirement, ThreadsRetiringAtOnceWriteTheTimelineInOrder) {
  Timeline t;
  constexpr uint64_t kValues = 200000;
  constexpr int kThreads = 4;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> behind{0};
  std::thread watcher([&] {
    uint64_t last = 0;
    while (!stop.load()) {
      const uint64_t v = t.s.value(), ns = t.s.timestamp_ns();
      if (v < last || ns < v) behind.fetch_add(1);
      last = v;
    }
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (uint64_t v = uint64_t(i) + 1; v <= kValues; v += kThreads) t.r.done(v, v);
    });
  for (auto& th : threads) th.join();
  stop = true;
  watcher.join();
  EXPECT_EQ(at(t.s), At(kValues, kValues));
  EXPECT_EQ(behind.load(), 0u);
}

}  // namespace
}  // namespace sluice::hcq
