// hcq::SubmissionRing (hcq/submission_ring.h) without a device: a small ring, so that submissions pad
// to its end, wrap, fill it and go beside it.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "hcq/error.h"
#include "hcq/queue.h"
#include "hcq/submission_ring.h"

namespace sluice::hcq {
namespace {

// n signal packets, each writing s to a distinct value.
HwQueue signals(Signal& s, int n, uint64_t first) {
  HwQueue q;
  for (int i = 0; i < n; ++i) q.signal(s, first + uint64_t(i));
  return q;
}

TEST(SubmissionRing, SubmissionsComeOutInOrderWithTheirSignalsAcrossPaddingWrapsAndHeapCopies) {
  SubmissionRing ring(64, "TEST q", true);
  std::atomic<bool> no{false};
  Signal s("s");
  // Sizes in words (3 per signal packet): some leave a tail the next one does not fit (padding), one
  // is longer than half the ring (a heap copy).
  const int sizes[] = {2, 5, 9, 1, 12, 3, 7, 0, 11, 4};
  uint64_t value = 1;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 10; ++i) {
      const HwQueue q = signals(s, sizes[i], value);
      ring.push(q.packets(), 100 + uint64_t(i), uint64_t(i % 3), no);
      SubmissionRing::Entry e;
      ASSERT_TRUE(ring.take(e));
      EXPECT_EQ(e.tv, 100 + uint64_t(i));
      EXPECT_EQ(e.graph, uint64_t(i % 3));
      ASSERT_EQ(e.words.size(), q.packets().size());
      EXPECT_TRUE(std::equal(e.words.begin(), e.words.end(), q.packets().begin()));
      // Every signal packet reads its signal through the entry's references.
      std::vector<SignalRef> written = e.signals.written_from(0);
      ASSERT_EQ(written.size(), size_t(sizes[i]));
      for (const SignalRef& r : written) EXPECT_TRUE(r.refers_to(s));
      for (packet::Ref r : packet::each(e.words)) EXPECT_TRUE(e.signals.at(r.at).refers_to(s));
      ring.release(e);
      EXPECT_TRUE(ring.drained());
      value += uint64_t(sizes[i]);
    }
  }
}

TEST(SubmissionRing, WrittenAfterListsWhatPendingSubmissionsWouldSignal) {
  SubmissionRing ring(64, "TEST q", true);
  std::atomic<bool> no{false};
  Signal a("a"), b("b"), c("c");
  ring.push(signals(a, 2, 1).packets(), 1, 0, no);
  HwQueue mixed;
  mixed.wait(a, 1).signal(b, 1).timestamp(b);
  ring.push(mixed.packets(), 2, 0, no);
  ring.push(signals(c, 12, 1).packets(), 3, 0, no);  // beside the ring
  SubmissionRing::Entry e;
  ASSERT_TRUE(ring.take(e));  // the first is being recorded: not pending
  std::vector<SignalRef> pending = ring.written_after(0);
  ASSERT_EQ(pending.size(), 13u);  // b once (not its wait or timestamp), c twelve times
  EXPECT_TRUE(pending[0].refers_to(b));
  for (size_t i = 1; i < pending.size(); ++i) EXPECT_TRUE(pending[i].refers_to(c));
  EXPECT_FALSE(ring.drained());
}

// take() with a caller that decides (the worker, or another queue's thread recording for it): what it
// declines stays first in line, untouched, a submission beside the ring included.
TEST(SubmissionRing, TakeLeavesWhatItsCallerDeclinesFirstInLine) {
  SubmissionRing ring(64, "TEST q", true);
  std::atomic<bool> no{false};
  Signal s("s");
  ring.push(signals(s, 12, 1).packets(), 1, 0, no);  // beside the ring
  ring.push(signals(s, 2, 20).packets(), 2, 0, no);
  std::vector<size_t> offered;  // the signals of each submission offered
  auto yes = [&](std::span<const uint64_t>, const SubmissionSignals& sig) {
    return offered.push_back(sig.written_from(0).size()), true;
  };
  auto nope = [&](std::span<const uint64_t>, const SubmissionSignals& sig) {
    return offered.push_back(sig.written_from(0).size()), false;
  };
  SubmissionRing::Entry e;
  EXPECT_FALSE(ring.take(e, nope));
  ASSERT_TRUE(ring.take(e, yes));
  EXPECT_EQ(e.tv, 1u);
  EXPECT_EQ(e.signals.written_from(0).size(), 12u);
  ring.release(e);
  EXPECT_FALSE(ring.take(e, nope));
  ASSERT_TRUE(ring.take(e, yes));
  EXPECT_EQ(e.tv, 2u);
  EXPECT_EQ(offered, (std::vector<size_t>{12, 12, 2, 2}));
  ring.release(e);
  EXPECT_TRUE(ring.drained());
  EXPECT_FALSE(ring.take(e, yes));
}

// A consumer that gives back the start of a submission (before a wait that may block) lets the producer
// write over it; releasing the submission afterwards must leave the slots of what was written there
// alone (it cleared the references of the next submission, which then named no signal).
TEST(SubmissionRing, ReleaseAfterGiveBackLeavesTheSlotsOfWhatWasWrittenOverIt) {
  SubmissionRing ring(64, "TEST q", true);
  std::atomic<bool> no{false};
  Signal a("a"), b("b"), c("c");
  ring.push(signals(a, 8, 1).packets(), 1, 0, no);  // 28 words at 0
  SubmissionRing::Entry first;
  ASSERT_TRUE(ring.take(first));
  ring.give_back(first, 12);                        // words 0-15 may be written from now on
  ring.push(signals(b, 8, 1).packets(), 2, 0, no);  // 28 words at 28
  ring.push(signals(c, 3, 1).packets(), 3, 0, no);  // a pad to 64, then 13 words at 0: over the start
  for (packet::Ref r : packet::each(first.words.subspan(12)))
    EXPECT_TRUE(first.signals.at(12 + r.at).refers_to(a));
  ring.release(first);
  SubmissionRing::Entry e;
  ASSERT_TRUE(ring.take(e));
  ring.release(e);
  ASSERT_TRUE(ring.take(e));
  EXPECT_EQ(e.tv, 3u);
  for (packet::Ref r : packet::each(e.words)) {
    ASSERT_TRUE(e.signals.at(r.at)) << "the slot of the packet at " << r.at << " was cleared";
    EXPECT_TRUE(e.signals.at(r.at).refers_to(c));
  }
  ring.release(e);
  EXPECT_TRUE(ring.drained());
}

TEST(SubmissionRing, AProducerWaitsForRoomAndGivesUpWhenTheQueueIsAbandoned) {
  SubmissionRing ring(64, "TEST q", true);
  std::atomic<bool> no{false}, abandoned{false};
  Signal s("s");
  const HwQueue q = signals(s, 8, 1);  // 24 + 4 words: two fill the ring
  ring.push(q.packets(), 1, 0, no);
  ring.push(q.packets(), 2, 0, no);
  std::thread consumer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    SubmissionRing::Entry e;
    ASSERT_TRUE(ring.take(e));
    ring.release(e);
  });
  ring.push(q.packets(), 3, 0, no);  // waits for the first to be released
  consumer.join();
  std::thread abandon([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    abandoned = true;
    ring.wake();
  });
  try {
    ring.push(q.packets(), 4, 0, abandoned);
    ADD_FAILURE() << "a push into a full ring of an abandoned queue returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[submit] TEST q was reset after a hang"), std::string::npos)
        << e.what();
  }
  abandon.join();
  // The consumer stops once told to, with what is left still there.
  std::atomic<bool> stop{true};
  SubmissionRing::Entry e;
  EXPECT_TRUE(ring.wait(stop, no));  // drains before it stops
  ASSERT_TRUE(ring.take(e));
  ring.release(e);
  EXPECT_TRUE(ring.wait(stop, no));
  ASSERT_TRUE(ring.take(e));
  ring.release(e);
  EXPECT_FALSE(ring.take(e));
  EXPECT_FALSE(ring.wait(stop, no));
  EXPECT_FALSE(ring.wait(no, abandoned));
}

}  // namespace
}  // namespace sluice::hcq
