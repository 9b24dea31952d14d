#include "backends/cuda/graph.h"

#include <algorithm>
#include <cstring>

#include "backends/cuda/program.h"
#include "hcq/queue.h"

namespace sluice::cuda {
namespace {

namespace pk = hcq::packet;

// Calls f(ExecView, vars) for each Exec packet.
template <class F>
void for_each_exec(std::span<const uint64_t> words, F&& f) {
  std::vector<int32_t> vars;
  for (pk::Ref r : pk::each(words)) {
    if (r.op != pk::Exec) continue;
    pk::ExecView e(r.p);
    vars.resize(e.nvars);
    for (uint32_t v = 0; v < e.nvars; ++v) vars[v] = e.var(v);
    f(e, vars);
  }
}

void fill(KernelNodeParams& p, const pk::ExecView& e, KernelParams& args, const std::vector<int32_t>& vars) {
  args.pack(e.bufs, e.nbufs, vars.data(), e.nvars);
  p.func = function(*e.program);
  p.grid[0] = e.global.x, p.grid[1] = e.global.y, p.grid[2] = e.global.z;
  p.block[0] = e.local.x, p.block[1] = e.local.y, p.block[2] = e.local.z;
  p.params = args.params();
}

}  // namespace

GraphCache::~GraphCache() {
  for (auto& [key, e] : entries_) destroy(e);
}

bool GraphCache::supports(std::span<const uint64_t> words) {
  int execs = 0;
  for (pk::Ref r : pk::each(words)) {
    if (r.op == pk::Exec) {
      ++execs;
    } else if (r.op != pk::Barrier) {
      return false;
    }
  }
  return execs >= 2;
}

void GraphCache::destroy(Entry& e) {
  if (e.exec) drv_.graph_exec_destroy(e.exec);
  if (e.graph) drv_.graph_destroy(e.graph);
  e = {};
}

GraphCache::Entry GraphCache::build(std::span<const uint64_t> words) {
  Entry e;
  SLUICE_DRV("replay", device_, drv_, graph_create, &e.graph, 0);
  try {
    for_each_exec(words, [&](const pk::ExecView& x, const std::vector<int32_t>& vars) {
      KernelNodeParams p;
      KernelParams args;
      fill(p, x, args, vars);
      Node n;
      const CUgraphNode* dep = e.nodes.empty() ? nullptr : &e.nodes.back().node;
      SLUICE_DRV("replay", device_, drv_, graph_add_kernel_node, &n.node, e.graph, dep, dep ? 1 : 0, &p);
      std::copy(p.grid, p.grid + 3, n.grid);
      std::copy(p.block, p.block + 3, n.block);
      n.slots = args.slots();
      e.nodes.push_back(std::move(n));
    });
    SLUICE_DRV("replay", device_, drv_, graph_instantiate, &e.exec, e.graph, 0);
  } catch (...) {
    destroy(e);
    throw;
  }
  return e;
}

void GraphCache::update(Entry& e, std::span<const uint64_t> words) {
  size_t i = 0;
  for_each_exec(words, [&](const pk::ExecView& x, const std::vector<int32_t>& vars) {
    Node& n = e.nodes[i++];
    KernelNodeParams p;
    KernelParams args;
    fill(p, x, args, vars);
    // Unchanged nodes cost nothing: a replay that patches one argument updates one node.
    if (std::equal(p.grid, p.grid + 3, n.grid) && std::equal(p.block, p.block + 3, n.block) &&
        args.slots() == n.slots)
      return;
    SLUICE_DRV("replay", device_, drv_, graph_exec_kernel_node_set_params, e.exec, n.node, &p);
    std::copy(p.grid, p.grid + 3, n.grid);
    std::copy(p.block, p.block + 3, n.block);
    n.slots = args.slots();
  });
}

bool GraphCache::launch(uint64_t graph, std::span<const uint64_t> words, CUstream stream) {
  if (!disabled_.empty()) return false;
  auto it = entries_.find(graph);
  try {
    if (it == entries_.end()) {
      if (!supports(words)) return false;
      it = entries_.emplace(graph, build(words)).first;
    } else {
      update(it->second, words);
    }
  } catch (const hcq::Error& e) {
    // Nothing of this submission is on the stream yet. A node updated before the failure is harmless:
    // no graph is launched again.
    disabled_ = e.what();
    return false;
  }
  SLUICE_DRV("replay", device_, drv_, graph_launch, it->second.exec, stream);
  return true;
}

void GraphCache::forget(uint64_t graph) {
  auto it = entries_.find(graph);
  if (it == entries_.end()) return;
  destroy(it->second);  // cuGraphExecDestroy defers the release of a graph still running
  entries_.erase(it);
}

}  // namespace sluice::cuda
