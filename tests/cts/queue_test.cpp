// HwQueue conformance: signals, waits, kernels, patching, timestamps, barriers, concurrency, profiling.
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "hcq/error.h"
#include "tests/cts/devices.h"

using namespace std::chrono_literals;
using sluice::hcq::Buffer;
using sluice::hcq::Dims;
using sluice::hcq::HwQueue;
using sluice::hcq::QueueKind;

namespace sluice::cts {
namespace {

class QueueTest : public DeviceTest {
 protected:
  Buffer ints(uint32_t n, int value) {
    Buffer b = dev().allocator().alloc(uint64_t(n) * sizeof(int));
    std::vector<int> v(n, value);
    dev().allocator().copyin(b, v.data(), b.size);
    return b;
  }
  std::vector<int> read(const Buffer& b) {
    std::vector<int> v(b.size / sizeof(int));
    dev().allocator().copyout(v.data(), b, b.size);
    return v;
  }
  void release(Buffer& b, uint64_t last_use) {
    b.last_use = last_use;
    dev().allocator().free(b);
  }
};

void signal_on(hcq::Device& dev, QueueKind kind) {
  auto s = dev.new_signal("cts");
  const uint64_t t0 = hcq::now_ns();
  HwQueue(kind).signal(*s, 1).submit(dev);
  s->wait(1);
  EXPECT_EQ(s->value(), 1u);
  EXPECT_GE(s->timestamp_ns(), t0);
  uint64_t v = HwQueue(kind).signal(*s, 7).submit(dev);
  dev.timeline().wait(v);  // the timeline passes a submission only after its signals
  EXPECT_EQ(s->value(), 7u);
}

TEST_P(QueueTest, SignalOnComputeQueue) { signal_on(dev(), QueueKind::Compute); }
TEST_P(QueueTest, SignalOnCopyQueue) { signal_on(dev(), QueueKind::Copy); }

TEST_P(QueueTest, WaitOnPresetSignal) {
  auto a = dev().new_signal("a", 5), b = dev().new_signal("b");
  HwQueue().wait(*a, 5).signal(*b, 1).submit(dev());
  b->wait(1);
  EXPECT_EQ(b->value(), 1u);
}

TEST_P(QueueTest, WaitOnSignalTheHostSetsLater) {
  CTS_REQUIRE(BlockingWaits);
  auto a = dev().new_signal("a"), b = dev().new_signal("b");
  HwQueue().wait(*a, 1).signal(*b, 1).submit(dev());
  EXPECT_THROW(b->wait(1, 30ms), hcq::TimeoutError);
  EXPECT_EQ(b->value(), 0u);
  a->set(1);
  b->wait(1);
  EXPECT_EQ(b->value(), 1u);
}

TEST_P(QueueTest, ExecOneKernel) {
  CTS_REQUIRE(Execution);
  Buffer out = ints(1000, -1);
  auto s = dev().new_signal("done");
  uint64_t v = HwQueue().exec(*kernels().fill, {{out.addr}, {100}}, {1000}).signal(*s, 1).submit(dev());
  s->wait(1);
  std::vector<int> got = read(out);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(got[i], 100 + i) << "at " << i;
  release(out, v);
}

TEST_P(QueueTest, TwoKernelsResubmitted100Times) {
  CTS_REQUIRE(Execution);
  Buffer buf = ints(4096, 0);
  auto s = dev().new_signal("done");
  HwQueue q;
  HwQueue::Cmd sig;
  q.exec(*kernels().inc, {{buf.addr}, {}}, {4096}).exec(*kernels().inc, {{buf.addr}, {}}, {4096});
  q.signal(*s, 0, &sig);
  uint64_t v = 0;
  for (uint64_t i = 1; i <= 100; ++i) {
    q.patch_value(sig, i);
    v = q.submit(dev());
  }
  s->wait(100);
  for (int x : read(buf)) ASSERT_EQ(x, 200);
  release(buf, v);
}

TEST_P(QueueTest, PatchedLaunchSize) {
  CTS_REQUIRE(Execution);
  Buffer out = ints(256, -1);
  HwQueue q;
  HwQueue::Cmd exec;
  q.exec(*kernels().fill, {{out.addr}, {0}}, {16}, {}, &exec);
  dev().timeline().wait(q.submit(dev()));
  std::vector<int> got = read(out);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(got[i], i < 16 ? i : -1) << "at " << i;
  q.patch_global(exec, {8, 8, 1});  // 64 work-groups
  uint64_t v = q.submit(dev());
  dev().timeline().wait(v);
  got = read(out);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(got[i], i < 64 ? i : -1) << "at " << i;
  release(out, v);
}

TEST_P(QueueTest, PatchedWaitAndSignalValues) {
  auto a = dev().new_signal("a", 1), b = dev().new_signal("b");
  HwQueue q;
  HwQueue::Cmd w, s;
  q.wait(*a, 1, &w).signal(*b, 10, &s);
  q.submit(dev());
  b->wait(10);
  q.patch_value(w, 2);
  q.patch_value(s, 20);
  q.submit(dev());
  if (unsupported(Feature::BlockingWaits).empty()) {
    EXPECT_THROW(b->wait(20, 30ms), hcq::TimeoutError);  // the patched wait holds it back
    EXPECT_EQ(b->value(), 10u);
  }
  a->set(2);
  b->wait(20);
  EXPECT_EQ(b->value(), 20u);
  EXPECT_THROW(q.patch_value(HwQueue::Cmd{99}, 1), hcq::Error);
}

TEST_P(QueueTest, PatchedKernelArgs) {
  CTS_REQUIRE(Execution);
  Buffer a = ints(512, -1), b = ints(512, -1);
  HwQueue q;
  HwQueue::Cmd exec;
  q.exec(*kernels().fill, {{a.addr}, {7}}, {512}, {}, &exec);
  dev().timeline().wait(q.submit(dev()));
  q.patch_buf(exec, 0, b.addr);
  q.patch_var(exec, 0, 9);
  uint64_t v = q.submit(dev());
  dev().timeline().wait(v);
  std::vector<int> ga = read(a), gb = read(b);
  for (int i = 0; i < 512; ++i) {
    ASSERT_EQ(ga[i], 7 + i) << "at " << i;
    ASSERT_EQ(gb[i], 9 + i) << "at " << i;
  }
  EXPECT_THROW(q.patch_var(exec, 1, 0), hcq::Error);  // cts_fill has one variable
  release(a, v);
  release(b, v);
}

TEST_P(QueueTest, TimestampsMonotonicInsideHostWindow) {
  auto t1 = dev().new_signal("t1"), t2 = dev().new_signal("t2"), done = dev().new_signal("done");
  const uint64_t start = hcq::now_ns();
  HwQueue().timestamp(*t1).exec(*kernels().empty, {}, {1}).timestamp(*t2).signal(*done, 1).submit(dev());
  done->wait(1);
  const uint64_t end = hcq::now_ns();
  EXPECT_LE(start, t1->timestamp_ns());
  EXPECT_LE(t1->timestamp_ns(), t2->timestamp_ns());
  EXPECT_LE(t2->timestamp_ns(), done->timestamp_ns());
  EXPECT_LE(done->timestamp_ns(), end);
  EXPECT_EQ(t1->value(), 0u);  // a timestamp leaves the value alone
}

// Completions apply in record order: a timestamp recorded after a signal's write is the time the signal
// keeps, and it is no earlier than a signal written between the two.
TEST_P(QueueTest, ATimestampAfterASignalsWriteIsTheTimeItKeeps) {
  auto s = dev().new_signal("s"), mid = dev().new_signal("mid"), done = dev().new_signal("done");
  HwQueue()
      .signal(*s, 1)
      .exec(*kernels().empty, {}, {1})
      .signal(*mid, 1)
      .exec(*kernels().empty, {}, {1})
      .timestamp(*s)
      .signal(*done, 1)
      .submit(dev());
  done->wait(1);
  EXPECT_EQ(s->value(), 1u);
  EXPECT_GE(s->timestamp_ns(), mid->timestamp_ns());
  EXPECT_LE(s->timestamp_ns(), done->timestamp_ns());
}

TEST_P(QueueTest, MemoryBarrierOrdersKernels) {
  CTS_REQUIRE(Execution);
  Buffer a = ints(2048, 0), b = ints(2048, 0);
  uint64_t v = HwQueue()
                   .exec(*kernels().fill, {{a.addr}, {3}}, {2048})
                   .memory_barrier()
                   .exec(*kernels().add, {{b.addr, a.addr}, {1}}, {2048})
                   .submit(dev());
  dev().timeline().wait(v);
  std::vector<int> got = read(b);
  for (int i = 0; i < 2048; ++i) ASSERT_EQ(got[i], 4 + i) << "at " << i;
  release(a, v);
  release(b, v);
}

TEST_P(QueueTest, TimelineValuesAbove2Pow32) {
  constexpr uint64_t k32 = uint64_t(1) << 32;
  auto s = dev().new_signal("big", k32 - 2), out = dev().new_signal("out");
  HwQueue()
      .signal(*s, k32 - 1)
      .signal(*s, k32)
      .wait(*s, k32)
      .signal(*s, k32 + 5)
      .wait(*s, k32 + 5)
      .signal(*out, 3 * k32)
      .submit(dev());
  out->wait(3 * k32);
  EXPECT_EQ(s->value(), k32 + 5);  // not 5: nothing truncates to 32 bits
  EXPECT_EQ(out->value(), 3 * k32);
  s->set(2 * k32);
  s->wait(2 * k32);
  EXPECT_THROW(s->set(k32), hcq::Error);  // a timeline never goes back
}

TEST_P(QueueTest, FourThreadsSubmitConcurrentlyLoseNoSignal) {
  constexpr int kThreads = 4, kSubmits = 250;
  const uint64_t before = dev().timeline_value();
  std::vector<std::unique_ptr<hcq::Signal>> sigs;
  for (int t = 0; t < kThreads; ++t) sigs.push_back(dev().new_signal("thread" + std::to_string(t)));
  std::vector<std::vector<uint64_t>> values(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      HwQueue q(t % 2 ? QueueKind::Copy : QueueKind::Compute);  // both hardware queues, two producers each
      HwQueue::Cmd sig;
      if (t % 2 == 0) q.exec(*kernels().empty, {}, {1});
      q.signal(*sigs[t], 0, &sig);
      for (uint64_t i = 1; i <= kSubmits; ++i) {
        q.patch_value(sig, i);
        values[t].push_back(q.submit(dev()));
      }
    });
  for (auto& th : threads) th.join();
  dev().synchronize();
  std::set<uint64_t> all;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(sigs[t]->value(), uint64_t(kSubmits)) << "thread " << t;
    all.insert(values[t].begin(), values[t].end());
  }
  EXPECT_EQ(all.size(), size_t(kThreads * kSubmits));  // every submission got its own timeline value
  EXPECT_EQ(dev().timeline_value(), before + kThreads * kSubmits);
  EXPECT_EQ(dev().timeline().value(), dev().timeline_value());
}

TEST_P(QueueTest, WaitOnFailedSignalFailsTheSubmission) {
  CTS_REQUIRE(BlockingWaits);
  auto bad = dev().new_signal("bad"), out = dev().new_signal("out"), later = dev().new_signal("later");
  HwQueue().wait(*bad, 1).signal(*out, 1).submit(dev());
  bad->fail("[test] injected fault");
  try {
    out->wait(1);
    FAIL() << "the wait should rethrow the failure";
  } catch (const hcq::FaultError& e) { EXPECT_STREQ(e.what(), "[test] injected fault"); }
  dev().synchronize();  // the skipped submission still retires
  HwQueue().signal(*later, 1).submit(dev());
  later->wait(1);  // the failure stays with that submission
}

// The same with the failure already there at submit: every device, NULL included, must skip the rest.
TEST_P(QueueTest, WaitOnAlreadyFailedSignalFailsTheSubmission) {
  auto bad = dev().new_signal("bad"), out = dev().new_signal("out");
  bad->fail("[test] injected fault");
  HwQueue().wait(*bad, 1).signal(*out, 1).submit(dev());
  try {
    out->wait(1);
    FAIL() << "the wait should rethrow the failure";
  } catch (const hcq::FaultError& e) { EXPECT_STREQ(e.what(), "[test] injected fault"); }
  dev().synchronize();
}

TEST_P(QueueTest, RecordingErrorsNameTheCall) {
  try {
    HwQueue(QueueKind::Copy).exec(*kernels().empty, {}, {1});
    FAIL();
  } catch (const hcq::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[exec]"), std::string::npos) << e.what();
  }
  try {
    HwQueue().exec(*kernels().fill, {{1, 2}, {0}}, {1});
    FAIL();
  } catch (const hcq::Error& e) {
    EXPECT_STREQ(e.what(), "[exec] kernel 'cts_fill' takes 1 buffers and 1 vars, got 2 buffers and 1 vars");
  }
  EXPECT_THROW(HwQueue().exec(*kernels().empty, {}, {0, 1, 1}), hcq::Error);
  EXPECT_THROW(HwQueue(QueueKind::Compute, 7).submit(dev()), hcq::Error);
}

TEST_P(QueueTest, ProfileRecordsEachExecAndCopy) {
  Buffer a = dev().allocator().alloc(64), b = dev().allocator().alloc(64), c = dev().allocator().alloc(64);
  dev().take_profile();
  dev().set_profiling(true);
  const uint64_t start = hcq::now_ns();
  HwQueue::Cmd exec, copy, copy2;
  HwQueue q;
  q.memory_barrier().exec(*kernels().empty, {}, {1}, {}, &exec).copy(b.addr, a.addr, 64, &copy);
  const uint64_t v1 = q.submit(dev());
  HwQueue q2(QueueKind::Copy);
  q2.memory_barrier().memory_barrier().copy(c.addr, a.addr, 32, &copy2);
  const uint64_t v2 = q2.submit(dev());  // runs alongside: touches no b
  dev().synchronize();
  const uint64_t end = hcq::now_ns();
  dev().set_profiling(false);
  auto recs = dev().take_profile();
  ASSERT_EQ(recs.size(), 3u);
  std::multiset<std::string> seen;
  for (const auto& r : recs) {
    seen.insert(r.queue + " " + r.name + " " + std::to_string(r.bytes));
    EXPECT_EQ(r.device, dev().name());
    EXPECT_LE(start, r.start_ns);
    EXPECT_LE(r.start_ns, r.end_ns);
    EXPECT_LE(r.end_ns, end);
    // Where each came from: its submission's timeline value and its packet's offset in that HwQueue.
    const bool second = r.queue == "copy:0";
    EXPECT_EQ(r.submission, second ? v2 : v1) << r.queue << " " << r.name;
    EXPECT_EQ(r.at, second ? copy2.at : r.name == "copy" ? copy.at : exec.at) << r.queue << " " << r.name;
    EXPECT_EQ(r.transfer, r.name == "copy" ? hcq::Transfer::DeviceToDevice : hcq::Transfer::None);
  }
  EXPECT_EQ(seen,
            (std::multiset<std::string>{"compute:0 cts_empty 0", "compute:0 copy 64", "copy:0 copy 32"}));
  for (const Buffer& x : {a, b, c}) dev().allocator().free(x);
}

TEST_P(QueueTest, ProfileRecordsHostTransfers) {
  Buffer a = dev().allocator().alloc(64);
  std::vector<std::byte> host(64);
  dev().take_profile();
  dev().set_profiling(true);
  dev().allocator().copyin(a, host.data(), 48);
  dev().allocator().copyout(host.data(), a, 16, 8);
  dev().set_profiling(false);
  auto recs = dev().take_profile();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].transfer, hcq::Transfer::HostToDevice);
  EXPECT_EQ(recs[0].bytes, 48u);
  EXPECT_EQ(recs[1].transfer, hcq::Transfer::DeviceToHost);
  EXPECT_EQ(recs[1].bytes, 16u);
  for (const auto& r : recs) {
    EXPECT_EQ(r.queue, "transfer");
    EXPECT_EQ(r.submission, 0u);  // not a submitted command
    EXPECT_LE(r.start_ns, r.end_ns);
  }
  dev().allocator().free(a);
}

CTS_INSTANTIATE(QueueTest);

}  // namespace
}  // namespace sluice::cts
