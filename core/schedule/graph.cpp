// The scheduler's graph: one walk that folds and numbers the tensor graph, then liveness and users.
#include "core/schedule/graph.h"

#include <algorithm>

#include "base/error.h"
#include "core/schedule/fold.h"
#include "core/schedule/views.h"

namespace sluice::sched {

namespace {

bool is_kernel_output(const UOp& u) { return u.op() == Op::Assign && u.src(1).op() == Op::Kernel; }

Kind kind_of(const UOp& u) {
  Op op = u.op();
  if (op == Op::Buffer || is_kernel_output(u)) return Kind::Buffer;
  if (op == Op::Const) return Kind::Const;
  if (is_movement(op)) return Kind::Movement;
  if (is_alu(op) || op == Op::Cast || op == Op::Bitcast || op == Op::ReduceAxis || op == Op::Contiguous ||
      op == Op::Detach || op == Op::Copy || op == Op::Assign)
    return Kind::Compute;
  SLUICE_FAIL(Error, "schedule") << op_name(op) << " is not a tensor-level op that can be scheduled";
}

}  // namespace

std::span<const UOp> tensor_srcs(const UOp& u) {
  Op op = u.op();
  if (op == Op::Buffer || op == Op::Const || is_kernel_output(u)) return {};
  if (op == Op::Copy) return u.src().first(1);
  return u.src();
}

Graph::Graph(std::span<const UOp> outs) : memo_(256) {
  nodes.reserve(256);
  srcs.reserve(512);
  for (const UOp& o : outs) {
    uint32_t n = visit(o);
    // A constant output gets memory of its own, written by a kernel: the runtime reads outputs from memory.
    if (nodes[nodes[n].base].kind == Kind::Const) n = visit(keep(nodes[n].u.contiguous()));
    outputs.push_back(n);
  }
  link();
}

const UOp& Graph::keep(UOp u) { return keep_.emplace_back(std::move(u)); }

// Post-order with an explicit stack. Frames point at handles that outlive the walk (the outputs' graph,
// or keep_), so walking copies no handles.
uint32_t Graph::visit(const UOp& root) {
  std::vector<Frame>& stack = stack_;
  stack.assign(1, {&root, 0, nullptr});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.folded) {
      uint32_t n = *memo_.find(f.folded->get());
      memo_[f.u->get()] = n;
      stack.pop_back();
      continue;
    }
    if (f.next == 0 && memo_.find(f.u->get())) {
      stack.pop_back();
      continue;
    }
    auto ts = tensor_srcs(*f.u);
    while (f.next < ts.size() && memo_.find(ts[f.next].get())) f.next++;
    if (f.next < ts.size()) {
      stack.push_back({&ts[f.next++], 0, nullptr});  // `f` is not used past the push: it may move
      continue;
    }
    // Sources are numbered: rebuild on their folded forms, then fold this node.
    const UOp* u = f.u;
    src_idx_.clear();
    bool changed = false;
    for (const UOp& s : ts) {
      uint32_t i = *memo_.find(s.get());
      src_idx_.push_back(i);
      changed |= nodes[i].u.get() != s.get();
    }
    // A node whose sources folded keeps its own UOp, its sources redirected (Graph::src is the truth, not
    // UOp::src): the same op on equal values. It is rebuilt only for the rules to see its new sources.
    Kind k = kind_of(*u);
    const UOp* r = u;
    if (changed && may_fold(*u, k)) {
      scratch_.assign(u->src().begin(), u->src().end());
      for (size_t i = 0; i < ts.size(); i++) scratch_[i] = nodes[src_idx_[i]].u;
      r = &keep(UOp::make(u->op(), u->dtype(), scratch_, u->arg()));
      if (u->tag()) r->tagged(u->tag());
    }
    UOp folded = r == u && changed ? UOp() : fold(*r, k);
    if (!folded) {
      const uint32_t* known = r != u ? memo_.find(r->get()) : nullptr;
      uint32_t n = known ? *known : add(*r, k);
      memo_[u->get()] = n;
      stack.pop_back();
      continue;
    }
    f.folded = &keep(std::move(folded));
    stack.push_back({f.folded, 0, nullptr});
  }
  return *memo_.find(root.get());
}

namespace {
// Whether u is a constant in the canonical form (fold.h), which the rules would only rebuild.
bool canonical_const(const UOp& u) {
  const UOp* x = &u;
  if (x->op() == Op::Expand) x = &x->src(0);
  if (x->op() != Op::Reshape || x->src(0).op() != Op::Const) return false;
  for (int64_t d : x->arg_as<std::vector<int64_t>>())
    if (d != 1) return false;
  return true;
}
}  // namespace

// Which of fold.h's tables can fire on u with sources src_idx_: a cheap superset of when they do, so most
// nodes never reach the pattern matcher.
struct Foldable {
  bool consts, others, empty;
  bool any() const { return consts || others || empty; }
};
Foldable Graph::foldable(const UOp& u, Kind k) const {
  Foldable f{false, false, false};
  if (k == Kind::Buffer || k == Kind::Const) return f;
  bool all_const = true, zero_or_one = false, const_src = false;
  for (uint32_t i : src_idx_) {
    const Node& s = nodes[i];
    bool c = nodes[s.base].kind == Kind::Const;
    const_src |= c;
    all_const &= c;
    if (c && (s.kind == Kind::Const || canonical_const(s.u))) {
      double v = const_leaf(s.u).const_value();
      zero_or_one |= v == 0 || v == 1;
    }
    f.empty |= s.numel == 0;
  }
  Op op = u.op();
  if (k == Kind::Movement) {
    f.consts = const_src && !canonical_const(u);
    return f;
  }
  // ALU identities need a 0 or 1 (or a constant condition); other roots fold whole constants.
  f.consts = const_src && (all_const || zero_or_one || op == Op::Where || !is_alu(op));
  const Node& s0 = nodes[src_idx_[0]];
  switch (op) {
    case Op::Detach:
    case Op::Copy: f.others = true; break;
    case Op::Contiguous:  // of a CONTIGUOUS, or of a (reshaped) buffer
      f.others = s0.u.op() == Op::Contiguous || nodes[s0.base].kind == Kind::Buffer;
      break;
    case Op::Where: f.others = src_idx_[1] == src_idx_[2]; break;
    case Op::ReduceAxis: {  // of a reduce, or over an axis of size 1
      f.others = s0.u.op() == Op::ReduceAxis;
      for (int64_t a : u.arg_as<ReduceArg>().axes) f.others |= s0.u.shape()[size_t(a)] == 1;
      break;
    }
    default: break;
  }
  f.empty |= prod(u.shape()) == 0;
  return f;
}
bool Graph::may_fold(const UOp& u, Kind k) const { return foldable(u, k).any(); }

UOp Graph::fold(const UOp& u, Kind k) const {
  Foldable f = foldable(u, k);
  UOp out = f.consts ? fold_const_rules.rewrite(u) : UOp();
  if (!out && f.others) out = fold_rules.rewrite(u);
  if (!out && f.empty) out = fold_empty_rules.rewrite(u);
  return out;
}

uint32_t Graph::add(const UOp& u, Kind k) {
  uint32_t idx = uint32_t(nodes.size());
  Node& n = nodes.emplace_back();
  n.u = u;
  n.kind = k;
  n.base = idx;
  n.src_begin = uint32_t(srcs.size());
  n.nsrc = uint32_t(src_idx_.size());
  n.numel = prod(u.shape());
  for (uint32_t si : src_idx_) {
    srcs.push_back(si);
    if (!n.device) n.device = nodes[si].device;
  }
  switch (k) {
    case Kind::Buffer: n.device = &(u.op() == Op::Buffer ? u : u.src(0)).src(0); break;
    case Kind::Const: n.device = u.num_src() ? &u.src(0) : nullptr; break;
    case Kind::Movement: {
      const Node& s = nodes[src_idx_[0]];
      n.base = s.base;
      bool below = s.kind == Kind::Movement;
      n.has_pad = u.op() == Op::Pad || (below && s.has_pad);
      n.reshapes = u.op() == Op::Reshape && (!below || s.reshapes);
      break;
    }
    case Kind::Compute:
      if (u.op() == Op::Copy) n.device = &u.src(1);
      break;
  }
  memo_[u.get()] = idx;
  return idx;
}

// Liveness from the outputs, then the users of every live Compute node (CSR, users in topological order).
void Graph::link() {
  for (uint32_t o : outputs) nodes[o].live = true;
  for (uint32_t i = uint32_t(nodes.size()); i-- > 0;)
    if (nodes[i].live)
      for (uint32_t s : src(i)) nodes[s].live = true;
  // An ASSIGN's target is where it writes, not a value it reads: it is no edge.
  auto read_srcs = [&](uint32_t y) { return op(y) == Op::Assign ? src(y).subspan(1) : src(y); };
  for (uint32_t y = 0; y < nodes.size(); y++) {
    if (!nodes[y].live || nodes[y].kind != Kind::Compute) continue;
    for (uint32_t s : read_srcs(y))
      if (nodes[base(s)].kind == Kind::Compute) nodes[base(s)].nedge++;
  }
  uint32_t total = 0;
  for (Node& n : nodes) {
    n.edge_begin = total;
    total += n.nedge;
    n.nedge = 0;
  }
  edges.resize(total);
  for (uint32_t y = 0; y < nodes.size(); y++) {
    if (!nodes[y].live || nodes[y].kind != Kind::Compute) continue;
    for (uint32_t s : read_srcs(y)) {
      Node& b = nodes[base(s)];
      if (b.kind == Kind::Compute) edges[b.edge_begin + b.nedge++] = {y, s};
    }
  }
}

const UOp& Graph::view(uint32_t n) {
  Node& nd = nodes[n];
  if (nd.view) return nd.view;
  if (nd.kind != Kind::Movement) return nd.view = identity_view(shape(n));
  // A constant read through views without padding is the same value everywhere.
  if (nodes[nd.base].kind == Kind::Const && !nd.has_pad) return nd.view = broadcast_view(shape(n));
  chain_.clear();
  uint32_t below = n;
  for (; nodes[below].kind == Kind::Movement; below = src(below)[0]) chain_.push_back(&nodes[below].u);
  std::reverse(chain_.begin(), chain_.end());
  return nd.view = chain_view(shape(below), chain_);
}

}  // namespace sluice::sched
