#include "hcq/counter.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace sluice::hcq {
namespace {
// How long a waiter spins before it sleeps: long enough to cover a kernel launch round trip on a warm
// device, short enough that an idle queue gives its core back quickly.
constexpr auto kSpin = std::chrono::microseconds(50);
constexpr int kPureSpins = 256;  // about 5-10 us of pause instructions

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Where sleepers park: counters hash to buckets; a bucket's sleepers re-check their own counter on every
// wake, so sharing a bucket costs a spurious wake-up. 1024 buckets: with 64, an idle queue's doorbell
// shared a bucket with a busy queue's counters in a third of processes, and was woken tens of thousands of
// times a second (a replayed graph then cost 0.8 us per kernel instead of 0.14).
struct alignas(64) Bucket {
  std::atomic<uint32_t> sleepers{0};
  std::mutex mu;
  std::condition_variable cv;
};

// Never destroyed: threads may still sleep here while static destructors run at exit (a device held in
// a static), and destroying a condition variable with sleepers hangs.
Bucket& bucket(const void* p) {
  static Bucket* table = new Bucket[1024];
  return table[(uintptr_t(p) * 0x9e3779b97f4a7c15ull) >> 54];
}

// Sleepers and writers follow the Dekker pattern: a writer publishes the value and then reads the
// bucket's sleeper count; a sleeper announces itself and then reads the value under the bucket's lock.
// With both sides sequentially consistent, either the writer sees the sleeper (and notifies under the
// lock) or the sleeper sees the new value, so no wake-up is lost.
void notify(const void* p) {
  Bucket& b = bucket(p);
  if (b.sleepers.load(std::memory_order_seq_cst) != 0) {
    std::lock_guard lk(b.mu);
    b.cv.notify_all();
  }
}
}  // namespace

void Counter::store(uint64_t v) {
  value_.store(v, std::memory_order_seq_cst);
  notify(this);
}

bool Counter::store_max(uint64_t v) {
  uint64_t cur = value_.load(std::memory_order_relaxed);
  while (cur < v && !value_.compare_exchange_weak(cur, v, std::memory_order_seq_cst)) {}
  if (cur >= v) return false;
  notify(this);
  return true;
}

uint64_t Counter::add(uint64_t d) {
  uint64_t v = value_.fetch_add(d, std::memory_order_seq_cst) + d;
  notify(this);
  return v;
}

// The flag set first (sequentially consistent) is what notify() needs of a value: a bucket without
// sleepers costs no lock (a CL queue offers a held wait again for every signal it records).
void Counter::wake_all() const { notify(this); }

bool Counter::wait_until(uint64_t target, Clock::time_point deadline, Aborts abort, bool spin) const {
  auto done = [&] { return value_.load(std::memory_order_seq_cst) >= target || abort.any(); };
  if (done()) return value() >= target;
  const auto spin_end = std::min(Clock::now() + kSpin, deadline);
  for (int i = 1; spin; ++i) {
    // Past the first few microseconds, yield between looks: when threads outnumber cores, the thread
    // that will write the value may be waiting for this very core.
    if (i < kPureSpins) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
    if (done()) return value() >= target;
    if (i % 64 == 0 && Clock::now() >= spin_end) break;
  }
  Bucket& b = bucket(this);
  b.sleepers.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock lk(b.mu);
    while (!done()) {
      // wait_until(max) would overflow converting the deadline, so "forever" waits without one.
      if (deadline == Clock::time_point::max()) {
        b.cv.wait(lk);
      } else if (b.cv.wait_until(lk, deadline) == std::cv_status::timeout) {
        break;
      }
    }
  }
  b.sleepers.fetch_sub(1, std::memory_order_seq_cst);
  return value() >= target;
}

}  // namespace sluice::hcq
