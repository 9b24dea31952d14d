#pragma once
// Counter: a 64-bit value that only grows, with a blocking wait for `value >= target`. It is the
// primitive under Signal, the CPU device's ring pointers and its worker pool.
//
// Waits spin for a short while first (a device that answers within microseconds is the common case and a
// sleep/wake costs tens of microseconds), then sleep, so an idle waiter costs no CPU. Every member may be
// called from any thread. Writers keep the value monotonic: store() with a smaller value is a caller bug;
// store_max() is safe against concurrent writers.
//
// A writer touches nothing of the Counter after it published the value: a waiter that sees the value may
// destroy the object at once (a host waits on a signal, then frees it, while the device thread is still
// in its write). Sleepers therefore park in a process-wide table keyed by the counter's address, as
// std::atomic::wait does, not in the object.
#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice::hcq {

// The host clock every timestamp in hcq uses (steady, nanoseconds).
using Clock = std::chrono::steady_clock;
inline uint64_t now_ns() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

class Counter {
 public:
  explicit Counter(uint64_t initial = 0) : value_(initial) {}
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  uint64_t value() const { return value_.load(std::memory_order_acquire); }
  // Publishes v (release: writes before it are visible to a waiter that sees v) and wakes sleepers.
  void store(uint64_t v);
  // Raises the value to max(value, v); returns whether it grew.
  bool store_max(uint64_t v);
  // Adds d and returns the new value.
  uint64_t add(uint64_t d);
  // Wakes every sleeping waiter so that it re-reads its abort flag (set the flag first). Like the
  // writers, it does not touch the object.
  void wake_all() const;

  // Flags that end a wait early (either one set); null: none.
  struct Aborts {
    Aborts(const std::atomic<bool>* first = nullptr, const std::atomic<bool>* second = nullptr)
        : a(first), b(second) {}
    bool any() const {
      return (a && a->load(std::memory_order_seq_cst)) || (b && b->load(std::memory_order_seq_cst));
    }
    const std::atomic<bool>*a, *b;
  };
  // Blocks until value() >= target, an abort flag is set, or `deadline` passes (Clock::time_point::max()
  // waits forever). Returns value() >= target. `spin`: false sleeps at once (a thread whose spinning
  // would take a core from the driver threads that do the work it waits for).
  bool wait_until(uint64_t target, Clock::time_point deadline, Aborts abort = {}, bool spin = true) const;

 private:
  std::atomic<uint64_t> value_;
};

}  // namespace sluice::hcq
