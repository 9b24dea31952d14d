#pragma once
// A hardware queue of the NULL device (DESIGN.md §4): the encoder and completion primitive behind one hcq
// queue, for a device that runs nothing. hcq::CommandProcessor (hcq/command_processor.h) runs the queue,
// so NULL keeps the contract of hcq/queue.h exactly (an unmet wait is held, a failed one skips the rest
// and fails its signals, completions apply in record order, the timeline retires in order); this
// backend supplies:
//
//   exec, copy, barrier          nothing: an executing encoder (Config::executes) whose commands are
//                                done when recorded, so a submission whose waits are met has written
//                                its signals by the time submit returns (the pusher records it)
#include <memory>

#include "hcq/command_processor.h"

namespace sluice::null {

std::unique_ptr<hcq::CommandProcessor> start_queue(hcq::CommandProcessor::Config cfg);

}  // namespace sluice::null
