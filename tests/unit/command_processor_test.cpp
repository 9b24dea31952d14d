// hcq::CommandProcessor's own rules (hcq/command_processor.h), over a scripted encoder that runs no
// device: segments finish when the test lets them, marks read whatever time the test sets. The cts
// suite checks the same rules through real backends; these pin the ones a device makes hard to provoke
// (times outside the segment's window, an encoder that throws, a fatal error, a wait the device holds).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "backends/null/device.h"
#include "hcq/command_processor.h"
#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::hcq {
namespace {

using namespace std::chrono_literals;

class ScriptedQueue final : public CommandProcessor {
 public:
  std::atomic<uint64_t> finished{0};   // segments up to this token are done
  std::atomic<uint64_t> mark_time{0};  // what every mark reads (0: unknown)
  std::atomic<bool> throw_on_exec{false};
  std::atomic<bool> errors_are_fatal{false};
  std::atomic<bool> device_waits{false};       // encode_wait holds every wait on the "device"
  std::atomic<ScriptedQueue*> tells{nullptr};  // encode_signal records a write this queue may wait for
  std::atomic<bool> native_graphs{false};      // encode_graph records every graph replay as one command
  std::atomic<bool> complete_at_seal{false};   // sealed() completes the segment, as NULL's does
  std::vector<uint64_t> sealed_tokens;         // recording thread only
  std::atomic<int> execs{0}, device_held_waits{0}, recycled{0};
  std::atomic<int64_t> hang_ns{std::chrono::nanoseconds(2s).count()};
  std::atomic<ScriptedQueue*> peer{nullptr};  // another queue of the same device (settled)
  std::mutex mu;
  std::vector<uint64_t> retired;
  std::vector<const void*> written_here;  // signals another queue recorded a write of (tells)
  bool recorded(const SignalRef& s) {     // can_encode_wait's answer (encode_wait then holds the wait)
    std::lock_guard lk(mu);
    return std::find(written_here.begin(), written_here.end(), s.id()) != written_here.end();
  }

  static Config config(ScriptedQueue* self) {
    Config c;
    c.device_name = "SCRIPTED";
    c.queue_name = "compute:0";
    c.profiling = [] { return false; };
    c.profile = [](ProfileRecord) {};
    c.retire = [self](uint64_t v, uint64_t) {
      std::lock_guard lk(self->mu);
      self->retired.push_back(v);
    };
    c.hang_timeout = [self] { return std::chrono::nanoseconds(self->hang_ns.load()); };
    c.settled = [self] {
      ScriptedQueue* other = self->peer;
      return self->quiet() && (!other || other->quiet());
    };
    return c;
  }
  explicit ScriptedQueue(bool worker = true) : CommandProcessor(config(this)) { start(worker); }
  // The timelines retired once n have (10 s at most). Retirement is the last entry of a segment's
  // completion list, applied after the signal write that woke the test: wait for it rather than race it.
  std::vector<uint64_t> retired_once(size_t n) {
    const auto end = Clock::now() + 10s;
    std::unique_lock lk(mu);
    while (retired.size() < n && Clock::now() < end) {
      lk.unlock();
      std::this_thread::sleep_for(100us);
      lk.lock();
    }
    return retired;
  }
  bool callback(uint64_t token) { return complete_now(token); }  // a driver's completion callback
  ~ScriptedQueue() override { shutdown(); }

  std::atomic<uint64_t> tokens{0};

 private:
  void encode_exec(const packet::ExecView&, Marks*) override {
    if (throw_on_exec) throw std::runtime_error("[exec] SCRIPTED: the encoder refused the kernel");
    ++execs;
  }
  void encode_copy(uint64_t, uint64_t, uint64_t, Marks*) override {}
  void encode_barrier() override {}
  uint32_t encode_mark() override { return 7; }
  uint32_t encode_signal(const SignalRef& s, uint64_t) override {
    if (ScriptedQueue* other = tells) {
      {
        std::lock_guard lk(other->mu);
        other->written_here.push_back(s.id());
      }
      written(s);
    }
    return encode_mark();
  }
  bool encode_wait(const SignalRef& s, uint64_t) override {
    if (!device_waits && !recorded(s)) return false;
    ++device_held_waits;
    return true;
  }
  bool can_encode_wait(const SignalRef& s, uint64_t) override { return device_waits || recorded(s); }
  bool encode_graph(uint64_t, std::span<const uint64_t> words,
                    std::vector<const Program*>& programs) override {
    if (!native_graphs) return false;
    for (packet::Ref r : packet::each(words))
      if (r.op == packet::Exec) programs.push_back(packet::ExecView(r.p).program);
    return true;
  }
  uint64_t submit_segment() override { return ++tokens; }
  void discard_segment() override {}
  bool fatal(const std::string&) const override { return errors_are_fatal; }
  bool wait_segment(uint64_t token, std::chrono::nanoseconds slice, std::string&) override {
    const auto end = Clock::now() + slice;
    while (finished < token && Clock::now() < end) std::this_thread::sleep_for(100us);
    return finished >= token;
  }
  uint64_t finished_segment() override { return finished; }
  uint64_t mark_ns(uint32_t m) override {
    EXPECT_EQ(m, 7u);
    return mark_time;
  }
  void sealed(uint64_t token) override {
    sealed_tokens.push_back(token);
    if (complete_at_seal) complete_now(token);
  }
  void recycle_segment(uint64_t) override { ++recycled; }
};

struct CommandProcessorTest : testing::Test {
  std::unique_ptr<Device> owner = null::open_device();
  struct Kernel : Program {
    using Program::Program;
  };
  Kernel kernel{*owner, "k", {0, 0}};
  ScriptedQueue q;

  void push(const HwQueue& hq, uint64_t tv) { q.push(hq, tv, 0); }
};

TEST_F(CommandProcessorTest, MarkTimesAreClampedIntoTheWindowTheHostSawTheSegmentRun) {
  Signal early("early"), late("late");
  q.finished = UINT64_MAX;
  q.mark_time = 1;  // long before the submit
  const uint64_t before = now_ns();
  push(HwQueue().signal(early, 1), 1);
  early.wait(1, 10s);
  EXPECT_GE(early.timestamp_ns(), before);
  q.mark_time = UINT64_MAX / 2;  // long after the host saw it done
  push(HwQueue().signal(late, 1), 2);
  late.wait(1, 10s);
  EXPECT_LE(late.timestamp_ns(), now_ns());
  EXPECT_GE(late.timestamp_ns(), early.timestamp_ns());
}

TEST_F(CommandProcessorTest, SegmentsApplyOnlyOnceTheDeviceFinishedThemAndRetireInOrder) {
  Signal a("a"), b("b");
  push(HwQueue().exec(kernel, {}, {1}).signal(a, 1), 1);
  push(HwQueue().exec(kernel, {}, {1}).signal(b, 1), 2);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(a.value(), 0u) << "applied before its segment finished";
  q.finished = 2;
  b.wait(1, 10s);
  EXPECT_EQ(a.value(), 1u);
  EXPECT_EQ(q.retired_once(2), (std::vector<uint64_t>{1, 2}));
}

// A submission with nothing for the device is never submitted: on an idle queue it retires before push
// returns; behind unfinished work it retires once that work has, in order. A submission whose encoder
// failed still goes to the device: what it enqueued before the failure runs, and it retires after that.
TEST_F(CommandProcessorTest, OnlySubmissionsWithSomethingForTheDeviceAreSubmitted) {
  auto retired = [&] {
    std::lock_guard lk(q.mu);
    return q.retired;
  };
  push(HwQueue(), 1);
  EXPECT_EQ(q.tokens, 0u);
  EXPECT_EQ(retired(), (std::vector<uint64_t>{1})) << "not retired within the push";
  Signal a("a");
  push(HwQueue().exec(kernel, {}, {1}).signal(a, 1), 2);
  push(HwQueue(), 3);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.tokens, 1u);
  EXPECT_EQ(retired(), (std::vector<uint64_t>{1})) << "retired before the work submitted ahead of it";
  q.finished = 1;
  EXPECT_EQ(q.retired_once(3), (std::vector<uint64_t>{1, 2, 3}));

  q.throw_on_exec = true;
  push(HwQueue().exec(kernel, {}, {1}), 4);
  EXPECT_EQ(q.tokens, 2u) << "a failed submission's enqueued work got no completion point";
  q.finished = 2;
  EXPECT_EQ(q.retired_once(4), (std::vector<uint64_t>{1, 2, 3, 4}));
  q.shutdown();  // the completion thread is done recycling
  EXPECT_EQ(q.recycled.load(), 2) << "recycle_segment for a segment the backend never saw";
}

// A long submission reaches the device in parts of Config::segment_commands (16) kernels, so its
// progress shows part by part.
TEST_F(CommandProcessorTest, ALongSubmissionGoesToTheDeviceInSegments) {
  Signal done("done");
  HwQueue hq;
  for (int i = 0; i < 40; ++i) hq.exec(kernel, {}, {1});
  push(hq.signal(done, 1), 1);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.tokens, 3u) << "40 kernels: 16 + 16 + 8";
  q.finished = 1;  // the first part done: the queue runs the second
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.recycled.load(), 1);
  EXPECT_EQ(done.value(), 0u);
  q.finished = UINT64_MAX;
  done.wait(1, 10s);
}

// A native graph replay is one segment the device cannot watch inside: it may run as long as the
// segments it would otherwise have been split into, before a wait declares it hung.
TEST_F(CommandProcessorTest, ANativeGraphReplayGetsTheHangBudgetOfItsParts) {
  q.native_graphs = true;
  HwQueue hq;
  for (int i = 0; i < 40; ++i) hq.exec(kernel, {}, {1}).memory_barrier();
  q.push(hq, 1, /*graph=*/7);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.tokens, 1u);
  QueueStatus st = q.status();
  ASSERT_EQ(st.phase, QueueStatus::Running);
  EXPECT_EQ(st.budget, 3u);

  const uint64_t hang = 1'000'000;  // 1 ms; the segment has run for 20 ms or more
  int resets = 0;
  auto explain = [&](const QueueStatus& s, uint64_t hang_ns) {
    return explain_queues(
        1, [&](size_t) { return s; }, [](size_t) { return std::string("compute:0"); }, hang_ns,
        [&](size_t, const QueueStatus&, uint64_t) { return ++resets, true; });
  };
  const std::string m = explain(st, hang);
  EXPECT_EQ(resets, 1);
  EXPECT_NE(m.find("past the hang timeout of 1 ms for each of the 3 parts of its work (3 ms)"),
            std::string::npos)
      << m;
  explain(st, hang * 100);  // 300 ms: within its budget
  EXPECT_EQ(resets, 1);
  st.budget = 1;
  explain(st, hang * 10);  // 10 ms for its one part: past it
  EXPECT_EQ(resets, 2);
  q.finished = UINT64_MAX;
}

// A driver callback applies the oldest segment on its own thread, unless it holds a device-held wait
// whose signal is not resolved yet (that would block the driver's thread).
TEST_F(CommandProcessorTest, ACompletionCallbackAppliesOnlyTheOldestSegmentAndNeverBlocks) {
  Signal a("a"), b("b"), gate("gate"), c("c");
  q.device_waits = true;
  push(HwQueue().signal(a, 1), 1);
  push(HwQueue().signal(b, 1), 2);
  push(HwQueue().wait(gate, 1).signal(c, 1), 3);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(q.callback(2)) << "not the oldest";
  EXPECT_TRUE(q.callback(1));
  EXPECT_EQ(a.value(), 1u);
  EXPECT_TRUE(q.callback(2));
  EXPECT_EQ(b.value(), 1u);
  EXPECT_FALSE(q.callback(3)) << "its device-held wait is unresolved";
  gate.set(1);
  EXPECT_TRUE(q.callback(3));
  EXPECT_EQ(c.value(), 1u);
  q.finished = 3;  // the device catches up with what its callbacks reported
  std::lock_guard lk(q.mu);
  EXPECT_EQ(q.retired, (std::vector<uint64_t>{1, 2, 3}));
}

// sealed() runs on the recording thread right after each submit, in token order; a backend that completes
// there (NULL) has applied the submission before push returns, though the device never reported it
// done. A segment holding an unresolved device-held wait is left to the completion thread.
TEST_F(CommandProcessorTest, SealedSeesEverySegmentAndMayCompleteItOnTheRecordingThread) {
  Signal a("a"), b("b"), gate("gate"), c("c");
  q.complete_at_seal = true;
  q.device_waits = true;
  push(HwQueue().exec(kernel, {}, {1}).signal(a, 1), 1);
  EXPECT_EQ(a.value(), 1u) << "not applied in sealed()";
  push(HwQueue().signal(b, 1), 2);
  EXPECT_EQ(b.value(), 1u);
  EXPECT_EQ(q.sealed_tokens, (std::vector<uint64_t>{1, 2}));
  push(HwQueue().wait(gate, 1).signal(c, 1), 3);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(c.value(), 0u) << "applied past an unresolved device-held wait";
  gate.set(1);
  q.finished = 3;
  c.wait(1, 10s);
  EXPECT_EQ(c.value(), 1u);
  EXPECT_EQ(q.sealed_tokens, (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(CommandProcessorTest, AnEncoderErrorSkipsTheRestOfItsSubmissionOnly) {
  Signal before("before"), after("after"), next("next");
  q.finished = UINT64_MAX;
  q.throw_on_exec = true;
  push(HwQueue().signal(before, 1).exec(kernel, {}, {1}).signal(after, 1), 1);
  EXPECT_THROW(after.wait(1, 10s), Error);
  EXPECT_NE(after.error().find("the encoder refused the kernel"), std::string::npos) << after.error();
  before.wait(1, 10s);  // recorded before the failing command: it stands
  q.throw_on_exec = false;
  push(HwQueue().exec(kernel, {}, {1}).signal(next, 1), 2);
  next.wait(1, 10s);  // not fatal: the next submission runs
  EXPECT_EQ(q.execs.load(), 1);
}

TEST_F(CommandProcessorTest, AFatalEncoderErrorFailsEveryLaterSubmission) {
  Signal first("first"), later("later");
  q.finished = UINT64_MAX;
  q.throw_on_exec = true;
  q.errors_are_fatal = true;
  push(HwQueue().exec(kernel, {}, {1}).signal(first, 1), 1);
  EXPECT_THROW(first.wait(1, 10s), Error);
  q.throw_on_exec = false;
  push(HwQueue().exec(kernel, {}, {1}).signal(later, 1), 2);
  EXPECT_THROW(later.wait(1, 10s), Error);
  EXPECT_EQ(later.error(), first.error());
  EXPECT_EQ(q.execs.load(), 0);
  EXPECT_EQ(q.retired_once(2), (std::vector<uint64_t>{1, 2})) << "failed work still retires";
}

TEST_F(CommandProcessorTest, AWaitTheDeviceCanHoldIsEncodedInsteadOfHeldOnTheHost) {
  Signal gate("gate"), done("done");
  q.device_waits = true;
  push(HwQueue().wait(gate, 1).exec(kernel, {}, {1}).signal(done, 1), 1);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.device_held_waits.load(), 1);
  EXPECT_EQ(q.execs.load(), 1) << "the commands after a device-held wait are recorded at once";
  EXPECT_NE(q.status().phase, QueueStatus::Waiting) << "nothing waits on the host";
  gate.set(1);  // what the device waited for
  q.finished = UINT64_MAX;
  done.wait(1, 10s);
}

// The device ran past a wait it held, but the signal's writer failed: the signals after the wait fail
// with its error; those before it stand.
TEST_F(CommandProcessorTest, ADeviceHeldWaitOnASignalThatFailsFailsTheSignalsAfterIt) {
  Signal gate("gate"), before("before"), after("after");
  q.device_waits = true;
  push(HwQueue().signal(before, 1).wait(gate, 1).exec(kernel, {}, {1}).signal(after, 1), 1);
  q.finished = UINT64_MAX;
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(after.value(), 0u) << "written before the signal it waited for resolved";
  gate.fail("[test] the writer failed");
  EXPECT_THROW(after.wait(1, 10s), Error);
  EXPECT_EQ(after.error(), "[test] the writer failed");
  EXPECT_EQ(before.value(), 1u);
}

TEST_F(CommandProcessorTest, AHostHeldWaitIsDescribedAndRunsOnceMet) {
  Signal gate("gate"), done("done");
  q.finished = UINT64_MAX;
  push(HwQueue().wait(gate, 1).exec(kernel, {}, {1}).signal(done, 1), 1);
  std::this_thread::sleep_for(20ms);
  const QueueStatus st = q.status();
  EXPECT_EQ(st.phase, QueueStatus::Waiting);
  EXPECT_EQ(st.signal.name(), "gate");
  EXPECT_EQ(st.value, 1u);
  EXPECT_EQ(q.execs.load(), 0);
  gate.set(1);
  done.wait(1, 10s);
}

// retry_wait: another queue recorded a write of the signal a held wait is for. The encoder is offered
// the wait again; where it takes it, the rest of the submission is recorded at once, before the signal
// is reached; where it declines, the wait stays on the host.
TEST_F(CommandProcessorTest, AHeldWaitGoesToTheDeviceOnceTheEncoderCanTakeIt) {
  Signal gate("gate"), done("done");
  q.finished = UINT64_MAX;
  push(HwQueue().wait(gate, 1).exec(kernel, {}, {1}).signal(done, 1), 1);
  std::this_thread::sleep_for(20ms);
  ASSERT_EQ(q.status().phase, QueueStatus::Waiting);
  q.retry_wait(gate.ref());  // declined: the encoder cannot hold it yet
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(q.status().phase, QueueStatus::Waiting);
  EXPECT_EQ(q.execs.load(), 0);
  q.device_waits = true;  // its writer is recorded now
  q.retry_wait(gate.ref());
  const auto end = Clock::now() + 10s;
  while (q.execs == 0 && Clock::now() < end) std::this_thread::sleep_for(100us);
  EXPECT_EQ(q.device_held_waits.load(), 1);
  EXPECT_EQ(q.execs.load(), 1) << "the commands after the wait are recorded before it is met";
  EXPECT_EQ(done.value(), 0u) << "a signal after a device-held wait waits for the signal it waited for";
  gate.set(1);
  done.wait(1, 10s);
}

// written(): the queue that records a write another queue's next submissions wait for records them
// itself once none can block, so the dependency does not wait for that queue's worker to wake up (here
// it never does: the waiting queue has none). Submissions keep their order: one behind a wait only the
// host can meet stays until that wait is met.
TEST_F(CommandProcessorTest, AWriterRecordsTheSubmissionsWaitingForItOnAnotherQueue) {
  ScriptedQueue waiter(/*worker=*/false), writer;
  waiter.finished = UINT64_MAX;  // the writer's segments finish once the test says: gate stays 0 till then
  writer.tells = &waiter;
  writer.pair_with(&waiter);
  Signal host("host"), gate("gate"), done("done"), later("later");
  waiter.push(HwQueue().wait(host, 1).signal(later, 1), 1, 0);
  waiter.push(HwQueue().wait(gate, 1).exec(kernel, {}, {1}).signal(done, 1), 2, 0);
  writer.push(HwQueue().signal(gate, 1), 3, 0);
  EXPECT_EQ(waiter.execs.load(), 0) << "recorded ahead of a submission pushed before it";
  host.set(1);
  writer.push(HwQueue().signal(gate, 2), 4, 0);
  EXPECT_EQ(waiter.execs.load(), 1) << "not recorded within the writer's submit call";
  EXPECT_EQ(waiter.device_held_waits.load(), 1);
  EXPECT_EQ(done.value(), 0u) << "written before the signal its submission waited for";
  writer.finished = UINT64_MAX;
  done.wait(1, 10s);
  EXPECT_EQ(later.value(), 1u);
  EXPECT_EQ(waiter.retired_once(2), (std::vector<uint64_t>{1, 2}));
}

// The drive is bounded: a writer records at most 16 of the waiting queue's submissions after each of its
// own (a producer that keeps pushing must not keep it); the rest wait for the next write, or for the
// waiting queue's own threads.
TEST_F(CommandProcessorTest, AWriterRecordsAFewWaitingSubmissionsAtATime) {
  ScriptedQueue waiter(/*worker=*/false), writer;
  waiter.finished = writer.finished = UINT64_MAX;
  writer.tells = &waiter;
  writer.pair_with(&waiter);
  Signal gate("gate"), other("other");
  for (uint64_t tv = 1; tv <= 20; ++tv) waiter.push(HwQueue().wait(gate, 1).exec(kernel, {}, {1}), tv, 0);
  writer.push(HwQueue().signal(gate, 1), 21, 0);
  EXPECT_EQ(waiter.execs.load(), 16);
  writer.push(HwQueue().signal(other, 1), 22, 0);
  EXPECT_EQ(waiter.execs.load(), 20);
  EXPECT_EQ(waiter.retired_once(20).size(), 20u);
}

TEST_F(CommandProcessorTest, ShutdownFailsAHostWaitNobodyCanMeetAnyMore) {
  Signal gate("gate"), done("done");
  q.finished = UINT64_MAX;
  push(HwQueue().wait(gate, 1).signal(done, 1), 1);
  EXPECT_TRUE(q.shutdown());
  ASSERT_TRUE(done.failed());
  EXPECT_EQ(done.error(),
            "[~Device] SCRIPTED was destroyed while compute:0 waited for signal 'gate' to reach 1");
}

// A device destroyed while one queue holds a segment the device never finishes and another waits for a
// signal only the host can write: the first gives the segment up after the hang timeout, and from then
// on counts as quiet, so the second's wait gives up as well (it waited without end before).
TEST_F(CommandProcessorTest, AHungSegmentGivenUpAtShutdownLetsAnotherQueuesHostWaitGiveUp) {
  ScriptedQueue copy;
  copy.finished = UINT64_MAX;  // its segments complete at once
  q.peer = &copy, copy.peer = &q;
  q.hang_ns = std::chrono::nanoseconds(50ms).count();
  Signal gate("gate"), done("done"), copied("copied");
  push(HwQueue().exec(kernel, {}, {1}).signal(done, 1), 1);  // `finished` stays 0: it never completes
  copy.push(HwQueue(QueueKind::Copy).wait(gate, 1).signal(copied, 1), 2, 0);
  q.close(), copy.close();
  EXPECT_FALSE(q.shutdown());
  std::atomic<bool> stopped{false};
  std::thread stopper([&] { stopped = copy.shutdown(); });
  for (int i = 0; i < 500 && !copied.failed(); ++i) std::this_thread::sleep_for(10ms);
  if (!copied.failed()) gate.set(1);  // let the copy queue go, so the test ends, then fail below
  stopper.join();
  q.peer = nullptr, copy.peer = nullptr;
  ASSERT_TRUE(done.failed());
  EXPECT_EQ(done.error().rfind("[~Device] SCRIPTED was destroyed while compute:0 held work the device did "
                               "not finish within the hang timeout of 50 ms",
                               0),
            0u)
      << done.error();
  ASSERT_TRUE(copied.failed()) << "the copy queue's wait did not give up once the hung segment was";
  EXPECT_EQ(copied.error(),
            "[~Device] SCRIPTED was destroyed while compute:0 waited for signal 'gate' to reach 1");
  EXPECT_TRUE(stopped);
}

// Device::submit refuses a kernel loaded on another device (the backend would call it through its own
// type), wherever it sits in the queue; HwQueue notes the kernels' device as it records them.
TEST(DeviceSubmit, AKernelOfAnotherDeviceIsRefused) {
  struct Kernel : Program {
    using Program::Program;
  };
  auto a = null::open_device(0), b = null::open_device(1);
  Kernel ka{*a, "ka", {0, 0}}, kb{*b, "kb", {0, 0}};
  auto error_of = [&](const HwQueue& q) -> std::string {
    try {
      q.submit(*b);
    } catch (const Error& e) { return e.what(); }
    return "(no error)";
  };
  const std::string expected = "kernel 'ka' was loaded on " + a->name() + ", not on " + b->name();
  EXPECT_NE(error_of(HwQueue().exec(ka, {}, {1})).find(expected), std::string::npos);
  EXPECT_NE(error_of(HwQueue().exec(kb, {}, {1}).exec(ka, {}, {1})).find(expected), std::string::npos);
  EXPECT_EQ(error_of(HwQueue().exec(kb, {}, {1}).exec(kb, {}, {1})), "(no error)");
  b->synchronize();
}

}  // namespace
}  // namespace sluice::hcq
