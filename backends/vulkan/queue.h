#pragma once
// A Vulkan hardware queue (DESIGN.md §4): the command processor behind one hcq queue (compute:0, copy:0).
//
// Mapping of the packets (hcq/queue.h):
//   exec      bind pipeline + descriptors (pushed, or a set from a per-segment pool) + push constants +
//             vkCmdDispatch(global)
//   copy      vkCmdCopyBuffer between the VkBuffers the addresses resolve to (allocator.h)
//   barrier   a full pipeline barrier, host reads included; every command is also preceded by a barrier,
//             because hcq's commands of one queue never overlap (a copy may read the copy before it)
//   signal    a timestamp query written at that point of the command buffer (on a GPU; a CPU device
//             such as lavapipe stamps it with the host time its completion is seen); the value is written
//             to the hcq::Signal (host memory) when the segment's timeline semaphore value completes
//   timestamp the same without the value
//   wait      satisfied waits cost nothing; otherwise the segment recorded so far is submitted and the
//             queue's worker thread blocks on the host signal (so any device's or the host's signal works)
// A submission is cut into segments: command buffers, each one vkQueueSubmit that signals the next value
// of the queue's own timeline semaphore (VkTimelineSemaphoreSubmitInfo). Segments are ordered by a
// pipeline barrier at the start of each (its first scope is every command submitted earlier to the
// VkQueue; a CPU device needs none, QueueConfig::cpu_device) rather than by semaphore waits, which would
// switch Mesa's queues to threaded submission; a signal operation of vkQueueSubmit covers every earlier
// command of the VkQueue, so semaphore value n means segment n and all before it are done. When both hcq
// queues share one VkQueue (lavapipe: one queue family with one queue), the barrier also orders them against
// each other: correct, with no overlap of copies and kernels. A completion thread waits on the semaphore,
// reads the segment's timestamps (converted to host-clock ns, clamped to the window in which the host saw the
// segment run) and applies its signal writes, profile records and timeline retirement in record order.
//
// A host thread that waits on a signal of this device (Signal::wait -> Device::wait_in_driver ->
// wait_for) waits in vkWaitSemaphores for the segment that writes it and applies it itself, so it wakes
// straight from the driver.
//
// Signals stay host words (hcq/signal.h) rather than VkSemaphores: every device and the host can wait on
// them, and the failure rules (a failed wait skips the rest of its submission and fails its signals) are
// kept exactly; a host waiter still wakes straight from the driver (above).
//
// Graph replays: a submission shaped as hcq::Graph records them (exec and copy commands with a
// memory_barrier between each two), submitted again, runs as a command buffer recorded once and patched
// in place (graph.h), unless profiling is on (which needs a timestamp around every command).
//
// Fast path: a submission whose waits are all satisfied when it is pushed, to a queue with nothing queued
// on its worker, is recorded and submitted on the caller's thread.
//
// Bounded: at most 1024 segments are in flight; recording the next one waits until the completion thread
// retired one. So a caller that submits faster than the device runs, and never waits, holds a bounded
// amount of host memory (command buffers are kept for reuse), as the CPU device's ring does.
//
// Signal lifetime (hcq/signal.h): push() takes a SignalRef to every signal the submission names, and the
// worker, the completion thread and status() use only those, so a signal destroyed while its submission
// is pending is never touched: its writes are dropped.
//
// Failures: a Vulkan call that fails while processing fails the signals of the rest of the submission
// with "[call] failed: VK_..."; VK_ERROR_DEVICE_LOST (from vkQueueSubmit or while waiting on the
// semaphore) marks the queue lost: the segments in flight and every later submission fail their signals
// with that error and still retire, so no wait hangs and the process carries on (tested with the
// simulated loss of context.h).
//
// Threading: push() is called under the device's submit lock of this queue; status()/abandon()/close()
// from any thread; shutdown() from one thread at a time (the device's destructor, or its exit handler).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/vulkan/allocator.h"
#include "backends/vulkan/context.h"
#include "hcq/device.h"
#include "hcq/queue_status.h"

namespace sluice::vulkan {

struct QueueConfig {
  std::string device_name, queue_name;  // "VULKAN", "compute:0"
  Context* ctx = nullptr;
  Allocator* allocator = nullptr;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  bool compute = true;
  std::function<bool()> profiling;
  std::function<void(hcq::ProfileRecord)> profile;
  // The submission of timeline value `value` is done.
  std::function<void(uint64_t value, uint64_t ns)> retire;
  std::function<std::chrono::nanoseconds()> hang_timeout;  // the device's (hcq/device.h)
  // Every queue of the device is quiet() (below): nothing of it can write a signal without the host.
  std::function<bool()> settled;
  // Device-level timestamp conversion: host_ns = ticks * period + offset (period 0: no device timestamps).
  double period_ns = 0;
  int64_t offset_ns = 0;
  // The device is the host CPU (VK_PHYSICAL_DEVICE_TYPE_CPU: lavapipe). Its VkQueue runs submissions one
  // after another on host memory, so a segment needs no barrier in front of it, and signals carry the
  // host time their completion was seen rather than a timestamp query, which is no more exact there.
  // Both cost lavapipe a pipeline flush each, as much as the dispatch itself. Profiling keeps its queries.
  bool cpu_device = false;
};

using hcq::QueueStatus;  // what a queue is doing, for Device::explain_stall (hcq/queue_status.h)

class Queue {
 public:
  virtual ~Queue() = default;
  // `graph`: the hcq::Graph this submission replays (its id, Device::submit_graph), 0 for none.
  virtual void push(std::span<const uint64_t> words, uint64_t timeline_value, uint64_t graph) = 0;
  // The hcq::Graph is gone: its recorded command buffers go once their replays finished.
  virtual void forget_graph(uint64_t graph) = 0;
  virtual QueueStatus status() = 0;
  // Marks the queue abandoned if segment `token` is still the oldest unfinished one; its threads stop
  // touching signals and the timeline. Returns false if that segment finished meanwhile.
  virtual bool abandon(uint64_t token) = 0;
  // After abandon(): every signal the queue's unfinished work would have written.
  virtual std::vector<hcq::SignalRef> dropped_signals() = 0;
  // hcq::Device::wait_in_driver: if a submitted segment writes `s` >= `value` (or retires timeline value
  // `timeline_value`, when non-zero), waits for it in vkWaitSemaphores on the calling thread (until
  // `deadline` at most) and applies what finished. Never throws.
  virtual void wait_for(const hcq::Signal& s, uint64_t value, uint64_t timeline_value,
                        hcq::Clock::time_point deadline) = 0;

  // Device destruction (issue #6: never a hang), in two steps so that every queue of the device closes
  // before any drains (a wait on one may be met by the other's work):
  // - close(): from now on a host wait of the worker gives up once its signal is not reached and the
  //   device is settled (QueueConfig::settled): only the host could still write it, and a destructor does
  //   not wait for the host. The submission fails as a failed wait does, with `[~Device] VULKAN was
  //   destroyed while compute:0 waited for signal '<name>' to reach <v>`.
  // - shutdown(): drains the queue and stops its threads. A segment the GPU keeps for longer than the hang
  //   timeout ends the drain: the queue's unfinished signals fail, and shutdown() returns false, leaving
  //   the queue's Vulkan objects alive (the GPU may still use them; the device leaks what it shares with
  //   them, too). Repeated calls return the first answer; the destructor calls it if nobody did.
  virtual void close() = 0;
  virtual bool shutdown() = 0;
  // Nothing on this queue progresses without the host: no segment in flight, and the worker idle or
  // blocked on a signal that is not reached. Thread-safe; takes only this queue's lock.
  virtual bool quiet() = 0;
};

std::unique_ptr<Queue> start_queue(QueueConfig cfg);

}  // namespace sluice::vulkan
