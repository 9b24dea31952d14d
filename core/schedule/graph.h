#pragma once
// The scheduler's picture of a tensor graph (internal to core/schedule): every node reachable from the
// outputs after constant folding, once, in topological order, with what grouping and AST building need.
// Built in one walk: each node is folded (fold.h) as soon as its sources are, so the whole graph is
// visited once and only folded nodes are rebuilt.
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "core/ir/shape_tracker.h"
#include "core/ir/uop.h"
#include "core/schedule/flat_map.h"
#include "core/schedule/views.h"

namespace sluice::sched {

enum class Kind : uint8_t {
  Buffer,    // memory that exists before this schedule: BUFFER, or ASSIGN(BUFFER, KERNEL) of an earlier
             // kernelize
  Const,     // CONST: a scalar, with or without a DEVICE
  Movement,  // a view of its one source
  Compute,   // ALU, CAST, BITCAST, REDUCE_AXIS, CONTIGUOUS, COPY, ASSIGN
};

// `user` reads the node the edge is filed under through `via`: that node itself, or a movement chain on it.
struct Edge {
  uint32_t user, via;
};

struct Node {
  UOp u;  // its op, dtype, arg and shape; its sources are Graph::src (u's own may be from before folding)
  Kind kind;
  bool live = false;                   // reachable from an output after folding
  bool realized = false;               // stored to memory by a kernel of this schedule (Compute only)
  bool has_pad = false;                // Movement: the chain from the base holds a PAD
  bool reshapes = false;               // Movement: the chain from the base holds only RESHAPEs
  uint32_t base = 0;                   // the first node below that is not Movement (itself otherwise)
  uint32_t src_begin = 0, nsrc = 0;    // tensor sources, in Graph::srcs
  uint32_t edge_begin = 0, nedge = 0;  // live Compute users reading it, in Graph::edges (Compute only)
  int32_t group = -1;                  // the reduce whose kernel stores this node (realized only), or -1
  int32_t kernel = -1;                 // the kernel storing it (realized only)
  const UOp* device = nullptr;         // the DEVICE it lives on, a source held by the graph (null: none)
  int64_t numel = 0;
  UOp view;  // lazily: Movement: VIEW of the chain from the base's elements; else VIEW of from_shape(shape)
};

struct Foldable;  // graph.cpp: which fold tables may fire on a node

class Graph {
 public:
  // Throws Error for ops that are not tensor-level (or cannot be scheduled: BUFFER_VIEW, DEFINE_VAR, ...).
  explicit Graph(std::span<const UOp> outputs);

  std::vector<Node> nodes;  // topological order: sources first
  std::vector<uint32_t> srcs;
  std::vector<Edge> edges;
  std::vector<uint32_t> outputs;  // the node of each output (a constant output is made CONTIGUOUS)

  Op op(uint32_t n) const { return nodes[n].u.op(); }
  const Shape& shape(uint32_t n) const { return nodes[n].u.shape(); }
  std::span<const uint32_t> src(uint32_t n) const {
    return {srcs.data() + nodes[n].src_begin, nodes[n].nsrc};
  }
  std::span<const Edge> users(uint32_t n) const {
    return {edges.data() + nodes[n].edge_begin, nodes[n].nedge};
  }
  uint32_t base(uint32_t n) const { return nodes[n].base; }

  // See Node::view.
  const UOp& view(uint32_t n);

 private:
  uint32_t visit(const UOp& root);
  uint32_t add(const UOp& u, Kind k);  // the sources are src_idx_
  Foldable foldable(const UOp& u, Kind k) const;
  bool may_fold(const UOp& u, Kind k) const;
  UOp fold(const UOp& u, Kind k) const;
  const UOp& keep(UOp u);
  void link();

  FlatMap<const UOpNode*, uint32_t> memo_;  // original and folded nodes -> their node
  // Nodes made during the walk: they stay alive (memo_ keys must not be reused by other nodes) at stable
  // addresses (the walk points at them).
  std::deque<UOp> keep_;
  std::vector<UOp> scratch_;
  struct Frame {
    const UOp* u;
    uint32_t next;
    const UOp* folded;  // what u folded to, visited above this frame
  };
  std::vector<Frame> stack_;
  std::vector<uint32_t> src_idx_;
  std::vector<const UOp*> chain_;
};

// The tensor-level sources of u: COPY's DEVICE and a leaf's sources are not.
std::span<const UOp> tensor_srcs(const UOp& u);

}  // namespace sluice::sched
