#include "core/codegen/lower.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "base/error.h"
#include "core/ir/shape_tracker.h"
#include "core/ir/symbolic.h"

namespace sluice::codegen {
namespace {

const ShapeTracker& st_of(const UOp& view) {
  return static_cast<const ShapeTracker&>(*view.arg_as<std::shared_ptr<const ArgObject>>());
}

// The dtype of a kernel's index arithmetic: int32 unless an index value may reach 2^30. Every value an
// index expression takes is bounded by some view's reach (|offset| + sum |stride| * (size - 1)), by a
// view's element count (the flat position its lower views unravel) or by the iteration space (launch
// ids, loops); the margin up to 2^31 covers the constants that padding, validity and the split of an
// oversized launch dimension add. Buffers over 2^31 elements need int64; most kernels keep int32, which
// GPUs compute faster.
DType index_dtype(const UOp& ast, const Plan& p) {
  constexpr double kLimit = double(int64_t(1) << 30);
  double space = 1;
  for (int64_t s : p.padded) space *= double(s);
  if (space >= kLimit) return dtypes::int64;
  for (const UOp& u : ast.toposort()) {
    if (u.op() == Op::DefineGlobal && double(u.dtype().ptr_size) >= kLimit) return dtypes::int64;
    if (u.op() != Op::View) continue;
    for (const View& v : st_of(u).views) {
      double reach = std::abs(double(v.offset)), size = 1;
      for (size_t a = 0; a < v.shape.size(); ++a) {
        reach += std::abs(double(v.strides[a])) * double(std::max<int64_t>(v.shape[a] - 1, 0));
        size *= double(v.shape[a]);
      }
      if (reach >= kLimit || size >= kLimit) return dtypes::int64;
    }
  }
  return dtypes::index;
}

UOp all(const std::vector<UOp>& conds) {
  UOp out;
  for (const UOp& c : conds) out = out ? out.alu(Op::And, c) : c;
  return out;
}

class Lowerer {
 public:
  Lowerer(const Plan& plan, const DeviceCaps& caps, DType idx_dt) : p_(plan), idx_dt_(idx_dt) {
    // Global pieces onto launch dimensions; the others get their ids, loops or (Upcast/Unroll/Split) values.
    Shape gshape;
    for (const Piece& q : p_.pieces)
      if (q.kind == AxisKind::Global) gshape.push_back(q.size);
    out.global = map_global(gshape, caps, idx_dt);
    idx_.resize(p_.pieces.size());
    size_t gi = 0;
    int lid = 0;
    for (size_t i = 0; i < p_.pieces.size(); ++i) {
      const Piece& q = p_.pieces[i];
      switch (q.kind) {
        case AxisKind::Global: idx_[i] = out.global.axis_idx[gi++]; break;
        case AxisKind::Local:
        case AxisKind::GroupReduce:
          idx_[i] = q.size == 1 ? idx_const(0) : special("lidx" + std::to_string(lid), q.size);
          if (q.size > 1) {
            out.local_size[size_t(lid++)] = uint32_t(q.size);
            lids_.push_back(i);
          }
          if (q.kind == AxisKind::GroupReduce && q.size > 1) groups_.push_back(i);
          break;
        case AxisKind::Loop:
          if (q.size > 1) {
            idx_[i] = UOp::make(Op::Range, idx_dt_, {idx_const(q.size)}, int64_t(i));
            ranges_.push_back(idx_[i]);
          } else {
            idx_[i] = idx_const(0);
          }
          break;
        case AxisKind::Upcast:
        case AxisKind::Unroll:
        case AxisKind::Split: expanded_.push_back(i); break;
      }
    }
    std::vector<UOp> guard;
    if (out.global.valid) guard.push_back(out.global.valid);
    for (size_t g : groups_) guard.push_back(idx_[g].lt(idx_const(1)));
    store_guard_ = all(guard);
  }

  UOp run(const UOp& ast) {
    // One copy of the stores per combination of the Upcast pieces' values.
    std::vector<UOp> stores;
    std::vector<int64_t> vals(p_.pieces.size(), 0);
    const int64_t n_up = p_.product(AxisKind::Upcast);
    for (int64_t c = 0; c < n_up; ++c) {
      set_values(vals, AxisKind::Upcast, c);
      upcast_flat_ = c;
      Ctx& ctx = context(vals);
      for (const UOp& st : ast.src()) stores.push_back(lower(st, ctx));
    }
    out.sink = UOp::sink(stores);
    out.local_bytes = local_bytes_;
    return out.sink;
  }

  Lowered out;

 private:
  struct Ctx {
    std::vector<UOp> full_idx;   // per axis of F
    std::vector<UOp> pad_valid;  // per axis of F: index < size where padded (null otherwise)
    bool built = false;          // full_idx and pad_valid are set
    std::vector<int64_t> vals;   // per piece: the value of Upcast/Unroll/Split pieces
    std::unordered_map<const UOpNode*, UOp> memo;
  };

  // vals of the pieces of one kind from a flat combination number (row-major, last piece fastest).
  void set_values(std::vector<int64_t>& vals, AxisKind kind, int64_t flat) const {
    for (size_t i = p_.pieces.size(); i-- > 0;)
      if (p_.pieces[i].kind == kind) {
        vals[i] = flat % p_.pieces[i].size;
        flat /= p_.pieces[i].size;
      }
  }

  Ctx& context(const std::vector<int64_t>& vals) {
    auto [it, fresh] = ctxs_.try_emplace(vals);
    Ctx& c = it->second;
    if (fresh) c.vals = vals;
    return c;
  }

  // A context's indices, built when first needed (most contexts only offset the base context's).
  Ctx& built(Ctx& c) {
    if (c.built) return c;
    c.built = true;
    const std::vector<int64_t>& vals = c.vals;
    const size_t n = p_.full_shape.size();
    std::vector<UOp> sum(n);
    for (size_t i = 0; i < p_.pieces.size(); ++i) {
      const Piece& q = p_.pieces[i];
      const bool expanded =
          q.kind == AxisKind::Upcast || q.kind == AxisKind::Unroll || q.kind == AxisKind::Split;
      if (q.size == 1 && !expanded) continue;
      UOp term = expanded ? idx_const(vals[i] * q.stride) : q.stride == 1 ? idx_[i] : idx_[i] * q.stride;
      UOp& s = sum[size_t(q.axis)];
      s = s ? s + term : term;
    }
    c.full_idx.resize(n);
    c.pad_valid.resize(n);
    for (size_t a = 0; a < n; ++a) {
      c.full_idx[a] = sum[a] ? sum[a] : idx_const(0);  // to_indexed simplifies what it builds
      if (p_.padded[a] != p_.full_shape[a])
        c.pad_valid[a] = simplify(c.full_idx[a].lt(idx_const(p_.full_shape[a])));
    }
    return c;
  }

  // The index and validity of a VIEW. A size-1 axis reads index 0, which makes one index list serve both
  // the F-shaped views below a reduce and the O-shaped ones above it.
  std::pair<UOp, UOp> indexed(const UOp& view, Ctx& c) {
    // Only the base context (every expanded value 0) indexes the view in full; another context adds
    // its values times the view's strides when those are plain numbers on unmasked, unpadded axes (the
    // common case, and what keeps lowering fast when a work-item is expanded many times).
    const ShapeTracker& st = st_of(view);
    auto [it, fresh] = views_.try_emplace(view.get());
    ViewInfo& vi = it->second;
    if (fresh) {
      vi.strides = st.real_strides();
      vi.base = indexed_full(st, context(std::vector<int64_t>(p_.pieces.size(), 0)));
    }
    int64_t delta = 0;
    for (size_t i : expanded_) {
      const Piece& q = p_.pieces[i];
      const size_t a = size_t(q.axis);
      if (c.vals[i] == 0 || st.shape()[a] == 1) continue;
      if (!vi.strides[a] || p_.padded[a] != p_.full_shape[a]) return indexed_full(st, c);
      delta += c.vals[i] * q.stride * *vi.strides[a];
    }
    if (delta == 0) return vi.base;
    const UOp& b = vi.base.first;
    if (b.op() == Op::Add && b.src(1).is_const())
      return {b.src(0) + (b.src(1).const_int_value() + delta), vi.base.second};
    return {b + delta, vi.base.second};
  }

  std::pair<UOp, UOp> indexed_full(const ShapeTracker& st, Ctx& cx) {
    const Ctx& c = built(cx);
    std::vector<UOp> idxs(st.shape().size());
    std::vector<UOp> valid;
    for (size_t a = 0; a < idxs.size(); ++a) {
      const bool used = st.shape()[a] != 1;
      idxs[a] = used ? c.full_idx[a] : idx_const(0);
      if (used && c.pad_valid[a]) valid.push_back(c.pad_valid[a]);
    }
    auto [idx, v] = st.to_indexed(idxs);
    // The index is simplified under its mask: a padded or concatenated view's nested divisions often
    // fold where the mask holds (the only place the index is read).
    if (valid.empty()) return {simplify_given(idx, v), v};
    if (!(v.is_const() && v.const_int_value())) valid.insert(valid.begin(), v);
    const UOp all_valid = simplify(all(valid));
    return {simplify_given(idx, all_valid), all_valid};
  }

  static UOp index(const UOp& buf, const UOp& idx, const UOp& valid) {
    if (!valid || (valid.is_const() && valid.const_int_value()))
      return UOp::make(Op::Index, buf.dtype(), {buf, idx});
    return UOp::make(Op::Index, buf.dtype(), {buf, idx, valid});
  }

  UOp lower(const UOp& u, Ctx& c) {
    if (auto it = c.memo.find(u.get()); it != c.memo.end()) return it->second;
    UOp r;
    switch (u.op()) {
      case Op::DefineGlobal:
      case Op::View: r = u; break;
      case Op::Load: {
        auto [idx, valid] = indexed(u.src(1), c);
        if (valid.is_const() && !valid.const_int_value())
          r = u.const_like(0);  // always masked: padding only
        else
          r = UOp::make(Op::Load, u.dtype(), {index(u.src(0), idx, valid)});
        break;
      }
      case Op::Const:
        if (u.num_src() == 1) {
          UOp lit = UOp::make(Op::Const, u.dtype(), {}, u.arg());
          UOp valid = indexed(u.src(0), c).second;
          r = valid.is_const() ? (valid.const_int_value() ? lit : lit.const_like(0))
                               : valid.where(lit, lit.const_like(0));
        } else {
          r = u;
        }
        break;
      case Op::Store: {
        auto [idx, valid] = indexed(u.src(1), c);
        if (store_guard_)
          valid =
              valid.is_const() && valid.const_int_value() ? store_guard_ : valid.alu(Op::And, store_guard_);
        r = UOp::make(Op::Store, dtypes::void_, {index(u.src(0), idx, valid), lower(u.src(2), c)});
        break;
      }
      case Op::ReduceAxis: r = reduce(u, c); break;
      default: {
        std::vector<UOp> src;
        bool same = true;
        for (const UOp& s : u.src()) {
          src.push_back(lower(s, c));
          same &= src.back() == s;
        }
        r = same ? u : u.with_src(src);
      }
    }
    c.memo.emplace(u.get(), r);
    return r;
  }

  UOp reduce(const UOp& r, Ctx& c) {
    const Op op = r.arg_as<ReduceArg>().op;
    const UOp identity = reduce_identity(op, r.dtype());
    // One accumulator per combination of the Split pieces' values (a CPU's GROUP), each taking the
    // operand once per combination of the Unroll pieces' values, folded; the partials are combined after
    // the loops (vectorize.h packs them into vector accumulators).
    std::vector<int64_t> vals = c.vals;
    const int64_t n_un = p_.product(AxisKind::Unroll), n_split = p_.product(AxisKind::Split);
    UOp val;
    for (int64_t s = 0; s < n_split; ++s) {
      set_values(vals, AxisKind::Split, s);
      UOp folded;
      for (int64_t j = 0; j < n_un; ++j) {
        set_values(vals, AxisKind::Unroll, j);
        Ctx& cj = context(vals);
        UOp x = lower(r.src(0), cj);
        std::vector<UOp> pads;
        for (size_t a = 0; a < p_.full_shape.size(); ++a)
          if (p_.reduced[a] && p_.padded[a] != p_.full_shape[a]) pads.push_back(built(cj).pad_valid[a]);
        if (!pads.empty()) x = all(pads).where(x, identity);
        folded = folded ? folded.alu(op, x) : x;
      }
      UOp part = folded;
      if (!ranges_.empty()) {
        std::vector<UOp> src = {identity};
        src.insert(src.end(), ranges_.begin(), ranges_.end());
        UOp acc = UOp::make(Op::DefineReg, r.dtype(), src, next_reg_++);
        part = UOp::make(Op::Assign, r.dtype(), {acc, acc.alu(op, folded)});
      }
      val = val ? val.alu(op, part) : part;
    }
    if (groups_.empty()) return val;

    // GROUP: every work-item's partial to shared memory, a barrier, then each work-item reduces the
    // partials of its group (only those with group ids 0 store: store_guard_).
    const int64_t items = p_.product(AxisKind::Local) * p_.product(AxisKind::GroupReduce);
    const int64_t n_up = p_.product(AxisKind::Upcast);
    auto [lit, fresh] = locals_.try_emplace(r.get());
    if (fresh) {
      lit->second = UOp::make(Op::DefineLocal, r.dtype().ptr(AddrSpace::Local, items * n_up), {},
                              int64_t(locals_.size() - 1));
      local_bytes_ += items * n_up * r.dtype().itemsize();
    }
    const UOp& buf = lit->second;
    auto slot = [&](const std::vector<UOp>& ids) {
      UOp flat = idx_const(0);
      for (size_t k = 0; k < lids_.size(); ++k) flat = flat * p_.pieces[lids_[k]].size + ids[k];
      return simplify(flat * n_up + upcast_flat_);
    };
    std::vector<UOp> ids, ids2, ranges2;
    for (size_t i : lids_) {
      ids.push_back(idx_[i]);
      if (p_.pieces[i].kind == AxisKind::GroupReduce) {
        ranges2.push_back(UOp::make(Op::Range, idx_dt_, {idx_const(p_.pieces[i].size)}, int64_t(1000 + i)));
        ids2.push_back(ranges2.back());
      } else {
        ids2.push_back(idx_[i]);
      }
    }
    UOp st = UOp::make(Op::Store, dtypes::void_, {index(buf, slot(ids), {}), val});
    UOp bar = UOp::make(Op::Barrier, dtypes::void_, {st});
    UOp ld = UOp::make(Op::Load, r.dtype(), {index(buf, slot(ids2), {}), bar});
    std::vector<UOp> src = {identity};
    src.insert(src.end(), ranges2.begin(), ranges2.end());
    UOp acc = UOp::make(Op::DefineReg, r.dtype(), src, next_reg_++);
    return UOp::make(Op::Assign, r.dtype(), {acc, acc.alu(op, ld)});
  }

  UOp idx_const(int64_t v) const { return UOp::const_int(idx_dt_, v); }
  UOp special(const std::string& name, int64_t size) const {
    return UOp::make(Op::Special, idx_dt_, {}, VarArg{name, 0, size - 1});
  }

  const Plan& p_;
  const DType idx_dt_;            // of every index value (index_dtype)
  std::vector<UOp> idx_;          // per piece: its id, loop or null (Upcast/Unroll/Split)
  std::vector<UOp> ranges_;       // the Loop pieces' RANGEs
  std::vector<size_t> lids_;      // pieces with a local id, in lidx order
  std::vector<size_t> groups_;    // GroupReduce pieces of size > 1
  std::vector<size_t> expanded_;  // Upcast, Unroll and Split pieces
  UOp store_guard_;
  std::map<std::vector<int64_t>, Ctx> ctxs_;
  struct ViewInfo {
    std::vector<std::optional<int64_t>> strides;
    std::pair<UOp, UOp> base;  // (index, valid) in the base context
  };
  std::unordered_map<const UOpNode*, ViewInfo> views_;
  std::unordered_map<const UOpNode*, UOp> locals_;  // per reduce: its shared memory
  int64_t next_reg_ = 0, upcast_flat_ = 0, local_bytes_ = 0;
};

}  // namespace

UOp reduce_identity(Op op, DType dt) {
  switch (op) {
    case Op::Add: return UOp::const_int(dt, 0);
    case Op::Mul: return UOp::const_int(dt, 1);
    case Op::Max:
      return dt.is_float() ? UOp::const_(dt, -std::numeric_limits<double>::infinity())
                           : UOp::const_int(dt, dt.min_int());
    default: SLUICE_CHECK_IN(Error, "lower", false) << "no reduce identity for " << op_name(op);
  }
  return {};
}

Analysis analyze(const UOp& ast) {
  SLUICE_CHECK_IN(Error, "lower", ast.op() == Op::Sink && ast.num_src() > 0)
      << "not a compute kernel AST: " << op_name(ast.op());
  Analysis out;
  out.output_shape = st_of(ast.src(0).src(1)).shape();
  out.full_shape = out.output_shape;
  bool has_reduce = false;
  for (const UOp& u : ast.toposort()) {
    if (u.op() != Op::ReduceAxis) continue;
    const std::vector<int64_t>& axes = u.arg_as<ReduceArg>().axes;
    SLUICE_CHECK_IN(Error, "lower", !has_reduce || axes == out.reduce_axes)
        << "reduces over different axes in one kernel";
    out.reduce_axes = axes;
    if (!has_reduce)
      for (const UOp& v : u.src(0).toposort())
        if (v.op() == Op::View) {
          out.full_shape = st_of(v).shape();
          break;
        }
    has_reduce = true;
  }
  SLUICE_CHECK_IN(Error, "lower", out.full_shape.size() == out.output_shape.size())
      << "views of different ranks: " << tuple_str(out.full_shape) << " and " << tuple_str(out.output_shape);
  return out;
}

Lowered lower(const UOp& ast, const Plan& plan, const DeviceCaps& caps) {
  Lowerer l(plan, caps, index_dtype(ast, plan));
  l.run(ast);
  return std::move(l.out);
}

}  // namespace sluice::codegen
