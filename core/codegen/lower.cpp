#include "core/codegen/lower.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "core/ir/pattern.h"
#include "core/ir/shape_tracker.h"
#include "core/ir/symbolic.h"

namespace sluice::codegen {
namespace {

const ShapeTracker& st_of(const UOp& view) {
  return static_cast<const ShapeTracker&>(*view.arg_as<std::shared_ptr<const ArgObject>>());
}

struct Ctx {
  std::vector<UOp> full_idx;  // per axis of F: a RANGE (reduced axes) or the output index
  std::vector<UOp> ranges;    // the RANGEs, outermost first
  int64_t next_reg = 0;
};

// The index and validity of a VIEW over the kernel's axes. A size-1 axis reads index 0, which makes one
// index list serve both the F-shaped views below a reduce and the O-shaped ones above it.
std::pair<UOp, UOp> indexed(const UOp& view, const Ctx& c) {
  const ShapeTracker& st = st_of(view);
  std::vector<UOp> idxs(st.shape().size());
  for (size_t a = 0; a < idxs.size(); ++a)
    idxs[a] = st.shape()[a] == 1 ? UOp::const_int(dtypes::index, 0) : c.full_idx[a];
  return st.to_indexed(idxs);
}

UOp index(const UOp& buf, const UOp& view, const Ctx& c) {
  auto [idx, valid] = indexed(view, c);
  if (valid.is_const() && valid.const_int_value()) return UOp::make(Op::Index, buf.dtype(), {buf, idx});
  return UOp::make(Op::Index, buf.dtype(), {buf, idx, valid});
}

UOp lower_load(Match& m) {
  const UOp& ld = m["ld"];
  UOp ix = index(m["buf"], m["view"], m.context<Ctx>());
  if (ix.num_src() == 3 && ix.src(2).is_const()) return ld.const_like(0);  // always masked: padding only
  return UOp::make(Op::Load, ld.dtype(), {ix});
}

UOp lower_const(Match& m) {
  const UOp& c = m["c"];
  UOp lit = UOp::make(Op::Const, c.dtype(), {}, c.arg());
  UOp valid = indexed(m["view"], m.context<Ctx>()).second;
  if (valid.is_const()) return valid.const_int_value() ? lit : lit.const_like(0);
  return valid.where(lit, lit.const_like(0));
}

UOp lower_store(Match& m) {
  return UOp::make(Op::Store, dtypes::void_, {index(m["buf"], m["view"], m.context<Ctx>()), m["v"]});
}

// One accumulator per reduce: DEFINE_REG holds its identity and, as sources, the loops it lives across.
UOp lower_reduce(Match& m) {
  Ctx& c = m.context<Ctx>();
  const UOp& r = m["r"];
  const Op op = r.arg_as<ReduceArg>().op;
  if (c.ranges.empty()) return m["x"];  // every reduced axis has size 1
  std::vector<UOp> src = {reduce_identity(op, r.dtype())};
  src.insert(src.end(), c.ranges.begin(), c.ranges.end());
  UOp acc = UOp::make(Op::DefineReg, r.dtype(), src, c.next_reg++);
  return UOp::make(Op::Assign, r.dtype(), {acc, acc.alu(op, m["x"])});
}

const PatternMatcher pm_lower{{
    {UPat(Op::Load).src({UPat(Op::DefineGlobal).named("buf"), UPat(Op::View).named("view")}).named("ld"),
     lower_load},  // LOAD(buf, VIEW) -> LOAD(INDEX(buf, idx, valid))
    {UPat(Op::Const).src({UPat(Op::View).named("view")}).named("c"),
     lower_const},  // CONST(VIEW) -> valid?c:0
    {UPat(Op::Store).src({UPat(Op::DefineGlobal).named("buf"), UPat(Op::View).named("view"), var("v")}),
     lower_store},  // STORE(buf, VIEW, v) -> STORE(INDEX(buf, idx, valid), v)
    {UPat(Op::ReduceAxis).src({var("x")}).named("r"), lower_reduce},  // REDUCE_AXIS(x) -> acc op= x
}};

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

Lowered lower(const UOp& ast, const DeviceCaps& caps) {
  SLUICE_CHECK_IN(Error, "lower", ast.op() == Op::Sink && ast.num_src() > 0)
      << "not a compute kernel AST: " << op_name(ast.op());
  Lowered out;
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

  out.global = map_global(out.output_shape, caps);
  Ctx c;
  c.full_idx = out.global.axis_idx;
  std::vector<int64_t> axes = out.reduce_axes;
  std::sort(axes.begin(), axes.end());
  for (int64_t a : axes) {
    if (out.full_shape[size_t(a)] == 1) continue;
    UOp r =
        UOp::make(Op::Range, dtypes::index, {UOp::const_int(dtypes::index, out.full_shape[size_t(a)])}, a);
    c.full_idx[size_t(a)] = r;
    c.ranges.push_back(r);
  }
  out.sink = graph_rewrite(ast, pm_lower, &c);
  return out;
}

}  // namespace sluice::codegen
