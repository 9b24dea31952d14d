#pragma once
// hcq::Signal — a 64-bit timeline value that only grows (DESIGN.md §4).
//
// Semantics
// - value() is the last value written, by the host (set) or by a device queue (a `signal` command).
//   Values are 64-bit end to end: nothing wraps at 2^32. A value never goes back: a device write of a
//   smaller value is ignored (resubmitting an unpatched queue is harmless), a host set() of a smaller
//   value is an error.
// - timestamp_ns() is the host-clock time (hcq::now_ns) of the last device-side write: a `signal`
//   command or a `timestamp` command. Host set() does not touch it.
// - A Signal lives in host memory, so every device's queues can wait on and write any Signal: device B's
//   queue may wait on a signal that device A's queue signals.
// - fail(message) stores an error; from then on every wait() throws FaultError(message) whatever the
//   value, and a device queue that waits on it fails the rest of its submission (see queue.h). The first
//   failure wins; a failed signal stays failed.
//
// Ownership and threading
// - Signals are neither copied nor moved: queues refer to them by address. A signal must outlive every
//   submitted command that refers to it. Create device signals with Device::new_signal (they then name
//   their device in errors and a timed-out wait asks that device what is holding it up), or construct
//   one directly for a host-only signal.
// - Every member is thread-safe; any number of host threads and device queues may use a signal at once.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "hcq/counter.h"

namespace sluice::hcq {

class Device;

// What a wait uses when the caller gives no timeout: long enough for any sane submission, short enough
// that a hang surfaces as an error instead of a frozen process. Two minutes, because software devices
// build each kernel the first time it runs, inside the wait: a cold PP-OCRv4 det on lavapipe or PoCL
// (about a hundred kernels, one submission) takes 30 to 40 s.
inline constexpr std::chrono::milliseconds kDefaultTimeout{120'000};

class Signal {
 public:
  // `owner` (may be null) is the device named in errors and asked to explain a timed-out wait.
  explicit Signal(std::string name, uint64_t initial = 0, Device* owner = nullptr);
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  const std::string& name() const { return name_; }
  Device* owner() const { return owner_; }

  // The current value (acquire: memory written before the device signalled it is visible).
  uint64_t value() const { return value_.value(); }
  // Host-clock time of the last device-side write; 0 before the first.
  uint64_t timestamp_ns() const { return timestamp_.load(std::memory_order_acquire); }

  // Host write. Throws Error `[set] ...` if v is below the current value.
  void set(uint64_t v);

  // Blocks until value() >= v. Throws FaultError with the stored message if the signal failed (before
  // or during the wait), and TimeoutError if `timeout` passes first: `[wait] <device>: signal '<name>'
  // did not reach <v> within <t> ms (value <current>)`, followed by the owner's account of what its
  // queues are doing. If that account finds a kernel running past the owner's hang timeout, the owner
  // resets the stuck queue and fails the signals its pending work would have written (device.h).
  void wait(uint64_t v, std::chrono::nanoseconds timeout = kDefaultTimeout) const;

  // Marks the signal failed with `message` (kept as is: give it the "[func] ..." form) and wakes all
  // waiters. Later calls keep the first message.
  void fail(const std::string& message);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::string error() const;  // the stored message; empty unless failed()

  // --- For device queues (backends) ---
  // A device-side write: stores the timestamp, then raises the value to max(value, v).
  void device_write(uint64_t v, uint64_t timestamp_ns);
  // A `timestamp` command: stores the timestamp without touching the value.
  void device_timestamp(uint64_t timestamp_ns) { timestamp_.store(timestamp_ns, std::memory_order_release); }
  // The non-throwing wait a command processor uses: true once value() >= v or the signal failed, false
  // when `deadline` passes.
  bool wait_until(uint64_t v, Clock::time_point deadline) const;

 private:
  std::string name_;
  Device* owner_;
  Counter value_;
  std::atomic<uint64_t> timestamp_{0};
  std::atomic<bool> failed_{false};
  mutable std::mutex error_mu_;
  std::string error_;
};

}  // namespace sluice::hcq
