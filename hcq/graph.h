#pragma once
// hcq::Graph — a list of kernels and copies recorded once and replayed with patched inputs (DESIGN.md §4):
// the lowest-overhead way to launch a fixed sequence of work.
//
// Semantics
// - The constructor records every item, in order, into one compute HwQueue with a memory barrier
//   between items, so each item sees the writes of the ones before it.
// - set_buf / set_var / set_global / set_copy patch one item for later replays (item = its index in the
//   constructor's list); a replay already submitted is not affected (HwQueue copies at submit).
// - replay() submits the recorded queue and returns its timeline value; it does not wait for an earlier
//   replay, so replays pipeline. Set Buffer::last_use of the graph's buffers from the returned value.
// - The device is told the submission is this graph's replay (Device::submit_graph, with id()): a
//   backend with a native form (a CUDA graph, pre-recorded Vulkan command buffers) builds it from the
//   recorded items on the first replay, patches it on later ones, and drops it when the graph is
//   destroyed; every other device runs the queue as any submission.
// - Errors: Error for an item index or argument index out of range, a patch of the wrong item kind, or
//   (at construction) an item that does not match its program's layout.
//
// Ownership and threading: the graph refers to its device and programs, which must outlive it and its
// replays. A graph is used by one thread at a time.
#include <cstdint>
#include <variant>
#include <vector>

#include "hcq/program.h"
#include "hcq/queue.h"

namespace sluice::hcq {

class Device;

struct GraphExec {
  const Program* program;
  KernelArgs args;
  Dims global, local = {};
};
struct GraphCopy {
  uint64_t dst, src, size;
};
using GraphItem = std::variant<GraphExec, GraphCopy>;

class Graph {
 public:
  Graph(Device& dev, const std::vector<GraphItem>& items);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  size_t size() const { return cmds_.size(); }
  void set_buf(size_t item, uint32_t i, uint64_t addr) { queue_.patch_buf(cmd(item, "set_buf"), i, addr); }
  void set_var(size_t item, uint32_t i, int32_t value) { queue_.patch_var(cmd(item, "set_var"), i, value); }
  void set_global(size_t item, Dims global) { queue_.patch_global(cmd(item, "set_global"), global); }
  void set_copy(size_t item, uint64_t dst, uint64_t src, uint64_t size) {
    queue_.patch_copy(cmd(item, "set_copy"), dst, src, size);
  }

  uint64_t replay();
  // What replay() submits: the items in order, a memory barrier between each two (for profile traces).
  const HwQueue& queue() const { return queue_; }
  // Names this graph to its device: unique in the process, never reused.
  uint64_t id() const { return id_; }

 private:
  HwQueue::Cmd cmd(size_t item, const char* func) const;

  Device& dev_;
  uint64_t id_;
  HwQueue queue_;
  std::vector<HwQueue::Cmd> cmds_;
};

}  // namespace sluice::hcq
