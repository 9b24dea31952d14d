#pragma once
// Which nodes are realized (stored to memory), and which kernel stores each (internal to core/schedule).
// The rules are those of schedule.h; the algorithm is the reference design's group_realizes (seed 001):
// realize points first, then one pass over the reduces in topological order that grows each reduce's
// group of realized consumers or realizes the reduce (or the elementwise chain below it).
#include <cstdint>
#include <vector>

#include "core/schedule/graph.h"

namespace sluice::sched {

struct KernelPlan {
  std::vector<uint32_t> stores;  // the realized nodes it stores, in topological order
  int32_t reduce = -1;           // the reduce whose shape the kernel has; -1 for an elementwise kernel
};

// Marks Node::realized, Node::group and Node::kernel; kernels in the order of their first store.
std::vector<KernelPlan> plan_kernels(Graph& g);

}  // namespace sluice::sched
