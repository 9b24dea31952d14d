// hcq::HwQueue's record-side bookkeeping (hcq/queue.h) without a device.
#include <gtest/gtest.h>

#include "hcq/queue.h"
#include "hcq/signal.h"

namespace sluice::hcq {
namespace {

TEST(HwQueue, HoldsNamesTheOpcodesRecordedAndNoOthers) {
  Signal s("s");
  HwQueue q(QueueKind::Copy);
  for (auto op :
       {packet::Wait, packet::Signal, packet::Timestamp, packet::Exec, packet::Copy, packet::Barrier})
    EXPECT_FALSE(q.holds(op)) << int(op);
  q.signal(s, 1).copy(0, 0, 0).memory_barrier();
  EXPECT_TRUE(q.holds(packet::Signal));
  EXPECT_TRUE(q.holds(packet::Copy));
  EXPECT_TRUE(q.holds(packet::Barrier));
  EXPECT_FALSE(q.holds(packet::Wait));
  EXPECT_FALSE(q.holds(packet::Timestamp));
  EXPECT_FALSE(q.holds(packet::Exec));
  HwQueue::Cmd w;
  q.wait(s, 1, &w).timestamp(s);
  q.patch_value(w, 2);
  EXPECT_TRUE(q.holds(packet::Wait));
  EXPECT_TRUE(q.holds(packet::Timestamp));
}

}  // namespace
}  // namespace sluice::hcq
