#pragma once
// A Vulkan hardware queue (DESIGN.md §4): the encoder and completion primitive behind one hcq queue
// (compute:0, copy:0). hcq::CommandProcessor (hcq/command_processor.h) runs the queue: host waits,
// skip-and-fail, completion lists applied in record order with clamped times, retirement, status,
// abandon and shutdown; this backend supplies:
//
//   exec      bind pipeline + descriptors (pushed, or a set from a per-segment pool) + push constants +
//             vkCmdDispatch(global)
//   copy      vkCmdCopyBuffer between the VkBuffers the addresses resolve to (allocator.h)
//   barrier   a full pipeline barrier, host reads included; every command is also preceded by a barrier,
//             because hcq's commands of one queue never overlap (a copy may read the copy before it)
//   marks     timestamp queries at that point of the command buffer, for signals and timestamps (on a
//             GPU; a CPU device such as lavapipe stamps them with the host time their completion is
//             seen) and around profiled commands; converted to host-clock ns (QueueConfig period, offset)
//   wait      none on the device: an unmet wait is held on the host by the command processor
//   segment   a command buffer, one vkQueueSubmit that signals the next value of the queue's own timeline
//             semaphore (VkTimelineSemaphoreSubmitInfo); waiting for one is vkWaitSemaphores
// Segments are ordered by a pipeline barrier at the start of each (its first scope is every command
// submitted earlier to the VkQueue; a CPU device needs none, QueueConfig::cpu_device) rather than by
// semaphore waits, which would switch Mesa's queues to threaded submission; a signal operation of
// vkQueueSubmit covers every earlier command of the VkQueue, so semaphore value n means segment n and all
// before it are done. When both hcq queues share one VkQueue (lavapipe: one queue family with one queue),
// the barrier also orders them against each other: correct, with no overlap of copies and kernels.
//
// Signals stay host words (hcq/signal.h) rather than VkSemaphores: every device and the host can wait on
// them, and the failure rules are kept exactly; a host waiter still wakes straight from the driver
// (CommandProcessor::wait_for waits in vkWaitSemaphores).
//
// Graph replays: a submission shaped as hcq::Graph records them (exec and copy commands with a
// memory_barrier between each two), submitted again, runs as a command buffer recorded once and patched
// in place (graph.h), unless profiling is on (which needs a timestamp around every command).
//
// Timestamp queries: a ring of kQueries per queue; a segment that needs more than are free submits what
// it recorded and waits for earlier segments to give theirs back.
//
// Failures: a failing Vulkan call fails the rest of its submission with "[call] failed: VK_...";
// VK_ERROR_DEVICE_LOST (from vkQueueSubmit or while waiting on the semaphore) is fatal: the work in flight
// and every later submission fail their signals with that error and still retire, so no wait hangs and
// the process carries on (tested with the simulated loss of context.h).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/vulkan/allocator.h"
#include "backends/vulkan/context.h"
#include "hcq/command_processor.h"

namespace sluice::vulkan {

struct QueueConfig {
  hcq::CommandProcessor::Config processor;  // names, profiling, retirement, hang timeout, settled
  Context* ctx = nullptr;
  Allocator* allocator = nullptr;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  bool compute = true;
  // Device-level timestamp conversion: host_ns = ticks * period + offset (period 0: no device timestamps).
  double period_ns = 0;
  int64_t offset_ns = 0;
  // The device is the host CPU (VK_PHYSICAL_DEVICE_TYPE_CPU: lavapipe). Its VkQueue runs submissions one
  // after another on host memory, so a segment needs no barrier in front of it, and signals carry the
  // host time their completion was seen rather than a timestamp query, which is no more exact there.
  // Both cost lavapipe a pipeline flush each, as much as the dispatch itself. Profiling keeps its queries.
  bool cpu_device = false;
};

// Starts the queue's threads. Throws DeviceError naming the Vulkan call that failed.
std::unique_ptr<hcq::CommandProcessor> start_queue(QueueConfig cfg);

}  // namespace sluice::vulkan
