#include "core/codegen/vectorize.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

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

bool candidate(const UOp& access) {  // an unmasked float32 LOAD/STORE of a global buffer
  const UOp& ix = access.src(0);
  const DType dt = access.op() == Op::Load ? access.dtype() : access.src(1).dtype();
  return ix.op() == Op::Index && ix.num_src() == 2 && ix.src(0).op() == Op::DefineGlobal &&
         dt == dtypes::float32 && (access.op() == Op::Store || access.num_src() == 1);
}

}  // namespace

UOp vectorize(const UOp& sink, const std::vector<int>& widths_in) {
  std::vector<int> widths = widths_in;
  std::sort(widths.rbegin(), widths.rend());
  if (widths.empty() || widths.front() < 2) return sink;
  // Accesses by (op, buffer, base) -> offset -> node.
  using Key = std::tuple<int, const UOpNode*, const UOpNode*>;
  std::map<Key, std::map<int64_t, UOp>> groups;
  std::map<Key, UOp> bases;
  const std::vector<UOp> topo = sink.toposort();
  for (const UOp& u : topo) {
    if ((u.op() != Op::Load && u.op() != Op::Store) || !candidate(u)) continue;
    auto [base, off] = split_offset(u.src(0).src(1));
    Key k{int(u.op()), u.src(0).src(0).get(), base.get()};
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
        if (off % w != 0 || !multiple_of(base, w)) continue;
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
      const UOp& buf = first.src(0).src(0);
      UOp idx = off ? base + off : base;
      UOp ix = UOp::make(Op::Index, buf.dtype(), {buf, idx});
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
  // One rebuild in the topological order we have: every node whose sources changed is remade.
  std::unordered_map<const UOpNode*, UOp> done;
  done.reserve(topo.size() + subst.size());
  for (auto& [from, to] : subst) done.emplace(from.get(), to);
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
