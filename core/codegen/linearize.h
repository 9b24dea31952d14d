#pragma once
// Ordering a lowered kernel graph (lower.h) into a block-structured list of uops (kernel.h).
//
// Each node goes into the innermost loop whose RANGE it depends on: loop-invariant work (index math of the
// output, loads of output-shaped views) is hoisted before the loops, accumulators are declared right before
// them, their updates sit in the innermost loop, and whatever reads an accumulator's final value comes
// after the loops close. Loops nest in the order of their RANGE's axis. Within a block, nodes keep the
// (deterministic) topological order of the graph.
//
// Limitation (fine for the kernels lower() makes today): all RANGEs form one nest. Sequential nests
// (GROUP's shared-memory reduction, several reduces over different axes) will need blocks per nest.
#include <vector>

#include "core/ir/uop.h"

namespace sluice::codegen {

std::vector<UOp> linearize(const UOp& sink);

}  // namespace sluice::codegen
