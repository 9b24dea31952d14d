#pragma once
// One hardware queue of the CPU device: a ring of binary command packets in host memory and the
// command-processor (CP) thread that consumes them; a compute queue also owns a pool of worker threads
// that run kernels with it.
//
// The ring holds the packets of hcq/queue.h, copied as recorded, plus two packets of its own: Pad (fills
// the ring's end so that no packet wraps) and End (ends a submission: its profile records go out, then
// QueueConfig::retire says its timeline value is done; hcq::Device::retire moves the timeline over the
// values done in order, so a queue never waits for another's earlier submission). The producer writes
// packets at its write pointer and rings the doorbell (publishes the pointer); the CP reads up to the
// doorbell and publishes its read pointer when it gets there, every sixteenth of the ring, and before a
// packet that may take long (queue.cpp: publish). The producer blocks only when the ring is full; the CP
// spins briefly, then sleeps, when it is empty.
//
// Kernels: an exec runs on min(pool size, work-groups) cores at once, the CP being core 0 (program.h has
// the ABI), except a launch that the program's last run predicts under 20 us of CPU time: that one runs
// whole on the CP, in one call, since waking a worker and waiting for it would cost more. Each core runs its
// share of the grid in parts and counts them, so that a wait can tell a slow kernel (parts still complete)
// from a stuck one (status()). A wait on a failed signal makes the CP skip the rest of its submission and
// fail the signals it would have written, with that signal's error.
//
// Signal lifetime (hcq/signal.h): push() takes a SignalRef to the signal of every wait, signal and
// timestamp packet, kept beside the packet's ring slot until the CP has consumed it; the CP, status() and
// dropped_signals() use only those, so a signal destroyed while its submission is pending is never
// touched: its writes are dropped.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hcq/device.h"
#include "hcq/queue_status.h"

namespace sluice::cpu {

struct QueueConfig {
  std::string device, name;            // "CPU", "compute:0": for errors and profile records
  int workers = 0;                     // threads besides the CP that run kernels; 0 for a copy queue
  const hcq::Device* owner = nullptr;  // profile records are taken while owner->profiling()
  std::function<void(hcq::ProfileRecord)> profile;  // where they go
  // Submission `value` is done (or failed) at host time `ns`: hcq::Device::retire. Not called for the
  // submissions of an abandoned queue.
  std::function<void(uint64_t value, uint64_t ns)> retire;
  // Every queue of the device is quiet() (below): nothing of it can write a signal without the host.
  std::function<bool()> settled;
  std::function<std::chrono::nanoseconds()> hang_timeout;  // the device's (hcq/device.h)
};

// What a queue is doing right now, for Device::explain_stall (hcq/queue_status.h).
using hcq::QueueStatus;

class Queue {
 public:
  virtual ~Queue() = default;  // shutdown()

  // Device destruction (never a hang), in two steps so that every queue of the device closes before any
  // drains (a wait on one may be met by another's work), as hcq::CommandProcessor's close()/shutdown():
  // - close(): from now on the CP gives up a wait once its signal is not reached and the device is
  //   settled (QueueConfig::settled): only the host could still write it, and a destructor does not wait
  //   for the host. The submission fails as after a failed wait, with `[~Device] CPU was destroyed while
  //   compute:0 waited for signal '<name>' to reach <v>`.
  // - shutdown(): closes, runs what was submitted, and stops the threads. A kernel that goes the hang
  //   timeout without progress ends the drain: it is abandoned (as abandon() does), every signal behind
  //   it fails with `[~Device] CPU was destroyed while compute:0 held work the device did not finish
  //   within the hang timeout of 50 ms`, and shutdown() returns false: the kernel may still write its
  //   buffers. Repeated calls return the first answer.
  virtual void close() = 0;
  virtual bool shutdown() = 0;
  // Nothing on this queue progresses without the host: its ring is drained, its CP waits for a signal
  // that is not reached, or shutdown() gave its kernel up.
  virtual bool quiet() const = 0;

  // Copies `packets` into the ring, then an End for timeline value `value`, and rings the doorbell. One
  // producer at a time (the device's submit lock). Blocks while the ring is full; throws hcq::Error
  // `[submit] ...` if the queue is abandoned meanwhile.
  virtual void push(std::span<const uint64_t> packets, uint64_t value) = 0;
  virtual QueueStatus status() const = 0;
  // If the exec `token` names is still running, gives up on it: its threads are detached to finish that
  // kernel and exit, the queue runs nothing more, and the kernel's code stays loaded. False if the exec
  // finished meanwhile.
  virtual bool abandon(uint64_t token) = 0;
  // After abandon(), with no producer active: the signals that the packets behind the stuck exec would
  // have written.
  virtual std::vector<hcq::SignalRef> dropped_signals() const = 0;
};

std::unique_ptr<Queue> start_queue(QueueConfig config);

}  // namespace sluice::cpu
