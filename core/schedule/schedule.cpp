// schedule / kernelize: graph (graph.h) -> kernel plans (grouping.h) -> ASTs (ast.h) -> topological order.
#include "core/schedule/schedule.h"

#include <functional>
#include <queue>

#include "base/error.h"
#include "core/schedule/ast.h"
#include "core/schedule/grouping.h"

namespace sluice {

using namespace sched;

size_t KernelInfo::hash() const { return ast.hash() * 31 + num_bufs; }
bool KernelInfo::equals(const ArgObject& other) const {
  auto* o = dynamic_cast<const KernelInfo*>(&other);
  return o && o->ast == ast && o->metadata == metadata && o->num_bufs == num_bufs;
}
std::string KernelInfo::str() const {
  std::string s =
      "<Kernel " + std::to_string(ast.toposort().size()) + " " + std::string(op_name(ast.op())) + "(";
  if (ast.op() == Op::Sink)
    for (const UOp& x : ast.src()) s += std::string(op_name(x.op())) + ", ";
  s += ") (";
  for (size_t i = 0; i < metadata.size(); i++) s += (i ? ", " : "") + metadata[i];
  return s + ")>";
}

std::string ast_str(const ScheduleItem& item) { return item.ast.str(); }

namespace {

struct Built {
  Graph g;
  std::vector<KernelPlan> plans;
  std::vector<KernelAst> asts;
  std::vector<UOp> buffer_of;                // per node: the BUFFER holding it (realized nodes and leaves)
  std::vector<uint32_t> order;               // kernels, topological
  std::vector<std::vector<uint32_t>> after;  // per kernel: kernels to run first that it does not read

  explicit Built(const std::vector<UOp>& outputs) : g(outputs) {}
};

// UOp::new_buffer (BUFFER(DEVICE, UNIQUE), uop.h) on a DEVICE node the graph holds: no lookup by name.
UOp new_buffer(const UOp& device, DType dt, int64_t size) {
  UOp unique = UOp::make(Op::Unique, dtypes::void_, {},
                         std::shared_ptr<const ArgObject>(std::make_shared<Identity>()));
  return UOp::make(Op::Buffer, dt, {device, unique}, size);
}

// Memory for every realized node: a new buffer, or the target's buffer for an ASSIGN.
void allocate(Built& b) {
  Graph& g = b.g;
  b.buffer_of.resize(g.nodes.size());
  for (uint32_t n = 0; n < g.nodes.size(); n++) {
    const Node& nd = g.nodes[n];
    if (!nd.live) continue;
    if (nd.kind == Kind::Buffer) b.buffer_of[n] = nd.u.op() == Op::Buffer ? nd.u : nd.u.src(0);
    if (nd.kind != Kind::Compute || !nd.realized) continue;
    if (nd.u.op() == Op::Assign) {
      b.buffer_of[n] = b.buffer_of[g.base(g.src(n)[0])];
      SLUICE_CHECK_IN(Error, "schedule", b.buffer_of[n])
          << "the target of an assign must be a buffer (or a view of one), not "
          << op_name(g.op(g.base(g.src(n)[0])));
      continue;
    }
    SLUICE_CHECK_IN(Error, "schedule", nd.device)
        << "cannot tell which device " << op_name(nd.u.op()) << " of shape " << tuple_str(g.shape(n))
        << " lives on: it has no buffer or device constant below it";
    b.buffer_of[n] = new_buffer(*nd.device, nd.u.dtype(), nd.numel);
  }
}

// Kahn's algorithm, smallest kernel first (kernels are numbered in the order of their first store), over:
// a kernel runs after the kernels whose outputs it reads; a kernel that writes a buffer in place runs
// after the writer of the version it overwrites and after every other reader of that version.
void order(Built& b) {
  Graph& g = b.g;
  size_t nk = b.plans.size();
  std::vector<std::vector<uint32_t>> succ(nk);
  std::vector<uint32_t> indeg(nk, 0);
  b.after.assign(nk, {});
  auto edge = [&](uint32_t from, uint32_t to) {
    if (from == to) return;
    succ[from].push_back(to);
    indeg[to]++;
  };
  for (uint32_t k = 0; k < nk; k++)
    for (uint32_t n : b.asts[k].reads)
      if (g.nodes[n].kind == Kind::Compute) edge(uint32_t(g.nodes[n].kernel), k);
  // Versions an in-place write replaces, and who reads them.
  FlatMap<uint32_t, std::vector<uint32_t>> readers(8);
  for (uint32_t k = 0; k < nk; k++)
    for (uint32_t s : b.plans[k].stores)
      if (g.op(s) == Op::Assign) readers.get(g.base(g.src(s)[0]));
  for (uint32_t k = 0; k < nk; k++)
    for (uint32_t n : b.asts[k].reads)
      if (auto* r = readers.find(n)) r->push_back(k);
  for (uint32_t k = 0; k < nk; k++)
    for (uint32_t s : b.plans[k].stores) {
      if (g.op(s) != Op::Assign) continue;
      uint32_t version = g.base(g.src(s)[0]);
      auto first = [&](uint32_t j) {
        if (j == k) return;
        edge(j, k);
        if (std::find(b.after[k].begin(), b.after[k].end(), j) == b.after[k].end()) b.after[k].push_back(j);
      };
      if (g.nodes[version].kind == Kind::Compute) first(uint32_t(g.nodes[version].kernel));
      for (uint32_t j : *readers.find(version)) first(j);
    }
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t k = 0; k < nk; k++)
    if (indeg[k] == 0) ready.push(k);
  while (!ready.empty()) {
    uint32_t k = ready.top();
    ready.pop();
    b.order.push_back(k);
    for (uint32_t j : succ[k])
      if (--indeg[j] == 0) ready.push(j);
  }
  SLUICE_CHECK_IN(Error, "schedule", b.order.size() == nk)
      << "the kernels form a cycle: a kernel reads a buffer both before and after an in-place write to it";
}

Built build(const std::vector<UOp>& outputs) {
  Built b(outputs);
  b.plans = plan_kernels(b.g);
  allocate(b);
  b.asts = build_asts(b.g, b.plans, b.buffer_of);
  order(b);
  return b;
}

// Node n as it is once realized: its movement ops over `mem(x)`, the memory holding the realized node x
// below them (an ASSIGN is its target, viewed as the target was, over the assigned memory).
UOp realized_form(Graph& g, uint32_t n, const std::function<UOp(uint32_t)>& mem,
                  const UOp& assigned = UOp()) {
  const Node& nd = g.nodes[n];
  switch (nd.kind) {
    case Kind::Movement:
      return UOp::make(nd.u.op(), nd.u.dtype(), {realized_form(g, g.src(n)[0], mem, assigned)}, nd.u.arg());
    case Kind::Compute:
      if (nd.u.op() == Op::Assign) return realized_form(g, g.src(n)[0], mem, assigned ? assigned : mem(n));
      return mem(n).reshape(g.shape(n));
    default: return assigned ? assigned.reshape(g.shape(n)) : nd.u;
  }
}

// The kernels of an earlier kernelize still held by the graph: they have not run, so they run first.
void add_external(Built& b, std::vector<ScheduleItem>& items) {
  FlatMap<const UOpNode*, bool> done(16);
  std::vector<std::pair<UOp, size_t>> stack;
  for (const Node& nd : b.g.nodes) {
    if (!nd.live || nd.kind != Kind::Buffer || nd.u.op() != Op::Assign) continue;
    stack.push_back({nd.u.src(1), 0});
    while (!stack.empty()) {
      auto& [k, next] = stack.back();
      if (done.find(k.get()) && next == 0) {
        stack.pop_back();
        continue;
      }
      if (next < k.num_src()) {
        const UOp& s = k.src(next++);
        if (s.op() == Op::Assign && s.src(1).op() == Op::Kernel && !done.find(s.src(1).get()))
          stack.push_back({s.src(1), 0});
        continue;
      }
      UOp kernel = k;
      stack.pop_back();
      if (done.get(kernel.get())) continue;
      done[kernel.get()] = true;
      auto& info = static_cast<const KernelInfo&>(*kernel.arg_as<std::shared_ptr<const ArgObject>>());
      ScheduleItem item{info.ast, {}, info.metadata};
      for (size_t i = 0; i < info.num_bufs; i++)
        item.bufs.push_back(kernel.src(i).op() == Op::Buffer ? kernel.src(i) : kernel.src(i).src(0));
      items.push_back(std::move(item));
    }
  }
}

}  // namespace

Schedule schedule(const std::vector<UOp>& outputs) {
  Built b = build(outputs);
  Schedule out;
  add_external(b, out.items);
  for (uint32_t k : b.order) {
    KernelAst& a = b.asts[k];
    out.items.push_back({a.ast, std::move(a.bufs), std::move(a.metadata)});
  }
  auto mem = [&](uint32_t n) { return b.buffer_of[n]; };
  for (size_t i = 0; i < outputs.size(); i++) {
    UOp form = realized_form(b.g, b.g.outputs[i], mem);
    if (!(form == outputs[i])) out.becomes.push_back({outputs[i], form});
  }
  return out;
}

std::vector<UOp> kernelize(const std::vector<UOp>& outputs) {
  Built b = build(outputs);
  Graph& g = b.g;
  std::vector<UOp> assigned(g.nodes.size());  // per realized node: ASSIGN(BUFFER, KERNEL)
  std::vector<UOp> srcs;
  for (uint32_t k : b.order) {
    const KernelAst& a = b.asts[k];
    srcs.assign(a.bufs.begin(), a.bufs.begin() + ptrdiff_t(a.num_outputs));
    for (uint32_t n : a.inputs) srcs.push_back(g.nodes[n].kind == Kind::Compute ? assigned[n] : g.nodes[n].u);
    for (uint32_t j : b.after[k]) srcs.push_back(assigned[b.plans[j].stores[0]]);
    auto info = std::make_shared<KernelInfo>(a.ast, a.metadata, a.bufs.size());
    UOp kernel = UOp::make(Op::Kernel, dtypes::void_, srcs, std::shared_ptr<const ArgObject>(info));
    for (size_t i = 0; i < a.num_outputs; i++)
      assigned[b.plans[k].stores[i]] = UOp::make(Op::Assign, a.bufs[i].dtype(), {a.bufs[i], kernel});
  }
  std::vector<UOp> out;
  auto mem = [&](uint32_t n) { return assigned[n]; };
  for (uint32_t o : g.outputs) out.push_back(realized_form(g, o, mem));
  return out;
}

}  // namespace sluice
