#pragma once
// Ordering a lowered kernel graph (lower.h) into a block-structured list of uops (kernel.h).
//
// The kernel is a sequence of stages; stage s ends with a nest of loops (possibly none) whose
// accumulators' final values are read only from stage s+1 on (GROUP makes two: the partial sums, then
// the reduction over shared memory). Each node goes into the earliest stage its sources allow and there
// into the innermost loop whose RANGE it depends on: loop-invariant work (index math of the output, loads
// of output-shaped views) is hoisted before the loops, accumulators are declared right before them, their
// updates sit in the innermost loop, and whatever reads an accumulator's final value comes after the
// loops close. Loops of a nest nest in the order of their RANGE's arg. Within a block, nodes keep the
// (deterministic) topological order of the graph.
#include <vector>

#include "core/ir/uop.h"

namespace sluice::codegen {

std::vector<UOp> linearize(const UOp& sink);

}  // namespace sluice::codegen
