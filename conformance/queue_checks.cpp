// HwQueue and Signal conformance: signals, waits, kernels, patching, timestamps, barriers, 64-bit values,
// concurrency, failures, recording errors, profiling.
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "conformance/buffers.h"
#include "conformance/check.h"
#include "hcq/error.h"

namespace sluice::conformance {
namespace {

using namespace std::chrono_literals;
using hcq::Buffer;
using hcq::HwQueue;
using hcq::QueueKind;

// Every queue of the kind signals; its device timestamp falls after the submit; the timeline passes a
// submission only after its signals.
void signal_on(Context& c, QueueKind kind) {
  hcq::Device& dev = c.dev();
  const uint32_t n = dev.queue_count(kind);
  if (n == 0) throw Skip(std::string("the device has no ") + hcq::queue_kind_name(kind) + " queue");
  for (uint32_t i = 0; i < n; ++i) {
    auto s = dev.new_signal("cts");
    const uint64_t t0 = hcq::now_ns();
    HwQueue(kind, i).signal(*s, 1).submit(dev);
    s->wait(1);
    CONF_EXPECT_EQ(s->value(), 1u) << "queue " << i;
    CONF_EXPECT(s->timestamp_ns() >= t0)
        << "queue " << i << ": timestamp " << s->timestamp_ns() << " before the submit at " << t0;
    uint64_t v = HwQueue(kind, i).signal(*s, 7).submit(dev);
    dev.timeline().wait(v);
    CONF_EXPECT_EQ(s->value(), 7u) << "queue " << i << " after the timeline passed its submission";
  }
}
void signal_compute(Context& c) { signal_on(c, QueueKind::Compute); }
void signal_copy(Context& c) { signal_on(c, QueueKind::Copy); }

void wait_preset_signal(Context& c) {
  auto a = c.dev().new_signal("a", 5), b = c.dev().new_signal("b");
  HwQueue().wait(*a, 5).signal(*b, 1).submit(c.dev());
  b->wait(1);
  CONF_EXPECT_EQ(b->value(), 1u);
}

void host_wait(Context& c) {
  auto a = c.dev().new_signal("a"), b = c.dev().new_signal("b");
  HwQueue().wait(*a, 1).signal(*b, 1).submit(c.dev());
  CONF_EXPECT_THROW(b->wait(1, 30ms), hcq::TimeoutError);
  CONF_EXPECT_EQ(b->value(), 0u) << "the queue ran past a wait on a signal nobody raised";
  a->set(1);
  b->wait(1);
  CONF_EXPECT_EQ(b->value(), 1u);
}

// Submissions finish out of order across a device's queues: a copy queue held by a wait holds up neither
// the compute queue's later submissions nor their signals, and the timeline passes the held one only once
// it is done.
void queues_finish_out_of_order(Context& c) {
  hcq::Device& dev = c.dev();
  if (dev.queue_count(QueueKind::Copy) == 0) throw Skip("the device has no copy queue");
  auto gate = dev.new_signal("gate"), held = dev.new_signal("held"), a = dev.new_signal("a");
  dev.synchronize();
  const uint64_t v_held = HwQueue(QueueKind::Copy).wait(*gate, 1).signal(*held, 1).submit(dev);
  HwQueue().signal(*a, 1).submit(dev);
  const uint64_t v_last = HwQueue().signal(*a, 2).submit(dev);
  CONF_EXPECT(a->wait_until(2, hcq::Clock::now() + 5s))
      << "the compute queue waited for the copy queue's held submission: a = " << a->value();
  CONF_EXPECT_EQ(dev.timeline().value(), v_held - 1) << "the timeline passed a submission still held";
  CONF_EXPECT_EQ(held->value(), 0u);
  gate->set(1);
  dev.timeline().wait(v_last);
  CONF_EXPECT_EQ(held->value(), 1u);
  CONF_EXPECT_EQ(dev.timeline().value(), v_last);
}

void exec(Context& c) {
  hcq::Device& dev = c.dev();
  Buffer out = ints(dev, 1000, -1);
  auto s = dev.new_signal("done");
  uint64_t v = HwQueue().exec(*c.kernels().fill, {{out.addr}, {100}}, {1000}).signal(*s, 1).submit(dev);
  s->wait(1);
  std::vector<int> got = read_ints(dev, out);
  release(dev, out, v);
  for (int i = 0; i < 1000; ++i) CONF_EXPECT_EQ(got[size_t(i)], 100 + i) << "out = 100 + g at " << i;
}

void resubmit(Context& c) {  // two kernels, resubmitted 100 times with a patched signal value
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  Buffer buf = ints(dev, 4096, 0);
  auto s = dev.new_signal("done");
  HwQueue q;
  HwQueue::Cmd sig;
  q.exec(*k.inc, {{buf.addr}, {}}, {4096}).exec(*k.inc, {{buf.addr}, {}}, {4096});
  q.signal(*s, 0, &sig);
  uint64_t v = 0;
  for (uint64_t i = 1; i <= 100; ++i) {
    q.patch_value(sig, i);
    v = q.submit(dev);
  }
  s->wait(100);
  std::vector<int> got = read_ints(dev, buf);
  release(dev, buf, v);
  for (size_t i = 0; i < got.size(); ++i) CONF_EXPECT_EQ(got[i], 200) << "at " << i;
}

void patch_launch_size(Context& c) {
  hcq::Device& dev = c.dev();
  Buffer out = ints(dev, 256, -1);
  HwQueue q;
  HwQueue::Cmd exec;
  q.exec(*c.kernels().fill, {{out.addr}, {0}}, {16}, {}, &exec);
  dev.timeline().wait(q.submit(dev));
  std::vector<int> got = read_ints(dev, out);
  for (int i = 0; i < 256; ++i) CONF_EXPECT_EQ(got[size_t(i)], i < 16 ? i : -1) << "at " << i;
  q.patch_global(exec, {8, 8, 1});  // 64 work-groups
  uint64_t v = q.submit(dev);
  dev.timeline().wait(v);
  got = read_ints(dev, out);
  release(dev, out, v);
  for (int i = 0; i < 256; ++i) CONF_EXPECT_EQ(got[size_t(i)], i < 64 ? i : -1) << "patched, at " << i;
}

void patch_values(Context& c) {  // a recorded wait's and signal's values
  hcq::Device& dev = c.dev();
  auto a = dev.new_signal("a", 1), b = dev.new_signal("b");
  HwQueue q;
  HwQueue::Cmd w, s;
  q.wait(*a, 1, &w).signal(*b, 10, &s);
  q.submit(dev);
  b->wait(10);
  q.patch_value(w, 2);
  q.patch_value(s, 20);
  q.submit(dev);
  if (c.runs("queue/host_wait")) {  // where a queue's wait holds back what follows it
    CONF_EXPECT_THROW(b->wait(20, 30ms), hcq::TimeoutError);
    CONF_EXPECT_EQ(b->value(), 10u) << "the patched wait should hold the signal back";
  }
  a->set(2);
  b->wait(20);
  CONF_EXPECT_EQ(b->value(), 20u);
  CONF_EXPECT_THROW(q.patch_value(HwQueue::Cmd{99}, 1), hcq::Error);
}

void patch_args(Context& c) {  // a recorded kernel's buffer and variable
  hcq::Device& dev = c.dev();
  Buffer a = ints(dev, 512, -1), b = ints(dev, 512, -1);
  HwQueue q;
  HwQueue::Cmd exec;
  q.exec(*c.kernels().fill, {{a.addr}, {7}}, {512}, {}, &exec);
  dev.timeline().wait(q.submit(dev));
  q.patch_buf(exec, 0, b.addr);
  q.patch_var(exec, 0, 9);
  uint64_t v = q.submit(dev);
  dev.timeline().wait(v);
  std::vector<int> ga = read_ints(dev, a), gb = read_ints(dev, b);
  release(dev, a, v);
  release(dev, b, v);
  for (int i = 0; i < 512; ++i) {
    CONF_EXPECT_EQ(ga[size_t(i)], 7 + i) << "the first submission's buffer at " << i;
    CONF_EXPECT_EQ(gb[size_t(i)], 9 + i) << "the patched-in buffer at " << i;
  }
  CONF_EXPECT_THROW(q.patch_var(exec, 1, 0), hcq::Error);  // cts_fill has one variable
}

void timestamps(Context& c) {  // monotonic, inside the host's window
  hcq::Device& dev = c.dev();
  auto t1 = dev.new_signal("t1"), t2 = dev.new_signal("t2"), done = dev.new_signal("done");
  const uint64_t start = hcq::now_ns();
  HwQueue().timestamp(*t1).exec(*c.kernels().empty, {}, {1}).timestamp(*t2).signal(*done, 1).submit(dev);
  done->wait(1);
  const uint64_t end = hcq::now_ns();
  CONF_EXPECT(start <= t1->timestamp_ns() && t1->timestamp_ns() <= t2->timestamp_ns() &&
              t2->timestamp_ns() <= done->timestamp_ns() && done->timestamp_ns() <= end)
      << "host " << start << ", t1 " << t1->timestamp_ns() << ", t2 " << t2->timestamp_ns() << ", done "
      << done->timestamp_ns() << ", host " << end;
  CONF_EXPECT_EQ(t1->value(), 0u) << "a timestamp leaves the value alone";
}

// Completions apply in record order: a timestamp recorded after a signal's write is the time the signal
// keeps, and it is no earlier than a signal written between the two.
void timestamp_after_signal(Context& c) {
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  auto s = dev.new_signal("s"), mid = dev.new_signal("mid"), done = dev.new_signal("done");
  HwQueue()
      .signal(*s, 1)
      .exec(*k.empty, {}, {1})
      .signal(*mid, 1)
      .exec(*k.empty, {}, {1})
      .timestamp(*s)
      .signal(*done, 1)
      .submit(dev);
  done->wait(1);
  CONF_EXPECT_EQ(s->value(), 1u);
  CONF_EXPECT(s->timestamp_ns() >= mid->timestamp_ns() && s->timestamp_ns() <= done->timestamp_ns())
      << "s " << s->timestamp_ns() << ", mid " << mid->timestamp_ns() << ", done " << done->timestamp_ns();
}

void barrier(Context& c) {  // a memory barrier orders two kernels
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  Buffer a = ints(dev, 2048, 0), b = ints(dev, 2048, 0);
  uint64_t v = HwQueue()
                   .exec(*k.fill, {{a.addr}, {3}}, {2048})
                   .memory_barrier()
                   .exec(*k.add, {{b.addr, a.addr}, {1}}, {2048})
                   .submit(dev);
  dev.timeline().wait(v);
  std::vector<int> got = read_ints(dev, b);
  release(dev, a, v);
  release(dev, b, v);
  for (int i = 0; i < 2048; ++i) CONF_EXPECT_EQ(got[size_t(i)], 4 + i) << "the second kernel at " << i;
}

void values_past_2pow32(Context& c) {
  hcq::Device& dev = c.dev();
  constexpr uint64_t k32 = uint64_t(1) << 32;
  auto s = dev.new_signal("big", k32 - 2), out = dev.new_signal("out");
  HwQueue()
      .signal(*s, k32 - 1)
      .signal(*s, k32)
      .wait(*s, k32)
      .signal(*s, k32 + 5)
      .wait(*s, k32 + 5)
      .signal(*out, 3 * k32)
      .submit(dev);
  out->wait(3 * k32);
  CONF_EXPECT_EQ(s->value(), k32 + 5) << "nothing may truncate to 32 bits";
  CONF_EXPECT_EQ(out->value(), 3 * k32);
  s->set(2 * k32);
  s->wait(2 * k32);
  CONF_EXPECT_THROW(s->set(k32), hcq::Error);  // a timeline never goes back
}

// Four threads submit at once, two on each kind of queue: no signal is lost, every submission gets its
// own timeline value.
void concurrent_submitters(Context& c) {
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  constexpr int kThreads = 4, kSubmits = 250;
  const uint64_t before = dev.timeline_value();
  std::vector<std::unique_ptr<hcq::Signal>> sigs;
  for (int t = 0; t < kThreads; ++t) sigs.push_back(dev.new_signal("thread" + std::to_string(t)));
  std::vector<std::vector<uint64_t>> values(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        HwQueue q(t % 2 ? QueueKind::Copy : QueueKind::Compute);
        HwQueue::Cmd sig;
        if (t % 2 == 0) q.exec(*k.empty, {}, {1});
        q.signal(*sigs[size_t(t)], 0, &sig);
        for (uint64_t i = 1; i <= kSubmits; ++i) {
          q.patch_value(sig, i);
          values[size_t(t)].push_back(q.submit(dev));
        }
      } catch (const std::exception& e) { errors[size_t(t)] = e.what(); }
    });
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) CONF_EXPECT(e.empty()) << "a submitting thread failed: " << e;
  dev.synchronize();
  std::set<uint64_t> all;
  for (int t = 0; t < kThreads; ++t) {
    CONF_EXPECT_EQ(sigs[size_t(t)]->value(), uint64_t(kSubmits)) << "thread " << t;
    all.insert(values[size_t(t)].begin(), values[size_t(t)].end());
  }
  CONF_EXPECT_EQ(all.size(), size_t(kThreads * kSubmits)) << "distinct timeline values";
  CONF_EXPECT_EQ(dev.timeline_value(), before + kThreads * kSubmits);
  CONF_EXPECT_EQ(dev.timeline().value(), dev.timeline_value()) << "the timeline after synchronize";
}

// A wait on a signal that fails after the submission was queued fails the submission; the failure stays
// with it.
void failed_wait_fails_submission(Context& c) {
  hcq::Device& dev = c.dev();
  auto bad = dev.new_signal("bad"), out = dev.new_signal("out"), later = dev.new_signal("later");
  HwQueue().wait(*bad, 1).signal(*out, 1).submit(dev);
  bad->fail("[test] injected fault");
  CONF_EXPECT_EQ(fault_of(*out, 1), "[test] injected fault");
  dev.synchronize();  // the skipped submission still retires
  HwQueue().signal(*later, 1).submit(dev);
  later->wait(1);
}

// The same with the failure already there at submit: every device, NULL included, skips the rest.
void failed_signal(Context& c) {
  hcq::Device& dev = c.dev();
  auto bad = dev.new_signal("bad"), out = dev.new_signal("out");
  bad->fail("[test] injected fault");
  HwQueue().wait(*bad, 1).signal(*out, 1).submit(dev);
  CONF_EXPECT_EQ(fault_of(*out, 1), "[test] injected fault");
  dev.synchronize();
}

// The error names the call; the message is in brackets.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const hcq::Error& e) { return e.what(); }
  return "(no error)";
}

void recording_errors(Context& c) {
  const Kernels& k = c.kernels();
  const std::string copy_exec = error_of([&] { HwQueue(QueueKind::Copy).exec(*k.empty, {}, {1}); });
  CONF_EXPECT(copy_exec.find("[exec]") != std::string::npos) << copy_exec;
  CONF_EXPECT_EQ(
      error_of([&] {
        HwQueue().exec(*k.fill, {{1, 2}, {0}}, {1});
      }),
      std::string("[exec] kernel 'cts_fill' takes 1 buffers and 1 vars, got 2 buffers and 1 vars"));
  CONF_EXPECT_THROW(HwQueue().exec(*k.empty, {}, {0, 1, 1}), hcq::Error);
  CONF_EXPECT_THROW(HwQueue(QueueKind::Compute, 7).submit(c.dev()), hcq::Error);
}

void profile_exec_copy(Context& c) {
  hcq::Device& dev = c.dev();
  const Kernels& k = c.kernels();
  Buffer a = dev.allocator().alloc(64), b = dev.allocator().alloc(64), d = dev.allocator().alloc(64);
  dev.take_profile();
  dev.set_profiling(true);
  const uint64_t start = hcq::now_ns();
  HwQueue::Cmd exec, copy, copy2;
  HwQueue q;
  q.memory_barrier().exec(*k.empty, {}, {1}, {}, &exec).copy(b.addr, a.addr, 64, &copy);
  const uint64_t v1 = q.submit(dev);
  HwQueue q2(QueueKind::Copy);
  q2.memory_barrier().memory_barrier().copy(d.addr, a.addr, 32, &copy2);
  const uint64_t v2 = q2.submit(dev);  // runs alongside: touches no b
  dev.synchronize();
  const uint64_t end = hcq::now_ns();
  dev.set_profiling(false);
  auto recs = dev.take_profile();
  for (const Buffer& x : {a, b, d}) dev.allocator().free(x);
  CONF_EXPECT_EQ(recs.size(), 3u);
  std::multiset<std::string> seen;
  for (const auto& r : recs) {
    const std::string what = r.queue + " " + r.name;
    seen.insert(what + " " + std::to_string(r.bytes));
    CONF_EXPECT_EQ(r.device, dev.name()) << what;
    CONF_EXPECT(start <= r.start_ns && r.start_ns <= r.end_ns && r.end_ns <= end)
        << what << ": host " << start << ", start " << r.start_ns << ", end " << r.end_ns << ", host " << end;
    // Where each came from: its submission's timeline value and its packet's offset in that HwQueue.
    const bool second = r.queue == "copy:0";
    CONF_EXPECT_EQ(r.submission, second ? v2 : v1) << what;
    CONF_EXPECT_EQ(r.at, second ? copy2.at : r.name == "copy" ? copy.at : exec.at) << what;
    CONF_EXPECT(r.transfer == (r.name == "copy" ? hcq::Transfer::DeviceToDevice : hcq::Transfer::None))
        << what;
  }
  CONF_EXPECT(seen ==
              (std::multiset<std::string>{"compute:0 cts_empty 0", "compute:0 copy 64", "copy:0 copy 32"}))
      << "records: " << [&] {
           std::string s;
           for (const std::string& x : seen) s += "'" + x + "' ";
           return s;
         }();
}

void profile_host_transfers(Context& c) {
  hcq::Device& dev = c.dev();
  Buffer a = dev.allocator().alloc(64);
  std::vector<std::byte> host(64);
  dev.take_profile();
  dev.set_profiling(true);
  dev.allocator().copyin(a, host.data(), 48);
  dev.allocator().copyout(host.data(), a, 16, 8);
  dev.set_profiling(false);
  auto recs = dev.take_profile();
  dev.allocator().free(a);
  CONF_EXPECT_EQ(recs.size(), 2u);
  CONF_EXPECT(recs[0].transfer == hcq::Transfer::HostToDevice && recs[0].bytes == 48u)
      << "the copyin's record: " << recs[0].bytes << " bytes";
  CONF_EXPECT(recs[1].transfer == hcq::Transfer::DeviceToHost && recs[1].bytes == 16u)
      << "the copyout's record: " << recs[1].bytes << " bytes";
  for (const auto& r : recs) {
    CONF_EXPECT_EQ(r.queue, std::string("transfer"));
    CONF_EXPECT_EQ(r.submission, 0u) << "not a submitted command";
    CONF_EXPECT(r.start_ns <= r.end_ns) << r.start_ns << " > " << r.end_ns;
  }
}

// Signals on the host side.
void signal_host_set(Context& c) {  // a host set wakes a waiter; older values count as reached
  auto s = c.dev().new_signal("cts", 1);
  std::thread setter([&] {
    std::this_thread::sleep_for(5ms);
    s->set(3);
  });
  s->wait(3);
  setter.join();
  CONF_EXPECT_EQ(s->value(), 3u);
  CONF_EXPECT_EQ(s->timestamp_ns(), 0u) << "host writes leave the device timestamp alone";
  s->wait(2);
}

void timeout_error(Context& c) {  // a timed-out wait names the device, the signal and the values
  auto s = c.dev().new_signal("cts-timeout", 3);
  std::string m = "(no timeout)";
  try {
    s->wait(5, 20ms);
  } catch (const hcq::TimeoutError& e) { m = e.what(); }
  const std::string want =
      "[wait] " + c.dev().name() + ": signal 'cts-timeout' did not reach 5 within 20 ms (value 3)";
  CONF_EXPECT_EQ(m.substr(0, want.size()), want) << m;
  CONF_EXPECT(!s->failed()) << "a timeout alone fails nothing";
  CONF_EXPECT_THROW(s->wait(5, 1ms), sluice::Error);  // queue errors are sluice::Errors like any other
}

void signal_failure_sticks(Context& c) {  // a failed signal rethrows on every later wait; the first wins
  auto s = c.dev().new_signal("cts-fail", 1);
  std::string woken;
  std::thread waiter([&] { woken = fault_of(*s, 2); });  // woken by fail()
  std::this_thread::sleep_for(5ms);
  s->fail("[test] device fault");
  waiter.join();
  CONF_EXPECT_EQ(woken, std::string("[test] device fault")) << "the waiter woken by fail()";
  for (int i = 0; i < 2; ++i)
    CONF_EXPECT_EQ(fault_of(*s, 1), std::string("[test] device fault")) << "wait " << i;
  s->fail("[test] second");
  CONF_EXPECT_EQ(s->error(), std::string("[test] device fault"));
}

}  // namespace

std::vector<Check> queue_checks() {
  return {
      {"queue/signal_compute", signal_compute},
      {"queue/signal_copy", signal_copy},
      {"queue/wait_preset_signal", wait_preset_signal},
      {"queue/host_wait", host_wait},
      {"queue/queues_finish_out_of_order", queues_finish_out_of_order},
      {"queue/exec", exec},
      {"queue/resubmit", resubmit},
      {"queue/patch_launch_size", patch_launch_size},
      {"queue/patch_values", patch_values},
      {"queue/patch_args", patch_args},
      {"queue/timestamps", timestamps},
      {"queue/timestamp_after_signal", timestamp_after_signal},
      {"queue/barrier", barrier},
      {"queue/values_past_2pow32", values_past_2pow32},
      {"queue/concurrent_submitters", concurrent_submitters},
      {"queue/failed_wait_fails_submission", failed_wait_fails_submission},
      {"queue/failed_signal", failed_signal},
      {"queue/recording_errors", recording_errors},
      {"queue/profile_exec_copy", profile_exec_copy},
      {"queue/profile_host_transfers", profile_host_transfers},
      {"queue/signal_host_set", signal_host_set},
      {"queue/timeout_error", timeout_error},
      {"queue/signal_failure_sticks", signal_failure_sticks},
  };
}

}  // namespace sluice::conformance
