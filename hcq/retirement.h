#pragma once
// hcq::Retirement — a device timeline's in-order retirement (Device::retire). Submissions finish out of
// order across a device's queues; the timeline passes a value once every value up to it is done, and
// its writes (value and time) land in order, one per advance.
//
// The timeline's own value is the retired one, so a value that comes in order (the usual case) costs
// the timeline's write and nothing else: only the thread done with value v can move the timeline from
// v - 1, so it writes without any lock or claim. A value that comes early waits in a map under a lock,
// and whoever ends an advance retires what waits next in line. Neither side misses the other (a Dekker
// pair): the writer raises the value, then reads the count of waiting values; a waiting value is
// counted, then the timeline's value is read.
//
// A device that replaces its timeline (after a hang) starts the new one at every value handed out so
// far: the values up to it count as retired, and done() for any of them writes nothing.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

namespace sluice::hcq {

class Signal;

class alignas(64) Retirement {
 public:
  // Writes the signal `timeline` points to at the time (a device replaces its timeline).
  explicit Retirement(const std::atomic<Signal*>& timeline) : timeline_(timeline) {}

  // Submission `value` (each value once, from 1 on) is done at host-clock time `ns`. Thread-safe.
  void done(uint64_t value, uint64_t ns);

 private:
  void drain();

  const std::atomic<Signal*>& timeline_;
  std::atomic<uint64_t> waiting_{0};    // early_.size()
  std::mutex mu_;                       // early_, and advances out of it
  std::map<uint64_t, uint64_t> early_;  // done values past the next one: value -> time
};

}  // namespace sluice::hcq
