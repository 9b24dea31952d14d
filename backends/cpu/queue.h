#pragma once
// A hardware queue of the CPU device (DESIGN.md §4): the encoder behind one hcq queue, for a device
// whose commands run on the host. hcq::CommandProcessor (hcq/command_processor.h) runs the queue, with an
// executing encoder (Config::executes): its worker thread walks each submission's packets in place in
// the submission ring and this encoder runs each command as it is reached, so the contract of
// hcq/queue.h (waits held on the host, skip-and-fail, record order, in-order retirement, stalls, hangs)
// is hcq's. This backend supplies:
//
//   exec     runs the kernel: on min(threads, work-groups) cores at once, the recording thread being
//            core 0 (program.h has the ABI), except a launch that the program's last run predicts under
//            20 us of CPU time: that one runs whole on the recording thread, in one call, since waking a
//            worker and waiting for it would cost more. Each core runs its share of the grid in parts
//            and counts them, so a wait can tell a slow kernel (parts still complete) from a stuck one.
//   copy     memcpy (host memory)
//   barrier  nothing: commands run one after another, and the recording thread resumes after a kernel
//            only through the pool's completion counter, which orders every core's writes before it
//   status   the running kernel, its start, its parts done (executing())
//   abandon  gives a stuck kernel up: its threads finish it in the background (or never) and exit; the
//            kernel's code stays loaded
#include <memory>

#include "hcq/command_processor.h"

namespace sluice::cpu {

// `workers`: threads besides the recording thread that run kernels (0 for a copy queue).
std::unique_ptr<hcq::CommandProcessor> start_queue(hcq::CommandProcessor::Config cfg, int workers);

}  // namespace sluice::cpu
