#pragma once
// hcq::SubmissionRing — the submissions a command processor's worker has yet to record
// (command_processor.h), as packet words in a ring of host memory.
//
// Why a ring: a submission crosses from the submitting thread to the worker as one run of packet words
// and a doorbell, with a reference to each signal its packets name in a slot beside the packet, so no
// allocation, lock or shared container changes hands (DESIGN.md §4: each cache line that does costs
// 150-300 ns on a small machine, more than recording a submission).
//
// Layout: each submission is a Begin packet (its timeline value, its graph, its length) followed by its
// packets, contiguous: a submission that would wrap is preceded by a Pad to the ring's end. One longer
// than half the ring goes beside it, in a heap copy the Begin packet points to. A packet that names a
// signal has two words at least, so slot `position / 2` is its own.
//
// Threading: one producer at a time (the device's submit lock), one consumer at a time (the worker, or a
// thread recording for it: the command processor's consume lock). What each side
// writes lives on cache lines of its own, and each keeps the other's last position it read, looking again
// only when that one says it must wait: a line that changes hands costs 100-300 ns on a small machine,
// more than the consumer takes to record a tiny kernel.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hcq/counter.h"
#include "hcq/signal.h"

namespace sluice::hcq {

class SubmissionRing {
 public:
  // `words`: a power of two; `who` names the queue in errors ("CPU compute:0"); `spin`: the consumer
  // spins a while before it sleeps (Counter::wait_until).
  SubmissionRing(uint64_t words, std::string who, bool spin);
  ~SubmissionRing();

  // --- Producer ---
  // Copies a submission in and rings the doorbell. Blocks while the ring is full; throws hcq::Error
  // `[submit] <who> was reset after a hang while this submission waited for room` once `abandoned` is
  // set meanwhile.
  void push(std::span<const uint64_t> words, uint64_t tv, uint64_t graph, const std::atomic<bool>& abandoned);
  // Every word pushed was given back: the consumer has finished everything.
  bool drained() const { return consumed_.value() == wp_.load(std::memory_order_acquire); }

  // --- Consumer ---
  struct Big {  // a submission beside the ring
    std::vector<uint64_t> words;
    SubmissionSignals signals;
  };
  struct Entry {
    std::span<const uint64_t> words;  // its packets
    SubmissionSignals signals;        // their signals, by packet offset
    uint64_t tv = 0, graph = 0;
    uint64_t begin = 0, end = 0;  // its positions in the ring
    size_t given = 0;             // its words before this packet offset were given back (give_back)
    std::unique_ptr<Big> big;
  };
  // The next submission, if one was pushed (never blocks); `accept`, if given, decides from its packets
  // and their signals whether it is taken (declined, it stays first in line, untouched). Pads are skipped.
  using Accept = std::function<bool(std::span<const uint64_t> words, const SubmissionSignals& signals)>;
  bool take(Entry& e, const Accept& accept = nullptr);
  // Blocks until something was pushed past the consumer's position: false once `abort` is set, or once
  // `stop` is and nothing was. Reads no consumer state but that position, so another thread may take()
  // meanwhile (command_processor.h: the consumer is whoever holds the processor's consume lock).
  bool wait(const std::atomic<bool>& stop, const std::atomic<bool>& abort) const;
  // Done with `e`: its slots are cleared, its words given back (at once when nothing followed it at the
  // doorbell's last reading, else every sixteenth of the ring: each give-back wakes a producer's bucket,
  // hcq/counter.cpp).
  void release(Entry& e);
  // Gives back the words before packet `offset` of `e` (before a wait that may block: a producer waiting
  // for room may be what would meet it).
  // The producer may overwrite them from then on: their slots are cleared now, and release() walks only
  // what follows.
  void give_back(Entry& e, size_t offset);
  // Gives back every word before the next submission (before the consumer waits with one declined: a
  // producer waiting for room may be what would let it go on).
  void give_back_read();
  // Wakes a consumer blocked in wait() and a producer waiting for room, to read their flags.
  void wake() const;
  // With no producer active and the consumer stopped: the signals the `signal` packets would have written
  // from position `from` (a submission's end, or 0 for the consumer's read position) to the end.
  std::vector<SignalRef> written_after(uint64_t from) const;

 private:
  // What lies at position p: a Pad, or a submission (in the ring from `base`, or a heap copy); `next`:
  // the position after it. The one reading of the ring's own packets.
  struct Slot {
    bool pad = false;
    Big* big = nullptr;
    std::span<const uint64_t> words;
    uint64_t tv = 0, graph = 0, base = 0, next = 0;
  };
  Slot slot(uint64_t p) const;
  void clear_slots(const Entry& e, size_t from, size_t to);
  bool has_room(uint64_t n);
  void reserve(uint64_t n, const std::atomic<bool>& abandoned);
  void publish(uint64_t pos);

  const uint64_t size_;
  const std::unique_ptr<uint64_t[]> ring_;
  const std::unique_ptr<SignalRef[]> slots_;
  const std::string who_;
  const bool spin_;
  // The producer's: its position, in words since the start (never wraps), and consumed_ as last read.
  alignas(64) std::atomic<uint64_t> wp_{0};
  uint64_t freed_ = 0;
  alignas(64) Counter written_;   // the doorbell: words published to the consumer
  alignas(64) Counter consumed_;  // words the consumer gave back
  // The consumer's: its position (atomic for wait() and for written_after() after an abandon),
  // consumed_'s value, and the doorbell as last read.
  alignas(64) std::atomic<uint64_t> rp_{0};
  uint64_t published_ = 0, rung_ = 0;
};

}  // namespace sluice::hcq
