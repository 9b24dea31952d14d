#pragma once
// The OpenCL device's queues (DESIGN.md §4): each hcq hardware queue is an in-order cl_command_queue with
// profiling on; submit() translates a HwQueue's packets into enqueues as it reads them.
//
//   packet          enqueued as
//   exec            clSetKernelArg (only arguments that changed) + clEnqueueNDRangeKernel(global*local)
//   copy            clEnqueueCopyBuffer (addresses resolved through the handle table, allocator.h)
//   memory_barrier  nothing: an in-order queue already runs each command after the previous one finished,
//                   its writes visible (graphs put one between every two items; enqueueing a barrier for
//                   each doubled the driver's commands per replay)
//   signal(s, v)    a callback (clSetEventCallback) on the event of the command before it (a marker if
//   timestamp(s)    there is none) writes v and the command's end time (CL_PROFILING_COMMAND_END, on the
//                   host clock through an offset calibrated at open) into s
//   wait(s, v)      nothing if s already reached v, or if the write of v is enqueued on this same queue
//                   (in order); a barrier on that command's event if it is enqueued on the device's other
//                   queue; otherwise (a signal of the host or of another device, or one whose write is
//                   itself held back) the queue is blocked: the rest of the submission, and every later
//                   submission of the queue, wait in a backlog on the host until the device's waiter
//                   thread sees s reach v (then it enqueues them) or fail
//   (end)           a callback retires the submission's timeline value, in value order across queues
//
// Only signals, timestamps and the end get events and callbacks: the commands between them enqueue with
// none, and a kernel's arguments are set only where they changed (program.h).
//
// Signal lifetime (hcq/signal.h): submit() takes a SignalRef to every signal the submission names; the
// backlog, the waiter thread and the callbacks use only those, so a signal destroyed while its submission
// is pending is never touched: its writes are dropped.
//
// Failures: a wait on a failed signal (failed before submit, while the queue was blocked on it, or a
// signal whose writer on this device was skipped) skips the rest of the submission: nothing after it is
// enqueued and its signals are failed with that signal's error; a device destroyed while a queue is blocked
// fails the submission with `[~Device] <device> was destroyed while ...`. Later submissions run as usual.
// A command that ends with an error status fails the signals after it with
// `[exec] <device>: kernel '<name>' failed on compute:0: CL_...` (what the driver does with the commands
// after it is its own affair). OpenCL cannot stop a running kernel, so there is no hang recovery:
// explain_stall() describes the queues and leaves them alone, and the destructor waits for the queues at
// most the device's hang timeout, then abandons them (late callbacks find the engine gone and do nothing).
//
// Threading: submit() is thread-safe (one lock per queue, also taken by the waiter thread to enqueue a
// backlog); callbacks run on driver threads and call no blocking OpenCL function (only event queries and
// releases), and no exception leaves a callback or the waiter thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "backends/opencl/allocator.h"
#include "backends/opencl/driver.h"
#include "hcq/device.h"

namespace sluice::opencl {

class Queues {
 public:
  virtual ~Queues() = default;  // fails blocked waits, then waits for the queues and their callbacks
  // Enqueues q on its queue and ends it with the retire of the value `next_value()` hands out (called
  // under the queue's lock, so values reach each queue in increasing order). Returns that value.
  virtual uint64_t submit(const hcq::HwQueue& q, const std::function<uint64_t()>& next_value) = 0;
  virtual std::string explain_stall() const = 0;
  virtual cl_command_queue host_queue() const = 0;  // for the allocator's blocking transfers
};

struct QueuesConfig {
  hcq::Device* dev;
  const Context* ctx;
  Memory* mem;
  std::function<void(hcq::ProfileRecord)> profile;
};

std::unique_ptr<Queues> make_queues(QueuesConfig cfg);

}  // namespace sluice::opencl
