#pragma once
// The OpenCL device's queues (DESIGN.md §4): each hcq hardware queue is an in-order cl_command_queue with
// profiling on, run by hcq's command processor (hcq/command_processor.h: host-held waits, skip-and-fail,
// completion lists applied in record order with clamped times, retirement, status, hang reset and
// shutdown). This backend supplies the encoder and the completion primitive:
//
//   packet          enqueued as
//   exec            clSetKernelArg (only arguments that changed) + clEnqueueNDRangeKernel(global*local)
//   copy            clEnqueueCopyBuffer (addresses resolved through the handle table, allocator.h)
//   memory_barrier  nothing: an in-order queue already runs each command after the previous one finished,
//                   its writes visible (graphs put one between every two items; enqueueing a barrier for
//                   each doubled the driver's commands per replay)
//   signal(s, v)    the time of the command before it (CL_PROFILING_COMMAND_END of its event; a marker's
//   timestamp(s)    if there is none), on the host clock through an offset calibrated at open
//   wait(s, v)      nothing if the write of v is enqueued on this same queue (in order); a barrier on
//                   that command's event if it is enqueued on the device's other queue; otherwise (a
//                   signal of the host or of another device, or a write not enqueued yet) the command
//                   processor holds it on the host; when the other queue enqueues a write of s it offers
//                   the wait again, or that queue's thread records the waiting submission itself
//                   (CommandProcessor::written, can_encode_wait: the write is listed as pending)
//   segment         what was enqueued since the last one, ended by the event of its last command (or a
//                   marker's); its completion callback (clSetEventCallback) applies it on the driver's
//                   thread (CommandProcessor::complete_now), so a host waiter wakes from the signal write
//                   itself; a segment that must wait is left to the completion thread
//
// Only commands whose time is asked for get events (a signal or timestamp follows, or the segment ends):
// the commands between them enqueue with none, and a kernel's arguments are set only where they changed
// (program.h).
//
// Failures: a segment whose last command ends with an error status fails its signals with
// `[exec] <device>: kernel '<name>' failed on compute:0: CL_...`; later submissions run as usual (what the
// driver does with the commands after a failed one is its own affair). OpenCL cannot stop a running
// kernel and the driver's threads stay busy with it, so the device declares no queue hung
// (ProcessorDevice::why_no_reset): a stall is described, and a wait without a timeout ends by the
// no-progress rule (hcq/device.h).
//
// Threading: hcq's; the completion callbacks run on driver threads and never block.
#include <memory>

#include "backends/opencl/allocator.h"
#include "backends/opencl/driver.h"
#include "hcq/command_processor.h"

namespace sluice::opencl {

// What the queues of one device share: the context, the buffer handles, the host queue the allocator's
// blocking transfers use, the device clock's offset, and the signal writes enqueued on either queue.
struct Queues;
std::shared_ptr<Queues> make_queues(const Context& ctx, Memory& mem, const std::string& device);
cl_command_queue host_queue(const Queues& q);

// Queue `kind` (0: compute, 1: copy) of the device, started.
std::unique_ptr<hcq::CommandProcessor> start_queue(Queues& shared, hcq::CommandProcessor::Config cfg,
                                                   int kind);

}  // namespace sluice::opencl
