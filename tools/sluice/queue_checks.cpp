#include "tools/sluice/queue_checks.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>

#include "hcq/error.h"
#include "hcq/graph.h"
#include "runtime/device.h"

namespace sluice::cli {
namespace {

using namespace std::chrono_literals;
constexpr auto kWait = 10s;  // a check that takes longer than this has failed

#define EXPECT_THAT(cond, what)            \
  do {                                     \
    if (!(cond)) {                         \
      std::ostringstream os_;              \
      os_ << what;                         \
      throw std::runtime_error(os_.str()); \
    }                                      \
  } while (0)

// A device buffer freed when the check ends (after the device is done with it).
struct DevBuf {
  hcq::Device& dev;
  hcq::Buffer b;
  DevBuf(hcq::Device& d, uint64_t size) : dev(d), b(d.allocator().alloc(size)) {}
  ~DevBuf() {
    b.last_use = dev.timeline_value();
    dev.allocator().free(b);
  }
  void put(const std::vector<int32_t>& v) { dev.allocator().copyin(b, v.data(), v.size() * 4); }
  std::vector<int32_t> get(size_t n) {
    b.last_use = dev.timeline_value();
    std::vector<int32_t> v(n);
    dev.allocator().copyout(v.data(), b, n * 4);
    return v;
  }
};

std::vector<int32_t> iota(size_t n, int32_t base) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + int32_t(i);
  return v;
}
void expect_values(const std::vector<int32_t>& got, int32_t base, const char* what) {
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_THAT(got[i] == base + int32_t(i),
                what << ": element " << i << " is " << got[i] << ", expected " << base + int32_t(i));
}

void signal_on(CheckContext& c, hcq::QueueKind kind) {
  const uint32_t n = c.dev.queue_count(kind);
  if (n == 0) throw SkipCheck(std::string("the device has no ") + hcq::queue_kind_name(kind) + " queue");
  for (uint32_t i = 0; i < n; ++i) {
    auto s = c.dev.new_signal("check");
    hcq::HwQueue(kind, i).signal(*s, 7).submit(c.dev);
    s->wait(7, kWait);
    EXPECT_THAT(s->value() == 7, "queue " << i << ": signal is " << s->value() << ", expected 7");
  }
}
void signal_compute(CheckContext& c) { signal_on(c, hcq::QueueKind::Compute); }
void signal_copy(CheckContext& c) { signal_on(c, hcq::QueueKind::Copy); }

void host_wait(CheckContext& c) {
  auto a = c.dev.new_signal("gate"), b = c.dev.new_signal("after");
  hcq::HwQueue().wait(*a, 1).signal(*b, 1).submit(c.dev);
  std::this_thread::sleep_for(20ms);
  EXPECT_THAT(b->value() == 0, "the queue ran past a wait on a signal nobody raised");
  a->set(1);
  b->wait(1, kWait);
}

void exec(CheckContext& c) {
  const Add1Kernel& k = c.add1();
  DevBuf in(c.dev, k.n * 4), out(c.dev, k.n * 4);
  in.put(iota(k.n, 100));
  auto s = c.dev.new_signal("done");
  hcq::HwQueue()
      .exec(*k.program, k.args(out.b.addr, in.b.addr), k.global, k.local)
      .signal(*s, 1)
      .submit(c.dev);
  s->wait(1, kWait);
  expect_values(out.get(k.n), 101, "out = in + 1");
}

void resubmit(CheckContext& c) {
  const Add1Kernel& k = c.add1();
  DevBuf buf(c.dev, k.n * 4);
  buf.put(iota(k.n, 0));
  hcq::HwQueue q;
  q.exec(*k.program, k.args(buf.b.addr, buf.b.addr), k.global, k.local).memory_barrier();
  for (int i = 0; i < 3; ++i) q.submit(c.dev);
  c.dev.synchronize(kWait);
  expect_values(buf.get(k.n), 3, "three submissions of buf += 1");
}

void patch_value(CheckContext& c) {
  auto s = c.dev.new_signal("patched");
  hcq::HwQueue q;
  hcq::HwQueue::Cmd cmd;
  q.signal(*s, 1, &cmd);
  q.submit(c.dev);
  s->wait(1, kWait);
  q.patch_value(cmd, 5);
  q.submit(c.dev);
  s->wait(5, kWait);
  EXPECT_THAT(s->value() == 5, "patched signal value: got " << s->value() << ", expected 5");
}

void patch_buf(CheckContext& c) {
  const Add1Kernel& k = c.add1();
  DevBuf a(c.dev, k.n * 4), b(c.dev, k.n * 4);
  a.put(iota(k.n, 0));
  b.put(iota(k.n, 1000));
  hcq::HwQueue q;
  hcq::HwQueue::Cmd cmd;
  q.exec(*k.program, k.args(a.b.addr, a.b.addr), k.global, k.local, &cmd).memory_barrier();
  q.submit(c.dev);
  q.patch_buf(cmd, k.out_arg, b.b.addr);
  q.patch_buf(cmd, k.in_arg, b.b.addr);
  q.submit(c.dev);
  c.dev.synchronize(kWait);
  expect_values(a.get(k.n), 1, "the buffer of the first submission");
  expect_values(b.get(k.n), 1001, "the patched-in buffer");
}

void copy_bytes(CheckContext& c, uint64_t size, uint32_t pieces) {
  const bool copy_q = c.dev.queue_count(hcq::QueueKind::Copy) > 0;
  hcq::Buffer src = c.dev.allocator().alloc(size), dst = c.dev.allocator().alloc(size);
  std::vector<uint8_t> pat(size), got(size, 0);
  for (uint64_t i = 0; i < size; ++i) pat[i] = uint8_t(i * 131 + (i >> 13));
  c.dev.allocator().copyin(src, pat.data(), size);
  c.dev.allocator().copyin(dst, got.data(), size);
  auto s = c.dev.new_signal("copied");
  hcq::HwQueue q(copy_q ? hcq::QueueKind::Copy : hcq::QueueKind::Compute);
  const uint64_t step = size / pieces;
  for (uint32_t p = 0; p < pieces; ++p) q.copy(dst.addr + p * step, src.addr + p * step, step);
  src.last_use = dst.last_use = q.signal(*s, 1).submit(c.dev);
  s->wait(1, kWait);
  c.dev.allocator().copyout(got.data(), dst, size);
  c.dev.allocator().free(src);
  c.dev.allocator().free(dst);
  for (uint64_t i = 0; i < size; ++i)
    EXPECT_THAT(got[i] == pat[i],
                "byte " << i << " of " << size << " is " << int(got[i]) << ", expected " << int(pat[i]));
}
void copy_8b(CheckContext& c) { copy_bytes(c, 8, 1); }
void copy_64mib(CheckContext& c) { copy_bytes(c, 64 << 20, 1); }
void copy_256x1b(CheckContext& c) { copy_bytes(c, 256, 256); }

void timestamps(CheckContext& c) {
  const Add1Kernel& k = c.add1();
  DevBuf buf(c.dev, k.n * 4);
  buf.put(iota(k.n, 0));
  auto t0 = c.dev.new_signal("t0"), t1 = c.dev.new_signal("t1"), done = c.dev.new_signal("done");
  const uint64_t host0 = hcq::now_ns();
  hcq::HwQueue()
      .timestamp(*t0)
      .exec(*k.program, k.args(buf.b.addr, buf.b.addr), k.global, k.local)
      .timestamp(*t1)
      .signal(*done, 1)
      .submit(c.dev);
  done->wait(1, kWait);
  const uint64_t host1 = hcq::now_ns();
  EXPECT_THAT(
      t0->timestamp_ns() >= host0 && t0->timestamp_ns() <= t1->timestamp_ns() && t1->timestamp_ns() <= host1,
      "timestamps out of order: host " << host0 << ", t0 " << t0->timestamp_ns() << ", t1 "
                                       << t1->timestamp_ns() << ", host " << host1);
  EXPECT_THAT(t0->value() == 0, "a timestamp command changed the signal's value to " << t0->value());
}

void barrier(CheckContext& c) {
  const Add1Kernel& k = c.add1();
  DevBuf a(c.dev, k.n * 4), b(c.dev, k.n * 4), d(c.dev, k.n * 4);
  a.put(iota(k.n, 10));
  hcq::HwQueue()
      .exec(*k.program, k.args(b.b.addr, a.b.addr), k.global, k.local)
      .memory_barrier()
      .exec(*k.program, k.args(d.b.addr, b.b.addr), k.global, k.local)
      .memory_barrier()
      .submit(c.dev);
  c.dev.synchronize(kWait);
  expect_values(d.get(k.n), 12, "the second kernel after a barrier");
}

void rollover(CheckContext& c) {
  const uint64_t base = (uint64_t(1) << 32) - 2;
  auto s = c.dev.new_signal("wide", base);
  auto t = c.dev.new_signal("after");
  hcq::HwQueue().wait(*s, base).signal(*s, base + 3).signal(*t, base + 5).submit(c.dev);
  t->wait(base + 5, kWait);
  s->wait(base + 3, kWait);
  EXPECT_THAT(s->value() == base + 3 && t->value() == base + 5,
              "values past 2^32: got " << s->value() << " and " << t->value() << ", expected " << base + 3
                                       << " and " << base + 5);
}

void cross_device_wait(CheckContext& c) {
  std::string other_name = c.device + ":1";
  hcq::Device* other = nullptr;
  try {
    other = &open_device(other_name);
  } catch (const std::exception&) {
    if (c.device != "CPU") other = &open_device(other_name = "CPU");
  }
  if (!other || other == &c.dev) throw SkipCheck("no second device to wait across");
  auto gate = c.dev.new_signal("gate"), done = other->new_signal("done");
  hcq::HwQueue().wait(*gate, 1).signal(*done, 1).submit(*other);
  std::this_thread::sleep_for(10ms);
  EXPECT_THAT(done->value() == 0, other_name << " ran past a wait on " << c.device << "'s signal");
  hcq::HwQueue().signal(*gate, 1).submit(c.dev);
  done->wait(1, kWait);
}

void timeout_error(CheckContext& c) {
  auto s = c.dev.new_signal("never");
  try {
    s->wait(1, 20ms);
  } catch (const hcq::TimeoutError& e) {
    EXPECT_THAT(std::strstr(e.what(), "never") != nullptr,
                "the timeout message does not name the signal: " << e.what());
    return;
  }
  throw std::runtime_error("a wait for a value nobody writes returned instead of timing out");
}

void failed_signal(CheckContext& c) {
  auto a = c.dev.new_signal("faulty"), b = c.dev.new_signal("downstream");
  a->fail("[check] planted failure");
  hcq::HwQueue().wait(*a, 1).signal(*b, 1).submit(c.dev);
  try {
    b->wait(1, kWait);
  } catch (const hcq::FaultError& e) {
    EXPECT_THAT(std::strstr(e.what(), "planted failure") != nullptr,
                "the failure lost its message: " << e.what());
    return;
  }
  throw std::runtime_error("a queue that waited on a failed signal still signalled");
}

void concurrent_submitters(CheckContext& c) {
  constexpr int kThreads = 4, kEach = 100;
  std::vector<std::unique_ptr<hcq::Signal>> sigs;
  for (int t = 0; t < kThreads; ++t) sigs.push_back(c.dev.new_signal("thread" + std::to_string(t)));
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int i = 1; i <= kEach; ++i) hcq::HwQueue().signal(*sigs[size_t(t)], uint64_t(i)).submit(c.dev);
      } catch (...) { errors++; }
    });
  for (auto& th : threads) th.join();
  EXPECT_THAT(errors == 0, errors.load() << " submitting threads failed");
  c.dev.synchronize(kWait);
  for (auto& s : sigs)
    EXPECT_THAT(s->value() == kEach, s->name() << " is " << s->value() << ", expected " << kEach);
  EXPECT_THAT(
      c.dev.timeline().value() == c.dev.timeline_value(),
      "timeline " << c.dev.timeline().value() << " after synchronize, handed out " << c.dev.timeline_value());
}

void graph_replay(CheckContext& c) {
  const Add1Kernel& k = c.add1();
  DevBuf a(c.dev, k.n * 4), b(c.dev, k.n * 4);
  a.put(iota(k.n, 0));
  b.put(iota(k.n, 500));
  hcq::GraphExec e{k.program.get(), k.args(a.b.addr, a.b.addr), k.global, k.local};
  hcq::Graph g(c.dev, {e, e, e});
  g.replay();
  g.replay();
  for (uint32_t i : {k.out_arg, k.in_arg}) g.set_buf(1, i, b.b.addr);
  g.replay();
  c.dev.synchronize(kWait);
  expect_values(a.get(k.n), 8, "a after 3 replays of 3 increments, the third with item 1 patched away");
  expect_values(b.get(k.n), 501, "b after the patched replay");
}

}  // namespace

const Add1Kernel& CheckContext::add1() {
  if (!add1_) add1_ = std::make_unique<Add1Kernel>(make_add1_kernel(device, kAdd1Elements));
  return *add1_;
}

const std::vector<QueueCheck>& queue_checks() {
  static const std::vector<QueueCheck> checks = {
      {"queue/signal_compute", signal_compute},
      {"queue/signal_copy", signal_copy},
      {"queue/host_wait", host_wait},
      {"queue/exec", exec},
      {"queue/resubmit", resubmit},
      {"queue/patch_value", patch_value},
      {"queue/patch_buf", patch_buf},
      {"queue/copy_8B", copy_8b},
      {"queue/copy_64MiB", copy_64mib},
      {"queue/copy_256x1B", copy_256x1b},
      {"queue/timestamps", timestamps},
      {"queue/barrier", barrier},
      {"queue/rollover_2^32", rollover},
      {"queue/cross_device_wait", cross_device_wait},
      {"queue/timeout_error", timeout_error},
      {"queue/failed_signal", failed_signal},
      {"queue/concurrent_submitters", concurrent_submitters},
      {"queue/graph_replay", graph_replay},
  };
  return checks;
}

}  // namespace sluice::cli
