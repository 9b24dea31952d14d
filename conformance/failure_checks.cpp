// Waits that fail after their submission was queued (issue #7), across queues and devices; a device
// destroyed while a queue waits (issue #6: never a hang); a kernel that never returns; work the caller
// submits and leaves alone (#21 items 10 and 14).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <fstream>
#include <optional>
#include <string>

#include "conformance/buffers.h"
#include "conformance/check.h"
#include "hcq/error.h"

namespace sluice::conformance {
namespace {

using namespace std::chrono_literals;
using hcq::Buffer;
using hcq::HwQueue;
using hcq::QueueKind;

constexpr uint32_t kN = 1024;

const std::string kFault = "[test] producer fault";

// Every element of b is `want`.
void expect_all(hcq::Device& d, const Buffer& b, int want, const char* what) {
  std::vector<int> got = read_ints(d, b);
  for (size_t i = 0; i < got.size(); ++i) CONF_EXPECT_EQ(got[i], want) << what << " at " << i;
}

void cross_device_wait(Context& c) {  // a queue waits on another device's signal
  hcq::Device& dev = c.dev();
  hcq::Device& other = c.second();
  auto host = dev.new_signal("host"), a = dev.new_signal("a"), b = other.new_signal("b");
  HwQueue().wait(*host, 1).signal(*a, 1).submit(dev);
  HwQueue().wait(*a, 1).signal(*b, 1).submit(other);  // `other` waits on this device's signal
  CONF_EXPECT_THROW(b->wait(1, 30ms), hcq::TimeoutError);
  host->set(1);
  b->wait(1);
  CONF_EXPECT_EQ(a->value(), 1u);
  other.synchronize();
}

// A kernel queued behind a wait that fails does not run; the queue takes new work.
void failed_wait_skips_kernel(Context& c) {
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  Buffer buf = ints(dev, kN, 0);
  auto gate = dev.new_signal("gate"), out = dev.new_signal("out");
  HwQueue().wait(*gate, 1).exec(*k.inc, {{buf.addr}, {}}, {kN}).signal(*out, 1).submit(dev);
  CONF_EXPECT_THROW(out->wait(1, 20ms), hcq::TimeoutError);  // held back by the gate
  gate->fail(kFault);
  CONF_EXPECT_EQ(fault_of(*out), kFault);
  dev.synchronize();  // the skipped submission still retires
  expect_all(dev, buf, 0, "the kernel behind the failed wait ran:");
  auto again = dev.new_signal("again");
  uint64_t v = HwQueue().exec(*k.inc, {{buf.addr}, {}}, {kN}).signal(*again, 1).submit(dev);
  again->wait(1);
  expect_all(dev, buf, 1, "new work after the failure");
  release(dev, buf, v);
}

// The failure stays with its submission: a later one on the same queue, queued while the wait was still
// pending, runs and signals.
void failed_wait_later_submission_runs(Context& c) {
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  Buffer a = ints(dev, kN, 0), b = ints(dev, kN, 0);
  auto gate = dev.new_signal("gate"), out_a = dev.new_signal("a"), out_b = dev.new_signal("b");
  HwQueue().wait(*gate, 1).exec(*k.inc, {{a.addr}, {}}, {kN}).signal(*out_a, 1).submit(dev);
  uint64_t v = HwQueue().exec(*k.inc, {{b.addr}, {}}, {kN}).signal(*out_b, 1).submit(dev);
  gate->fail(kFault);
  out_b->wait(1);
  CONF_EXPECT_EQ(fault_of(*out_a), kFault);
  dev.timeline().wait(v);
  expect_all(dev, a, 0, "behind the failed wait");
  expect_all(dev, b, 1, "the later submission");
  release(dev, a, v);
  release(dev, b, v);
}

// Only the commands after the failed wait are skipped: what came before it runs and signals.
void failed_wait_commands_before_run(Context& c) {
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  Buffer a = ints(dev, kN, 0), b = ints(dev, kN, 0);
  auto gate = dev.new_signal("gate"), first = dev.new_signal("first"), second = dev.new_signal("second");
  uint64_t v = HwQueue()
                   .exec(*k.inc, {{a.addr}, {}}, {kN})
                   .signal(*first, 1)
                   .wait(*gate, 1)
                   .exec(*k.inc, {{b.addr}, {}}, {kN})
                   .signal(*second, 1)
                   .submit(dev);
  first->wait(1);
  gate->fail(kFault);
  CONF_EXPECT_EQ(fault_of(*second), kFault);
  dev.timeline().wait(v);
  CONF_EXPECT(!first->failed()) << first->error();
  expect_all(dev, a, 1, "before the failed wait");
  expect_all(dev, b, 0, "after the failed wait");
  release(dev, a, v);
  release(dev, b, v);
}

// A failure travels through the device's own signals: waits on a signal that a skipped submission would
// have written, on the same queue and on the copy queue, skip their work too.
void failed_wait_propagates(Context& c) {
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  Buffer buf = ints(dev, kN, 0), src = ints(dev, kN, 7), dst = ints(dev, kN, 0);
  auto gate = dev.new_signal("gate"), mid = dev.new_signal("mid"), out = dev.new_signal("out"),
       copied = dev.new_signal("copied");
  HwQueue().wait(*gate, 1).signal(*mid, 1).submit(dev);
  HwQueue().wait(*mid, 1).exec(*k.inc, {{buf.addr}, {}}, {kN}).signal(*out, 1).submit(dev);
  uint64_t v = HwQueue(QueueKind::Copy)
                   .wait(*mid, 1)
                   .copy(dst.addr, src.addr, dst.size)
                   .signal(*copied, 1)
                   .submit(dev);
  gate->fail(kFault);
  CONF_EXPECT_EQ(fault_of(*mid), kFault);
  CONF_EXPECT_EQ(fault_of(*out), kFault);
  CONF_EXPECT_EQ(fault_of(*copied), kFault);
  dev.synchronize();
  expect_all(dev, buf, 0, "the skipped kernel's buffer");
  expect_all(dev, dst, 0, "the skipped copy's destination");
  for (Buffer* x : {&buf, &src, &dst}) release(dev, *x, v);
}

// The same with the failure there before submit, and the copy queue's wait submitted right behind it.
void failed_wait_at_submit_reaches_copy_queue(Context& c) {
  hcq::Device& dev = c.dev();
  Buffer src = ints(dev, kN, 7), dst = ints(dev, kN, 0);
  auto bad = dev.new_signal("bad"), mid = dev.new_signal("mid"), copied = dev.new_signal("copied");
  bad->fail(kFault);
  HwQueue().wait(*bad, 1).signal(*mid, 1).submit(dev);
  uint64_t v = HwQueue(QueueKind::Copy)
                   .wait(*mid, 1)
                   .copy(dst.addr, src.addr, dst.size)
                   .signal(*copied, 1)
                   .submit(dev);
  CONF_EXPECT_EQ(fault_of(*copied), kFault);
  dev.timeline().wait(v);
  expect_all(dev, dst, 0, "the skipped copy's destination");
  for (Buffer* x : {&src, &dst}) release(dev, *x, v);
}

// A wait on another device's signal that fails: the same as a host signal.
void failed_wait_cross_device(Context& c) {
  hcq::Device& dev = c.dev();
  hcq::Device& other = c.second();
  const Kernels& k = c.kernels();
  Buffer buf = ints(dev, kN, 0);
  auto gate = other.new_signal("gate"), theirs = other.new_signal("theirs"), out = dev.new_signal("out");
  HwQueue().wait(*gate, 1).signal(*theirs, 1).submit(other);
  HwQueue().wait(*theirs, 1).exec(*k.inc, {{buf.addr}, {}}, {kN}).signal(*out, 1).submit(dev);
  gate->fail(kFault);
  CONF_EXPECT_EQ(fault_of(*out), kFault);
  other.synchronize();
  dev.synchronize();
  expect_all(dev, buf, 0, "behind the failed wait");
  dev.allocator().free(buf);
}

// A device destroyed while a queue waits for a host signal that is never set: the waiting submission
// fails instead of running, its signals name the device, queue, signal and value, and the destructor
// returns without waiting for the signal.
void failed_wait_device_destroyed(Context& c) {
  // Host signals: they outlive the device.
  hcq::Signal gate("gate"), out("out"), copied("copied"), after("after");
  std::string name;
  auto destroyed = std::chrono::steady_clock::now();
  {
    auto d = c.entry().open(0);
    name = d->name();
    Kernels ks = load_kernels(*d, c.entry().language);
    HwQueue().wait(gate, 1).exec(*ks.empty, {}, {1}).signal(out, 1).submit(*d);
    HwQueue().signal(after, 1).submit(*d);  // behind it, waiting for nothing: it still runs
    HwQueue(QueueKind::Copy).wait(gate, 2).signal(copied, 1).submit(*d);
    ks = {};
    destroyed = std::chrono::steady_clock::now();
  }
  CONF_EXPECT(std::chrono::steady_clock::now() - destroyed < 5s) << "the destructor waited for the host";
  CONF_EXPECT(out.failed() && out.value() == 0) << "the waiting submission ran (value " << out.value() << ")";
  const std::string want_out =
      "[~Device] " + name + " was destroyed while compute:0 waited for signal 'gate' to reach 1";
  CONF_EXPECT_EQ(out.error().substr(0, want_out.size()), want_out);
  CONF_EXPECT(copied.failed()) << "the copy queue's waiting submission did not fail";
  const std::string want_copy =
      "[~Device] " + name + " was destroyed while copy:0 waited for signal 'gate' to reach 2";
  CONF_EXPECT_EQ(copied.error().substr(0, want_copy.size()), want_copy);
  CONF_EXPECT(!after.failed()) << after.error();
  CONF_EXPECT_EQ(after.value(), 1u);
}

// A device destroyed while one of its queues waits for a signal that another of its queues is still
// working towards: the device finishes its own work, so the wait is met and its submission runs (only a
// wait that nothing but the host could meet fails, above).
void wait_met_while_device_destroyed(Context& c) {
  hcq::Signal copied("copied"), out("out");  // host signals: they outlive the device
  {
    auto d = c.entry().open(0);
    if (d->queue_count(QueueKind::Copy) == 0) throw Skip("the device has no copy queue");
    // Copies long enough that the destructor starts while they run (tens of ms on a CPU).
    constexpr uint64_t kBytes = uint64_t(32) << 20;
    Buffer a = d->allocator().alloc(kBytes), b = d->allocator().alloc(kBytes);
    HwQueue q(QueueKind::Copy);
    for (int i = 0; i < 32; ++i) q.copy(b.addr, a.addr, kBytes);
    const uint64_t v = q.signal(copied, 1).submit(*d);
    HwQueue().wait(copied, 1).signal(out, 1).submit(*d);
    release(*d, a, v);
    release(*d, b, v);
  }
  CONF_EXPECT(!copied.failed() && copied.value() == 1)
      << "the copies' signal: value " << copied.value() << " " << copied.error();
  CONF_EXPECT(!out.failed()) << "the wait the copy queue met failed: " << out.error();
  CONF_EXPECT_EQ(out.value(), 1u);
}

// A kernel that never returns times out past the hang timeout, fails its signals and the work queued
// behind it, and the device goes on with a fresh queue and timeline.
void hung_kernel(Context& c) {
  auto d = c.entry().open(2);  // a private device: this check resets a queue
  d->set_hang_timeout(50ms);
  Kernels ks = load_kernels(*d, c.entry().language);
  // The abandoned threads read the flag after the check is over, so every flag lives for the whole
  // process, reachable from a static (not a leak to LeakSanitizer; a deque never moves its elements).
  static auto* flags = new std::deque<std::atomic<int>>();
  std::atomic<int>* go = &flags->emplace_back(0);
  struct Release {  // whatever happens, let the abandoned threads finish
    std::atomic<int>* flag;
    ~Release() { flag->store(1); }
  } release_flag{go};
  auto done = d->new_signal("done"), after = d->new_signal("after");
  const hcq::Signal& old_timeline = d->timeline();
  HwQueue().exec(*ks.spin, {{uint64_t(uintptr_t(go))}, {}}, {4}).signal(*done, 1).submit(*d);
  HwQueue().signal(*after, 1).submit(*d);  // queued behind the stuck kernel: dropped
  // The hang is declared by the first timed-out wait that finds the kernel past its hang timeout; on a
  // loaded machine the kernel may start late, so keep waiting until one does.
  std::string m;
  for (int i = 0; i < 50 && m.find("reset") == std::string::npos; ++i) {
    try {
      done->wait(1, 100ms);
      throw Failure("the kernel never returns, but the wait for it did");
    } catch (const hcq::TimeoutError& e) { m = e.what(); }
  }
  CONF_EXPECT(m.rfind("[wait] " + d->name() + ": signal 'done' did not reach 1", 0) == 0) << m;
  CONF_EXPECT(m.find("kernel 'cts_spin' on compute:0") != std::string::npos) << m;
  CONF_EXPECT(m.find("the queue was reset") != std::string::npos) << m;
  CONF_EXPECT(!fault_of(*done).empty()) << "the hung kernel's signal is not failed";
  const std::string dropped = fault_of(*after);
  CONF_EXPECT(dropped.find("cts_spin") != std::string::npos)
      << "the dropped work's signal: '" << dropped << "'";
  CONF_EXPECT(old_timeline.failed()) << "the replaced timeline is not failed";
  CONF_EXPECT(&d->timeline() != &old_timeline) << "the timeline was not replaced";
  auto again = d->new_signal("again");
  HwQueue().exec(*ks.empty, {}, {1}).signal(*again, 1).submit(*d);
  again->wait(1);
  d->synchronize();
}

// A signal destroyed while a write to it is pending (after a wait on it timed out) is not written
// (hcq/signal.h: the write is dropped); the rest of the submission runs.
void pending_signal_destroyed(Context& c) {
  hcq::Device& dev = c.dev();
  for (QueueKind kind : {QueueKind::Compute, QueueKind::Copy}) {
    auto gate = dev.new_signal("gate"), out = dev.new_signal("out"), after = dev.new_signal("after");
    HwQueue(kind).wait(*gate, 1).signal(*out, 1).timestamp(*out).signal(*after, 1).submit(dev);
    CONF_EXPECT_THROW(out->wait(1, 20ms), hcq::TimeoutError);
    out.reset();  // the caller gives up on it while the write is still pending
    gate->set(1);
    after->wait(1);
    dev.synchronize();
  }
}

// The same for a write that the device holds rather than the queue: the signal goes while its submission
// waits on another queue's signal that the host sets afterwards.
void pending_signal_destroyed_held(Context& c) {
  hcq::Device& dev = c.dev();
  auto gate = dev.new_signal("gate"), mid = dev.new_signal("mid"), out = dev.new_signal("out");
  HwQueue(QueueKind::Copy).wait(*gate, 1).signal(*mid, 1).submit(dev);
  uint64_t v = HwQueue().wait(*mid, 1).signal(*out, 1).submit(dev);
  CONF_EXPECT_THROW(out->wait(1, 20ms), hcq::TimeoutError);
  out.reset();
  gate->set(1);
  dev.timeline().wait(v);
}

// The process's resident memory (Linux), in bytes.
uint64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmRSS:  1234 kB"
  return 0;
}

// 16k submissions that nobody waits for, faster than the device runs them: a device that lets them pile
// up without bound, or keeps what each one needed until someone waits, grows by kilobytes per submission
// (VULKAN on lavapipe did: 74 MB here, without the validation layer, which slows submits to the device's
// pace; tests/cts/CMakeLists.txt runs it both ways); a bounded one stays within a few MB.
void pending_never_awaited_bounded(Context& c) {
#if defined(__SANITIZE_ADDRESS__)
  throw Skip("AddressSanitizer keeps freed memory in quarantine: resident memory says nothing here");
#elif defined(__SANITIZE_THREAD__)
  throw Skip(
      "ThreadSanitizer's shadow and history grow with every access: resident memory says nothing here");
#endif
  hcq::Device& dev = c.dev();
  constexpr int kSubmissions = 16'000;
  constexpr uint64_t kLimit = 16ull << 20;  // 1 KB a submission
  auto s = dev.new_signal("never-awaited");
  Buffer a = dev.allocator().alloc(256), b = dev.allocator().alloc(256);
  auto submit = [&](uint64_t value) {
    return HwQueue().copy(b.addr, a.addr, 16).signal(*s, value).submit(dev);
  };
  for (uint64_t i = 1; i <= 1000; ++i) submit(i);  // what a device allocates once is counted before
  dev.synchronize();
  const uint64_t before = resident_bytes();
  uint64_t v = 0;
  for (uint64_t i = 1; i <= kSubmissions; ++i) v = submit(1000 + i);
  const uint64_t grown = resident_bytes() - std::min(before, resident_bytes());
  dev.timeline().wait(v);
  release(dev, a, v);
  release(dev, b, v);
  CONF_EXPECT(grown < kLimit) << dev.name() << " grew by " << grown / 1024 << " KB over " << kSubmissions
                              << " submissions nobody waited for";
  CONF_EXPECT_EQ(s->value(), 1000u + kSubmissions);
}

// A device destroyed while a kernel of it never returns: the destructor gives the kernel up once it goes
// the hang timeout without progress (never a hang); the kernel's signal and the work behind it fail. A
// queue that waits for a host signal meanwhile gives up once the kernel is given up (the device is then
// settled: nothing of it can write that signal).
void hung_kernel_device_destroyed(Context& c) {
  static auto* flags = new std::deque<std::atomic<int>>();  // as in hung_kernel
  std::atomic<int>* go = &flags->emplace_back(0);
  struct Release {
    std::atomic<int>* flag;
    ~Release() { flag->store(1); }
  } release_flag{go};
  hcq::Signal done("done"), after("after"), gate("gate"), copied("copied");  // they outlive the device
  // The kernels outlive the device as well: the spin kernel is still running when it goes (a program
  // freed under its running kernel would take the code away).
  std::optional<Kernels> ks;
  std::string name;
  bool copy_queue = false;
  auto destroyed = std::chrono::steady_clock::now();
  {
    auto d = c.entry().open(2);
    name = d->name();
    copy_queue = d->queue_count(QueueKind::Copy) > 0;
    d->set_hang_timeout(50ms);
    ks = load_kernels(*d, c.entry().language);
    HwQueue().exec(*ks->spin, {{uint64_t(uintptr_t(go))}, {}}, {4}).signal(done, 1).submit(*d);
    HwQueue().signal(after, 1).submit(*d);
    if (copy_queue) HwQueue(QueueKind::Copy).wait(gate, 1).signal(copied, 1).submit(*d);
    destroyed = std::chrono::steady_clock::now();
  }
  const auto took = std::chrono::steady_clock::now() - destroyed;
  CONF_EXPECT(took < 5s) << "the destructor waited "
                         << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                         << " ms for a kernel that never returns";
  const std::string want = "[~Device] " + name + " was destroyed while compute:0 held work";
  CONF_EXPECT_EQ(fault_of(done).substr(0, want.size()), want);
  CONF_EXPECT_EQ(fault_of(after).substr(0, want.size()), want);
  if (copy_queue) {
    const std::string want_copy =
        "[~Device] " + name + " was destroyed while copy:0 waited for signal 'gate'";
    CONF_EXPECT_EQ(fault_of(copied).substr(0, want_copy.size()), want_copy);
  }
}

}  // namespace

std::vector<Check> failure_checks() {
  return {
      {"queue/cross_device_wait", cross_device_wait},
      {"queue/failed_wait_skips_kernel", failed_wait_skips_kernel},
      {"queue/failed_wait_later_submission_runs", failed_wait_later_submission_runs},
      {"queue/failed_wait_commands_before_run", failed_wait_commands_before_run},
      {"queue/failed_wait_propagates", failed_wait_propagates},
      {"queue/failed_wait_at_submit_reaches_copy_queue", failed_wait_at_submit_reaches_copy_queue},
      {"queue/failed_wait_cross_device", failed_wait_cross_device},
      {"queue/failed_wait_device_destroyed", failed_wait_device_destroyed},
      {"queue/wait_met_while_device_destroyed", wait_met_while_device_destroyed},
      {"queue/hung_kernel_device_destroyed", hung_kernel_device_destroyed},
      {"queue/hung_kernel", hung_kernel},
      {"queue/pending_signal_destroyed", pending_signal_destroyed},
      {"queue/pending_signal_destroyed_held", pending_signal_destroyed_held},
      {"queue/pending_never_awaited_bounded", pending_never_awaited_bounded},
  };
}

}  // namespace sluice::conformance
