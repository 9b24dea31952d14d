// One kernel's AST: a walk down from each stored node carrying the view T from the kernel's shape to the
// current node's elements (null: the node's own shape, dense). Movement ops compose into T; a reduce
// starts a fresh T on its input (the kernel's full shape); leaves become LOAD/CONST with T as their VIEW.
#include "core/schedule/ast.h"

#include <array>
#include <cstring>
#include <deque>

#include "base/error.h"

namespace sluice::sched {

UOp layout(Graph& g, uint32_t n) {
  if (g.op(n) != Op::Assign || g.nodes[n].kind != Kind::Compute) return UOp();
  uint32_t target = g.src(n)[0], tb = g.base(target);
  SLUICE_CHECK_IN(Error, "schedule", g.nodes[tb].kind == Kind::Buffer || g.op(tb) == Op::Assign)
      << "the target of an assign must be a buffer (or a view of one), not " << op_name(g.op(tb));
  UOp v = compose(layout(g, tb), g.nodes[target].kind == Kind::Movement ? g.view(target) : UOp());
  if (v && st_of(v).contiguous() && st_of(v).shape() == g.shape(n)) return UOp();
  return v;
}

namespace {

// One builder serves all kernels of a schedule: its tables are cleared, not reallocated, between kernels.
class Builder {
 public:
  Builder(Graph& g, const std::vector<UOp>& buffer_of) : g_(g), buffer_of_(buffer_of) {}

  KernelAst run(const KernelPlan& plan) {
    plan_ = &plan;
    out_ = KernelAst();
    index_.clear();
    memo_.clear();
    output_reads_.clear();
    store_views_.clear();
    globals_.clear();
    tags_.clear();
    const std::vector<uint32_t>& stores = plan.stores;
    if (g_.op(stores[0]) == Op::Copy) return copy_kernel(stores[0]);
    out_.num_outputs = stores.size();
    for (uint32_t s : stores) global(s);
    // One shape for the whole kernel: the reduce's output shape, or the (single) output's shape.
    const Shape& k = g_.shape(plan_->reduce >= 0 ? uint32_t(plan_->reduce) : stores[0]);
    std::vector<UOp> sink;
    for (size_t i = 0; i < stores.size(); i++) {
      uint32_t s = stores[i];
      UOp t = g_.shape(s) == k ? UOp() : identity_view(k);
      UOp value = value_of(s, t);
      UOp v = compose(layout(g_, s), t);
      store_views_.push_back(v ? v : g_.view(s));
      sink.push_back(UOp::make(Op::Store, dtypes::void_, {global(s), store_views_.back(), value}));
      tag(s);
    }
    // A buffer written in place may be read only where each thread writes it.
    for (auto& [i, v] : output_reads_)
      SLUICE_CHECK_IN(Error, "schedule", v == store_views_[i])
          << "an assign reads its own target at other elements than it writes (a race): make the value "
             "contiguous first, e.g. a.assign(a.T.contiguous() + 1)";
    out_.ast = UOp::sink(sink);
    out_.metadata.assign(tags_.begin(), tags_.end());
    return std::move(out_);
  }

 private:
  // The DEFINE_GLOBAL of the buffer holding node n; the first read of a buffer makes it the next input.
  const UOp& global(uint32_t n) {
    const UOp& buf = buffer_of_[n];
    bool fresh = false;
    uint32_t& i = index_.get(buf.get(), &fresh);
    if (fresh) {
      i = uint32_t(out_.bufs.size());
      out_.bufs.push_back(buf);
      globals_.push_back(UOp::make(
          Op::DefineGlobal, buf.dtype().ptr(AddrSpace::Global, buf.arg_as<int64_t>()), {}, int64_t(i)));
      if (out_.bufs.size() > out_.num_outputs) out_.inputs.push_back(n);
    } else {
      SLUICE_CHECK_IN(Error, "schedule", i < out_.num_outputs || out_.inputs[i - out_.num_outputs] == n)
          << "a kernel reads one buffer both before and after an in-place write to it";
    }
    return globals_[i];
  }

  // T, or null when T is the identity on n's own shape (so equal reads memoize as one).
  const UOp& norm(uint32_t n, const UOp& t) const {
    return t && st_of(t).contiguous() && st_of(t).shape() == g_.shape(n) ? null_ : t;
  }

  UOp build(uint32_t n, const UOp& t) {
    std::pair<uint32_t, const UOpNode*> key{n, t.get()};
    if (const UOp* hit = memo_.find(key)) return *hit;
    const Node& nd = g_.nodes[n];
    UOp out;
    switch (nd.kind) {
      case Kind::Movement:
        if (t) {
          UOp below = compose(g_.view(n), t);
          out = build(nd.base, norm(nd.base, below));
        } else {
          out = build(nd.base, norm(nd.base, g_.view(n)));
        }
        if (g_.nodes[nd.base].kind != Kind::Buffer) tag(n);  // a view of an input is no op of this kernel
        break;
      case Kind::Buffer: out = load(n, t); break;
      case Kind::Const: out = UOp::make(Op::Const, nd.u.dtype(), {t ? t : g_.view(n)}, nd.u.arg()); break;
      case Kind::Compute: out = nd.realized ? load(n, t) : op_of(n, t); break;
    }
    memo_[key] = out;
    return out;
  }

  UOp load(uint32_t n, const UOp& t) {
    // Multi-output kernels are formed only where no output reads another (grouping.cpp: isolated).
    SLUICE_CHECK_IN(Error, "schedule",
                    g_.nodes[n].kind != Kind::Compute || g_.nodes[n].kernel != plan_kernel())
        << "internal: a kernel reads its own output";
    const UOp& dg = global(n);
    UOp placed = g_.op(n) == Op::Assign ? compose(layout(g_, n), t) : UOp();  // only an ASSIGN has a layout
    const UOp& v = placed ? placed : t ? t : g_.view(n);
    uint32_t i = uint32_t(dg.arg_as<int64_t>());
    if (i < out_.num_outputs) output_reads_.push_back({i, v});
    if (std::find(out_.reads.begin(), out_.reads.end(), n) == out_.reads.end()) out_.reads.push_back(n);
    return UOp::make(Op::Load, g_.nodes[n].u.dtype(), {dg, v});
  }
  int32_t plan_kernel() const { return g_.nodes[plan_->stores[0]].kernel; }

  // The value a stored node writes: CONTIGUOUS and ASSIGN store their source as it is.
  UOp value_of(uint32_t s, const UOp& t) {
    if (g_.op(s) == Op::Contiguous) return build(g_.src(s)[0], t);
    if (g_.op(s) == Op::Assign) return build(g_.src(s)[1], t);
    return op_of(s, t);
  }

  UOp op_of(uint32_t n, const UOp& t) {
    const UOp& u = g_.nodes[n].u;
    UOp out;
    if (u.op() == Op::ReduceAxis) {
      // Grouping only fuses a reduce whose result reaches the stores as a reshape: the kernel's shape.
      SLUICE_CHECK_IN(Error, "schedule", !t) << "internal: a reduce is read through a view inside its kernel";
      out = UOp::make(Op::ReduceAxis, u.dtype(), {build(g_.src(n)[0], UOp())}, u.arg());
    } else {
      SLUICE_CHECK_IN(Error, "schedule", is_alu(u.op()) || u.op() == Op::Cast || u.op() == Op::Bitcast)
          << "internal: " << op_name(u.op()) << " cannot be fused";
      std::array<UOp, 3> srcs;
      auto ss = g_.src(n);
      for (size_t i = 0; i < ss.size(); i++) {
        // A shape-() constant used as is broadcasts to its user's shape.
        bool scalar = g_.nodes[ss[i]].kind == Kind::Const && g_.shape(ss[i]) != g_.shape(n);
        srcs[i] = scalar ? broadcast(ss[i], n, t) : build(ss[i], t);
      }
      out = UOp::make(u.op(), u.dtype(), std::span<const UOp>(srcs.data(), ss.size()), u.arg());
    }
    tag(n);
    return out;
  }

  UOp broadcast(uint32_t c, uint32_t user, const UOp& t) {
    return UOp::make(Op::Const, g_.nodes[c].u.dtype(), {compose(broadcast_view(g_.shape(user)), t)},
                     g_.nodes[c].u.arg());
  }

  KernelAst copy_kernel(uint32_t c) {
    uint32_t b = g_.base(g_.src(c)[0]);
    SLUICE_CHECK_IN(Error, "schedule", !layout(g_, b))
        << "cannot copy a view of a buffer written in place: make it contiguous first";
    out_.num_outputs = 1;
    UOp dst = global(c), src = global(b);
    out_.reads.push_back(b);
    int64_t bytes = g_.nodes[c].numel * g_.nodes[c].u.dtype().itemsize();
    out_.ast = UOp::make(Op::Copy, g_.nodes[c].u.dtype(), {dst, src}, bytes);
    tag(c);
    out_.metadata.assign(tags_.begin(), tags_.end());
    return std::move(out_);
  }

  // Tags are string literals: equal names are usually one pointer, so strcmp runs rarely.
  void tag(uint32_t n) {
    const char* t = g_.nodes[n].u.tag();
    if (!t) return;
    for (const char* m : tags_)
      if (m == t || std::strcmp(m, t) == 0) return;
    tags_.push_back(t);
  }

  Graph& g_;
  const std::vector<UOp>& buffer_of_;
  const KernelPlan* plan_ = nullptr;
  KernelAst out_;
  FlatMap<const UOpNode*, uint32_t> index_{16};
  FlatMap<std::pair<uint32_t, const UOpNode*>, UOp> memo_{64};
  std::vector<std::pair<uint32_t, UOp>> output_reads_;
  std::vector<UOp> store_views_;
  std::deque<UOp> globals_;  // references to them are handed out while more are added
  std::vector<const char*> tags_;
  const UOp null_;
};

}  // namespace

std::vector<KernelAst> build_asts(Graph& g, const std::vector<KernelPlan>& plans,
                                  const std::vector<UOp>& buffer_of) {
  Builder b(g, buffer_of);
  std::vector<KernelAst> out;
  out.reserve(plans.size());
  for (const KernelPlan& p : plans) out.push_back(b.run(p));
  return out;
}

}  // namespace sluice::sched
