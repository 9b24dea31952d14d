#pragma once
// hcq::QueueStatus: what one of a device's queues is doing, and the one wording of Device::explain_stall
// (device.h) and of a hung kernel's error for every backend (hcq's command processor fills it, the CPU's
// encoder adds its kernel's parts). Backends fill a status; the words and the hang rule live here.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "hcq/signal.h"

namespace sluice::hcq {

double ms(uint64_t ns);  // nanoseconds as milliseconds, for messages

struct QueueStatus {
  enum Phase { Idle, Waiting, Running } phase = Idle;
  SignalRef signal;    // Waiting: for this signal to reach `value` (none: its waits are met, it is next)
  uint64_t value = 0;  // Running: the timeline value of its oldest unfinished submission
  // Running: the kernel(s) of its oldest unfinished work: "'a'", "'a', 'b'"; "" for work without a kernel
  // (a copy, a signal write), which is named by its submission and never counts as hung.
  std::string kernels;
  uint64_t since_ns = 0;  // Running: since when
  // A device that sees a kernel progress (the CPU device counts the parts of its grid): how many parts
  // of how many are done, and when the last one finished. parts == 0: progress is not seen.
  uint64_t parts_done = 0, parts = 0, progress_ns = 0;
  uint64_t token = 0;  // names the work for the backend's abandon()
  // How many hang timeouts the work may run without the device seeing progress: 1, except for work the
  // device cannot watch inside although it holds many kernels (a native graph replay), which gets one
  // per part it would have been split into otherwise (command_processor.h: segment_commands).
  uint32_t budget = 1;

  // The hang rule (device.h): stuck, not slow. A kernel is named and at `now` it has gone longer than
  // `budget` hang timeouts of `hang_ns` without progress (since its last part finished, else since it
  // started).
  bool hung(uint64_t now, uint64_t hang_ns) const;
  // "for 1200 ms, 12 of 64 parts of its grid done, the last 250 ms ago"; "for 1200 ms" without parts.
  std::string ran(uint64_t now) const;
};

// Device::explain_stall over queues 0..n-1 ("compute:0 is idle; copy:0 waits for signal 's' to reach 3
// (value 2)"). status(k) reads queue k and name(k) names it. A queue Running without progress for
// longer than hang_ns, with a kernel named, is handed to reset(k, status, now), which resets it and returns
// true (false: its work finished meanwhile); the description then says the queue was reset.
std::string explain_queues(size_t n, const std::function<QueueStatus(size_t)>& status,
                           const std::function<std::string(size_t)>& name, uint64_t hang_ns,
                           const std::function<bool(size_t, const QueueStatus&, uint64_t)>& reset);

// The error a reset queue's pending work fails with: "[wait] CPU: kernel 'k' on compute:0 did not
// finish: it ran for ..., past the hang timeout of 10000 ms, and its queue was reset".
std::string hung_message(const std::string& device, const std::string& queue, const QueueStatus& st,
                         uint64_t now, uint64_t hang_ns);

// The errors of work a device's destructor gives up on (never a hang): "[~Device] CPU was destroyed while
// compute:0 waited for signal 's' to reach 3" (a wait only the host could meet), and "... while compute:0
// held work the device did not finish within the hang timeout of 50 ms".
std::string destroyed_while_waiting(const std::string& device, const std::string& queue,
                                    const std::string& signal, uint64_t value);
std::string destroyed_while_hung(const std::string& device, const std::string& queue, uint64_t hang_ns);

}  // namespace sluice::hcq
