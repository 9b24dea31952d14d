#include "hcq/graph.h"

#include <atomic>

#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::hcq {

namespace {
std::atomic<uint64_t> next_id{1};
}  // namespace

Graph::Graph(Device& dev, const std::vector<GraphItem>& items)
    : dev_(dev), id_(next_id.fetch_add(1, std::memory_order_relaxed)), queue_(QueueKind::Compute) {
  cmds_.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) queue_.memory_barrier();
    if (const auto* e = std::get_if<GraphExec>(&items[i])) {
      SLUICE_CHECK_AS(::sluice::hcq::Error, e->program) << "item " << i << " has no program";
      queue_.exec(*e->program, e->args, e->global, e->local, &cmds_[i]);
    } else {
      const auto& c = std::get<GraphCopy>(items[i]);
      queue_.copy(c.dst, c.src, c.size, &cmds_[i]);
    }
  }
}

HwQueue::Cmd Graph::cmd(size_t item, const char* func) const {
  if (item >= cmds_.size())
    SLUICE_FAIL(Error, func) << "the graph has " << cmds_.size() << " items, no item " << item;
  return cmds_[item];
}

Graph::~Graph() { dev_.forget_graph(id_); }

uint64_t Graph::replay() { return dev_.submit_graph(queue_, id_); }

}  // namespace sluice::hcq
