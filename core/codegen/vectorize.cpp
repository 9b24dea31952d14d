#include "core/codegen/vectorize.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/codegen/opts.h"

namespace sluice::codegen {
namespace {

// idx as base + offset with a constant offset: the sum's terms flattened, constants summed, the rest
// rebuilt in order (so lanes of one access share their base node).
void terms(const UOp& e, std::vector<UOp>& out, int64_t& off) {
  if (e.op() == Op::Add) {
    terms(e.src(0), out, off);
    terms(e.src(1), out, off);
  } else if (e.is_const()) {
    off += e.const_int_value();
  } else {
    out.push_back(e);
  }
}
std::pair<UOp, int64_t> split_offset(const UOp& idx) {
  std::vector<UOp> ts;
  int64_t off = 0;
  terms(idx, ts, off);
  UOp base;
  for (const UOp& t : ts) base = base ? base + t : t;
  return {base ? base : UOp::const_int(idx.dtype(), 0), off};
}

// Whether an index expression is provably a multiple of n.
bool multiple_of(const UOp& e, int64_t n) {
  switch (e.op()) {
    case Op::Const: return e.const_int_value() % n == 0;
    case Op::Add: return multiple_of(e.src(0), n) && multiple_of(e.src(1), n);
    case Op::Mul:
      return (e.src(1).is_const() && e.src(1).const_int_value() % n == 0) || multiple_of(e.src(0), n) ||
             multiple_of(e.src(1), n);
    default: return false;
  }
}

// A float32 LOAD/STORE of a global buffer, unmasked; on a CPU also a LOAD masked by a gate (INDEX's third
// source), which merges with the loads beside it under the same gate.
bool candidate(const UOp& access, bool cpu) {
  const UOp& ix = access.src(0);
  const DType dt = access.op() == Op::Load ? access.dtype() : access.src(1).dtype();
  const bool gated = cpu && access.op() == Op::Load && ix.num_src() == 3;
  return ix.op() == Op::Index && (ix.num_src() == 2 || gated) && ix.src(0).op() == Op::DefineGlobal &&
         dt == dtypes::float32 && (access.op() == Op::Store || access.num_src() == 1);
}

// Packs the lanes of a vector store into vector arithmetic (superword-level parallelism; the table in
// vectorize.h): where every lane applies the same float32 op, one vector op of the packed sources replaces
// them. Lanes that differ are gathered, so the result is always a vector of the lanes' values.
class Packer {
 public:
  // done: scalar loads -> GEPs of the vector loads that replace them; grows with every node fix() remakes.
  Packer(int64_t next_reg, std::unordered_map<const UOpNode*, UOp>& done)
      : next_reg_(next_reg), done_(done) {}

  // u over the replaced loads: remade where a source changed (memoized in done). Iterative: elementwise
  // chains can be deeper than a thread's stack.
  UOp fix(const UOp& root) {
    if (auto it = done_.find(root.get()); it != done_.end()) return it->second;
    std::vector<std::pair<UOp, size_t>> todo{{root, 0}};  // node, next source to visit
    std::vector<UOp> src;
    while (!todo.empty()) {
      const UOp u = todo.back().first;
      const size_t i = todo.back().second++;
      if (i < u.num_src()) {
        if (!done_.count(u.src(i).get())) todo.emplace_back(u.src(i), 0);
        continue;
      }
      todo.pop_back();
      if (done_.count(u.get())) continue;  // reached twice before it was done
      src.clear();
      bool changed = false;
      for (const UOp& x : u.src()) {
        src.push_back(done_.at(x.get()));
        changed |= !(src.back() == x);
      }
      done_.emplace(u.get(), changed ? u.with_src(src) : u);
    }
    return done_.at(root.get());
  }

  // root is replaced by value, packed apart from any store (a Split reduce's partials): lanes made of
  // such roots are gathered, not packed again from below.
  void seed(const UOp& root, const UOp& value) {
    done_.emplace(root.get(), value);
    seeded_.insert(root.get());
  }

  UOp pack(const std::vector<UOp>& lanes) {
    std::vector<const UOpNode*> key;
    key.reserve(lanes.size());
    for (const UOp& l : lanes) key.push_back(l.get());
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    UOp r = build(lanes);
    memo_.emplace(std::move(key), r);
    return r;
  }

 private:
  static bool same_op(const std::vector<UOp>& lanes, Op op) {
    for (const UOp& l : lanes)
      if (l.op() != op || l.dtype() != dtypes::float32) return false;
    return true;
  }
  static std::vector<UOp> srcs(const std::vector<UOp>& lanes, size_t i) {
    std::vector<UOp> out;
    out.reserve(lanes.size());
    for (const UOp& l : lanes) out.push_back(l.src(i));
    return out;
  }
  UOp gather(const std::vector<UOp>& lanes) {
    std::vector<UOp> fixed;
    for (const UOp& l : lanes) fixed.push_back(fix(l));
    return UOp::make(Op::Vectorize, lanes[0].dtype().vec(int(lanes.size())), fixed);
  }

  UOp build(const std::vector<UOp>& lanes) {
    const UOp& l0 = lanes[0];
    const size_t w = lanes.size();
    const DType vt = dtypes::float32.vec(int(w));
    if (l0.dtype() != dtypes::float32) return gather(lanes);
    if (std::all_of(lanes.begin(), lanes.end(), [&](const UOp& l) { return l == l0; })) return gather(lanes);
    if (std::any_of(lanes.begin(), lanes.end(), [&](const UOp& l) { return seeded_.count(l.get()); }))
      return gather(lanes);
    if (l0.op() == Op::Load) {  // lane j of one vector load
      UOp v;
      for (size_t j = 0; j < w; ++j) {
        const UOp g = fix(lanes[j]);
        if (g.op() != Op::Gep || g.arg_as<int64_t>() != int64_t(j) || (j && !(g.src(0) == v))) {
          v = UOp();
          break;
        }
        v = g.src(0);
      }
      if (v && v.dtype().count == w) return v;
    }
    switch (l0.op()) {
      case Op::Add:
        if (!same_op(lanes, Op::Add)) break;
        for (size_t m : {1, 0})  // acc + b*c, as lowered reductions build it
          if (same_op(srcs(lanes, m), Op::Mul)) {
            const std::vector<UOp> mul = srcs(lanes, m);
            return UOp::make(Op::MulAcc, vt,
                             {pack(srcs(mul, 0)), pack(srcs(mul, 1)), pack(srcs(lanes, 1 - m))});
          }
        [[fallthrough]];
      case Op::Sub:
      case Op::Mul:
      case Op::FDiv:
      case Op::Max:
        if (!same_op(lanes, l0.op()) || l0.src(0).dtype() != dtypes::float32) break;
        return UOp::make(l0.op(), vt, {pack(srcs(lanes, 0)), pack(srcs(lanes, 1))});
      case Op::Neg:
      case Op::Recip:
      case Op::Exp2:
      case Op::Log2:
      case Op::Sin:
      case Op::Sqrt:
      case Op::Trunc:
        if (!same_op(lanes, l0.op()) || l0.src(0).dtype() != dtypes::float32) break;
        return UOp::make(l0.op(), vt, {pack(srcs(lanes, 0))});
      case Op::Assign: {
        if (!same_op(lanes, Op::Assign)) break;
        const UOp acc = reg(srcs(lanes, 0));
        if (!acc) break;
        return UOp::make(Op::Assign, vt, {acc, pack(srcs(lanes, 1))});
      }
      case Op::DefineReg:
        if (UOp acc = reg(lanes)) return acc;
        break;
      default: break;
    }
    return gather(relane(lanes));
  }

  // Lanes that stay scalar, rebuilt over packed sources (GEPs of them) where their float32 operands pack,
  // so the scalar graph below them (a second set of accumulators) does not survive beside the vectors.
  std::vector<UOp> relane(const std::vector<UOp>& lanes) {
    std::vector<const UOpNode*> key;
    for (const UOp& l : lanes) key.push_back(l.get());
    if (auto it = relaned_.find(key); it != relaned_.end()) return it->second;
    std::vector<UOp> r = relane_new(lanes);
    relaned_.emplace(std::move(key), r);
    return r;
  }
  std::vector<UOp> relane_new(const std::vector<UOp>& lanes) {
    const UOp& l0 = lanes[0];
    const bool same = std::all_of(lanes.begin(), lanes.end(), [&](const UOp& l) {
      return l.op() == l0.op() && l.dtype() == l0.dtype() && l.num_src() == l0.num_src();
    });
    if (!same || !(is_alu(l0.op()) || l0.op() == Op::Cast) || l0 == lanes.back()) {
      std::vector<UOp> fixed;
      for (const UOp& l : lanes) fixed.push_back(fix(l));
      return fixed;
    }
    std::vector<std::vector<UOp>> in;  // per source position, its new lanes
    for (size_t i = 0; i < l0.num_src(); ++i) {
      const std::vector<UOp> src = srcs(lanes, i);
      if (!std::all_of(src.begin(), src.end(), [](const UOp& x) { return x.dtype() == dtypes::float32; })) {
        in.push_back(relane(src));
        continue;
      }
      const UOp v = pack(src);
      std::vector<UOp> out;
      for (size_t j = 0; j < src.size(); ++j)
        out.push_back(v.op() == Op::Vectorize ? v.src(j)
                                              : UOp::make(Op::Gep, dtypes::float32, {v}, int64_t(j)));
      in.push_back(std::move(out));
    }
    std::vector<UOp> out;
    for (size_t j = 0; j < lanes.size(); ++j) {
      std::vector<UOp> sj;
      for (const std::vector<UOp>& x : in) sj.push_back(x[j]);
      out.push_back(lanes[j].with_src(sj));
    }
    return out;
  }

  // One vector accumulator for scalar ones that share their initial value and loops; null otherwise.
  UOp reg(const std::vector<UOp>& lanes) {
    std::vector<const UOpNode*> key;
    for (const UOp& l : lanes) key.push_back(l.get());
    if (auto it = regs_.find(key); it != regs_.end()) return it->second;
    const UOp& l0 = lanes[0];
    UOp r;
    bool ok = same_op(lanes, Op::DefineReg);
    for (size_t j = 1; ok && j < lanes.size(); ++j)
      ok = lanes[j].src().size() == l0.src().size() &&
           std::equal(l0.src().begin(), l0.src().end(), lanes[j].src().begin());
    if (ok) {
      std::vector<UOp> src(l0.src().begin(), l0.src().end());
      src[0] = gather(std::vector<UOp>(lanes.size(), l0.src(0)));
      r = UOp::make(Op::DefineReg, dtypes::float32.vec(int(lanes.size())), src, next_reg_++);
    }
    regs_.emplace(std::move(key), r);
    return r;
  }

  std::map<std::vector<const UOpNode*>, UOp> memo_, regs_;
  std::map<std::vector<const UOpNode*>, std::vector<UOp>> relaned_;
  int64_t next_reg_;
  std::unordered_map<const UOpNode*, UOp>& done_;
  std::unordered_set<const UOpNode*> seeded_;
};

// The partial accumulators a tree of float32 ADDs combines (a Split reduce, after its loops: lower.cpp), in
// order; empty unless there are 4 or more (two reductions of one kernel added are left alone), at most
// kMaxUpcast, and every leaf is one, over the same loops as the others. Iterative, and it looks at both
// operands of a node before going deeper, so a sum chain with another leaf at each level stops at once:
// such chains can be deeper than a thread's stack.
std::vector<UOp> partials_of(const UOp& root) {
  auto add = [](const UOp& x) { return x.op() == Op::Add && x.dtype() == dtypes::float32; };
  UOp reg;  // the first partial's accumulator
  auto partial = [&](const UOp& l) {
    if (l.op() != Op::Assign || l.src(0).op() != Op::DefineReg) return false;
    if (!reg) reg = l.src(0);
    return std::equal(l.src(0).src().begin(), l.src(0).src().end(), reg.src().begin(), reg.src().end());
  };
  std::vector<UOp> leaves, todo{root};
  while (!todo.empty()) {
    const UOp x = todo.back();
    todo.pop_back();
    if (!add(x)) {  // checked with its parent
      leaves.push_back(x);
      continue;
    }
    for (const UOp& o : x.src())
      if (!add(o) && !partial(o)) return {};
    if (leaves.size() + todo.size() + 2 > size_t(kMaxUpcast)) return {};
    todo.push_back(x.src(1));
    todo.push_back(x.src(0));
  }
  return leaves.size() >= 4 ? leaves : std::vector<UOp>{};
}

// A Split reduce's partials become vector accumulators of at most `width` lanes, and their combination a
// sum of the lanes. Seeded here, since no vector store leads the packer to them.
void pack_partials(const std::vector<UOp>& topo, int width, Packer& packer) {
  std::unordered_set<const UOpNode*> inner;  // nodes inside a tree already packed
  for (size_t t = topo.size(); t-- > 0;) {
    const UOp& u = topo[t];
    if (u.op() != Op::Add || u.dtype() != dtypes::float32 || inner.count(u.get())) continue;
    const std::vector<UOp> leaves = partials_of(u);
    if (leaves.empty()) continue;
    std::vector<UOp> todo{u};  // mark the tree's inner nodes
    while (!todo.empty()) {
      const UOp x = todo.back();
      todo.pop_back();
      if (x.op() != u.op() || x.dtype() != dtypes::float32) continue;
      inner.insert(x.get());
      todo.push_back(x.src(0)), todo.push_back(x.src(1));
    }
    UOp sum;
    for (size_t k = 0; k < leaves.size(); k += size_t(width)) {
      const std::vector<UOp> lanes(leaves.begin() + long(k),
                                   leaves.begin() + long(std::min(leaves.size(), k + width)));
      const UOp v = lanes.size() > 1 ? packer.pack(lanes) : packer.fix(lanes[0]);
      for (size_t j = 0; j < lanes.size(); ++j) {
        const UOp lane = lanes.size() == 1         ? v
                         : v.op() == Op::Vectorize ? v.src(j)
                                                   : UOp::make(Op::Gep, dtypes::float32, {v}, int64_t(j));
        sum = sum ? sum.alu(u.op(), lane) : lane;
      }
    }
    packer.seed(u, sum);
  }
}

}  // namespace

int64_t registers_for_lanes(int64_t lanes, const std::vector<int>& widths_in) {
  std::vector<int> widths = widths_in;
  std::sort(widths.rbegin(), widths.rend());
  int64_t regs = 0;
  for (int w : widths)
    for (; lanes >= w; lanes -= w) ++regs;
  return regs + (lanes > 0);
}

UOp vectorize(const UOp& sink, const std::vector<int>& widths_in) {
  std::vector<int> widths = widths_in;
  std::sort(widths.rbegin(), widths.rend());
  if (widths.empty() || widths.front() < 2) return sink;
  // Wide vectors are the CPU's: its C vector types are unaligned (renderers/cstyle.cpp), and they pay off
  // in arithmetic too. GPUs' 2- and 4-wide accesses must be aligned and only save instructions.
  const bool cpu = widths.front() >= 8;
  // Accesses by (op, buffer, base, gate) -> offset -> node.
  using Key = std::tuple<int, const UOpNode*, const UOpNode*, const UOpNode*>;
  std::map<Key, std::map<int64_t, UOp>> groups;
  std::map<Key, UOp> bases;
  const std::vector<UOp> topo = sink.toposort();
  for (const UOp& u : topo) {
    if ((u.op() != Op::Load && u.op() != Op::Store) || !candidate(u, cpu)) continue;
    auto [base, off] = split_offset(u.src(0).src(1));
    Key k{int(u.op()), u.src(0).src(0).get(), base.get(),
          u.src(0).num_src() == 3 ? u.src(0).src(2).get() : nullptr};
    groups[k].emplace(off, u);
    bases.emplace(k, base);
  }
  std::vector<std::pair<UOp, UOp>> subst;  // scalar load -> GEP of a vector load
  std::vector<UOp> gone;                   // scalar stores merged into vector stores
  std::vector<UOp> new_stores;
  for (auto& [k, by_off] : groups) {
    const UOp& base = bases.at(k);
    for (auto it = by_off.begin(); it != by_off.end();) {
      const int64_t off = it->first;
      int width = 0;
      for (int w : widths) {
        if (!cpu && (off % w != 0 || !multiple_of(base, w))) continue;
        bool run = true;
        for (int j = 1; j < w && run; ++j) run = by_off.count(off + j) > 0;
        if (run) {
          width = w;
          break;
        }
      }
      if (!width) {
        ++it;
        continue;
      }
      const UOp& first = it->second;
      std::vector<UOp> ix_src(first.src(0).src().begin(), first.src(0).src().end());  // buffer, index[, gate]
      ix_src[1] = off ? base + off : base;
      UOp ix = first.src(0).with_src(ix_src);
      const DType vt = dtypes::float32.vec(width);
      if (std::get<0>(k) == int(Op::Load)) {
        UOp v = UOp::make(Op::Load, vt, {ix});
        for (int j = 0; j < width; ++j)
          subst.emplace_back(by_off.at(off + j), UOp::make(Op::Gep, dtypes::float32, {v}, int64_t(j)));
      } else {
        std::vector<UOp> lanes;
        for (int j = 0; j < width; ++j) {
          lanes.push_back(by_off.at(off + j).src(1));
          gone.push_back(by_off.at(off + j));
        }
        new_stores.push_back(UOp::make(Op::Store, dtypes::void_, {ix, UOp::make(Op::Vectorize, vt, lanes)}));
      }
      it = by_off.lower_bound(off + width);
    }
  }
  if (subst.empty() && gone.empty()) return sink;
  std::unordered_map<const UOpNode*, UOp> done;
  done.reserve(topo.size() + subst.size());
  for (auto& [from, to] : subst) done.emplace(from.get(), to);
  if (cpu) {
    // Packed from the scalar graph as lowered; only what stays scalar is remade over the vector loads.
    int64_t next_reg = 0;
    for (const UOp& u : topo)
      if (u.op() == Op::DefineReg) next_reg = std::max(next_reg, u.arg_as<int64_t>() + 1);
    Packer packer(next_reg, done);
    pack_partials(topo, widths.front(), packer);
    std::vector<UOp> stores;
    for (const UOp& st : sink.src())
      if (std::find(gone.begin(), gone.end(), st) == gone.end()) stores.push_back(packer.fix(st));
    for (const UOp& st : new_stores) {
      const std::vector<UOp> lanes(st.src(1).src().begin(), st.src(1).src().end());
      stores.push_back(st.with_src({st.src(0), packer.pack(lanes)}));
    }
    return UOp::sink(stores);
  }
  // One rebuild in the topological order we have: every node whose sources changed is remade.
  std::vector<UOp> srcs;
  auto rebuilt = [&](const UOp& u) -> UOp {
    if (auto it = done.find(u.get()); it != done.end()) return it->second;
    srcs.clear();
    bool changed = false;
    for (const UOp& x : u.src()) {
      auto it = done.find(x.get());
      srcs.push_back(it == done.end() ? x : it->second);
      changed |= !(srcs.back() == x);
    }
    UOp r = changed ? u.with_src(srcs) : u;
    done.emplace(u.get(), r);
    return r;
  };
  for (const UOp& u : topo)
    if (u.op() != Op::Sink) rebuilt(u);
  std::vector<UOp> stores;
  for (const UOp& st : sink.src())
    if (std::find(gone.begin(), gone.end(), st) == gone.end()) stores.push_back(done.at(st.get()));
  for (const UOp& st : new_stores) {  // their lanes may read replaced loads
    std::vector<UOp> lanes;
    for (const UOp& l : st.src(1).src()) lanes.push_back(done.count(l.get()) ? done.at(l.get()) : l);
    stores.push_back(st.with_src({st.src(0), st.src(1).with_src(lanes)}));
  }
  return UOp::sink(stores);
}

}  // namespace sluice::codegen
