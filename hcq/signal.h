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
// - Signals are neither copied nor moved: packets name them by address. A signal must be alive when a
//   submission that names it is submitted. Every backend's queues keep a SignalRef to it, never its
//   address, past the submit call, so it may be destroyed while that work is pending (a caller that gave
//   up after a timed-out wait): a pending write to it lands in state nobody reads and is dropped, and a
//   pending wait on it waits on for a value it can no longer get (the device's destructor fails it,
//   device.h). Create device signals with Device::new_signal (they then name their device in errors and a
//   timed-out wait asks that device what is holding it up), or construct one directly for a host-only
//   signal.
// - Every member is thread-safe; any number of host threads and device queues may use a signal at once.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hcq/counter.h"

namespace sluice::hcq {

class Device;

// How long a wait without a timeout lets nothing advance before it gives up (device.h, "Hangs and
// faults"): long enough for any sane submission, short enough that a deadlock surfaces as an error
// instead of a frozen process. Two minutes, because software devices build each kernel the first time
// it runs, inside the wait: a cold PP-OCRv4 det on lavapipe or PoCL (about a hundred kernels, one
// submission) takes 30 to 40 s.
inline constexpr std::chrono::milliseconds kDefaultTimeout{120'000};

class Signal;

// A device queue's reference to a signal: a queue that keeps a signal past the submit call (a command
// processed later, a write applied once the hardware finished) keeps one of these rather than the
// Signal's address. It shares the signal's state, which stays alive while any reference does, so the
// Signal itself may be destroyed meanwhile (see Ownership above): writes through the reference are then
// dropped. Cheap to copy (one reference count); thread-safe as Signal.
class SignalRef {
 public:
  SignalRef() = default;
  explicit operator bool() const { return state_ != nullptr; }
  bool refers_to(const Signal& s) const;
  // Names the signal: equal for references to the same one, and not reused while a reference lives (a
  // Signal's address may be, once it is gone), so a queue can key what it tracks per signal by it.
  const void* id() const { return state_.get(); }

  const std::string& name() const;
  uint64_t value() const;
  bool failed() const;
  std::string error() const;
  // As Signal's members of the same names.
  void device_write(uint64_t v, uint64_t timestamp_ns) const;
  void device_timestamp(uint64_t timestamp_ns) const;
  void fail(const std::string& message) const;
  // Also returns early (false) once `*abort` is set; wake() makes a sleeping waiter look at it. `spin`:
  // as Counter::wait_until's.
  bool wait_until(uint64_t v, Clock::time_point deadline, const std::atomic<bool>* abort = nullptr,
                  bool spin = true) const;
  void wake() const;

 private:
  friend class Signal;
  struct State;
  std::shared_ptr<State> state_;
};

class Signal {
 public:
  // `owner` (may be null) is the device named in errors and asked to explain a timed-out wait.
  explicit Signal(std::string name, uint64_t initial = 0, Device* owner = nullptr);
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;

  const std::string& name() const { return ref_.name(); }
  Device* owner() const { return owner_; }

  // The current value (acquire: memory written before the device signalled it is visible).
  uint64_t value() const { return ref_.value(); }
  // Host-clock time of the last device-side write; 0 before the first.
  uint64_t timestamp_ns() const;

  // Host write. Throws Error `[set] ...` if v is below the current value.
  void set(uint64_t v);

  // Blocks until value() >= v. Throws FaultError with the stored message if the signal failed (before
  // or during the wait), and TimeoutError if `timeout` passes first: `[wait] <device>: signal '<name>'
  // did not reach <v> within <t> ms (value <current>)`, followed by the owner's account of what its
  // queues are doing. If that account finds a kernel stuck past the owner's hang timeout, the owner
  // resets the stuck queue and fails the signals its pending work would have written (device.h).
  void wait(uint64_t v, std::chrono::nanoseconds timeout) const;
  // Without a timeout: waits as long as the owner's work advances, asking the owner to explain the stall
  // after every slice; FaultError once the owner declares the work hung, TimeoutError once nothing has
  // advanced for max(kDefaultTimeout, the owner's hang timeout) (device.h, "Hangs and faults"). A signal
  // with no owner waits up to kDefaultTimeout.
  void wait(uint64_t v) const;

  // Marks the signal failed with `message` (kept as is: give it the "[func] ..." form) and wakes all
  // waiters. Later calls keep the first message.
  void fail(const std::string& message) { ref_.fail(message); }
  bool failed() const { return ref_.failed(); }
  std::string error() const { return ref_.error(); }  // the stored message; empty unless failed()

  // --- For device queues (backends) ---
  // A reference that outlives this Signal (SignalRef above). Take it while the signal is alive: at submit.
  const SignalRef& ref() const { return ref_; }
  // A device-side write: stores the timestamp, then raises the value to max(value, v).
  void device_write(uint64_t v, uint64_t timestamp_ns) { ref_.device_write(v, timestamp_ns); }
  // A `timestamp` command: stores the timestamp without touching the value.
  void device_timestamp(uint64_t timestamp_ns) { ref_.device_timestamp(timestamp_ns); }
  // The non-throwing wait a command processor uses: true once value() >= v or the signal failed, false
  // when `deadline` passes.
  bool wait_until(uint64_t v, Clock::time_point deadline) const { return ref_.wait_until(v, deadline); }

 private:
  Device* owner_;
  SignalRef ref_;
};

// The signals a submission's packets name (wait, signal and timestamp packets, hcq/queue.h), referenced
// at submit, when the caller guarantees them alive; a queue that processes the packets later reads each
// one's signal through at(), never through the address in the packet. Not thread-safe (one per
// submission, used by the thread processing it).
class SubmissionSignals {
 public:
  SubmissionSignals() = default;
  explicit SubmissionSignals(std::span<const uint64_t> words);
  // A view of references kept elsewhere: the packet at offset o names slots[(base + o) / 2]
  // (submission_ring.h keeps them beside its packets).
  SubmissionSignals(std::span<const uint64_t> words, const SignalRef* slots, uint64_t base)
      : words_(words), slots_(slots), base_(base) {}
  // The packets' Signals themselves, for a submission processed within the submit call (while the
  // caller keeps them alive): nothing is referenced or allocated; whoever keeps a signal past the call
  // copies its SignalRef.
  static SubmissionSignals live(std::span<const uint64_t> words) {
    SubmissionSignals s;
    s.words_ = words;
    s.live_ = true;
    return s;
  }
  // The signal of the packet at word `offset`; SLUICE_ASSERTs that it names one.
  const SignalRef& at(size_t offset) const;
  // Every signal a `signal` packet at or after word `offset` names (what a skipped rest would write).
  std::vector<SignalRef> written_from(size_t offset) const;

 private:
  struct Entry {
    size_t at;   // packet offset
    bool write;  // a `signal` packet
    SignalRef ref;
  };
  std::vector<Entry> refs_;          // by offset, ascending
  std::span<const uint64_t> words_;  // a view's
  const SignalRef* slots_ = nullptr;
  uint64_t base_ = 0;
  bool live_ = false;
};

}  // namespace sluice::hcq
