// Tensor-level constant folding: the rule tables of fold.h.
#include "core/schedule/fold.h"

#include <cmath>
#include <limits>

#include "core/ir/symbolic.h"

namespace sluice::sched {

namespace {

// A tensor constant: CONST, CONST reshaped, or CONST reshaped and expanded.
UPat tconst(const UPat& c) {
  return UPat::any_of({c, UPat(Op::Reshape).src({c}), UPat(Op::Expand).src({UPat(Op::Reshape).src({c})})});
}
UPat tc(const char* name) { return tconst(UPat(Op::Const).named(name)); }
UPat tc(double v) { return tconst(cnst(v)); }
const UPat any_tc = tconst(UPat(Op::Const));

OpSet ops_where(bool (*pred)(Op)) {
  OpSet s;
  for (int o = 0; o < kNumOps; o++)
    if (pred(Op(o))) s.add(Op(o));
  return s;
}
const OpSet kElementwise = ops_where([](Op o) { return is_alu(o) || o == Op::Cast || o == Op::Bitcast; });
const OpSet kViews = ops_where([](Op o) { return is_movement(o) && o != Op::Pad; });  // pads add a mask
const OpSet kComputed = ops_where([](Op o) {
  return is_alu(o) || o == Op::Cast || o == Op::Bitcast || o == Op::ReduceAxis || o == Op::Contiguous ||
         o == Op::Detach || o == Op::Copy;
});

// m[x] when it can stand for the root "r": same shape and dtype.
UOp keep(Match& m, const char* x) {
  const UOp &r = m["r"], &v = m[x];
  return v.shape() == r.shape() && v.dtype() == r.dtype() ? v : UOp();
}

// A CONST of dtype dt and value v (as an arg of `like`'s kind) living where c lives.
UOp const_at(const UOp& c, DType dt, const UOp& value) {
  return UOp::make(Op::Const, dt, c.src(), value.arg());
}

// op(c1, c2, ...) -> c, computed on the scalars with the dtype's exact semantics (fold_alu).
UOp fold_elementwise(const UOp& r) {
  std::vector<UOp> scalars;
  UOp where;  // a source constant that names a device, if one does
  for (const UOp& s : r.src()) {
    UOp c = const_leaf(s);
    scalars.push_back(UOp::make(Op::Const, c.dtype(), {}, c.arg()));
    if (!where || c.num_src() > where.num_src()) where = c;
  }
  UOp v = fold_alu(UOp::make(r.op(), r.dtype(), scalars, r.arg()));
  return v ? const_view(const_at(where, r.dtype(), v), r.shape()) : UOp();
}

// sum(c) -> c*n, prod(c) -> c**n, max(c) -> c over n reduced elements.
UOp fold_reduce(const UOp& r, const UOp& c) {
  const ReduceArg& ra = r.arg_as<ReduceArg>();
  int64_t n = 1;
  for (int64_t a : ra.axes) n *= r.src(0).shape()[size_t(a)];
  DType dt = r.dtype();
  UOp v;
  if (ra.op == Op::Max) {
    if (n == 0) return UOp();  // max of nothing: fold_empty_rules
    v = c;
  } else if (dt.is_float()) {
    v = UOp::const_(dt,
                    ra.op == Op::Add ? c.const_value() * double(n) : std::pow(c.const_value(), double(n)));
  } else {  // integers wrap as the kernel would: multiply in uint64, then wrap to the dtype
    uint64_t x = uint64_t(c.const_int_value()), acc = ra.op == Op::Add ? x * uint64_t(n) : 1;
    for (int64_t e = n; ra.op == Op::Mul && e > 0; e >>= 1, x *= x)
      if (e & 1) acc *= x;
    v = UOp::const_int(dt, int64_t(acc));
  }
  return const_view(const_at(c, dt, v), r.shape());
}

// r(r(x, a), b) -> r(x, a+b) when both reduce with the same op.
UOp merge_reduces(const UOp& outer, const UOp& inner) {
  const ReduceArg &o = outer.arg_as<ReduceArg>(), &i = inner.arg_as<ReduceArg>();
  if (o.op != i.op) return UOp();
  Shape axes = i.axes;
  for (int64_t a : o.axes)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
  return inner.src(0).reduce(o.op, axes);
}

// Axes of size 1 reduce nothing: drop them (no axis left: the source itself, its shape is unchanged).
UOp drop_unit_axes(const UOp& r) {
  const ReduceArg& ra = r.arg_as<ReduceArg>();
  const Shape& in = r.src(0).shape();
  Shape axes;
  for (int64_t a : ra.axes)
    if (in[size_t(a)] != 1) axes.push_back(a);
  if (axes.size() == ra.axes.size() || prod(in) == 0) return UOp();
  return axes.empty() ? r.src(0) : r.src(0).reduce(ra.op, axes);
}

// A COPY moves whole buffers: a view that is more than a reshape is made contiguous first.
UOp copy_contiguous(const UOp& copy) {
  UOp x = copy.src(0);
  while (x.op() == Op::Reshape) x = x.src(0);
  if (!is_movement(x.op())) return UOp();
  return UOp::make(Op::Copy, copy.dtype(), {copy.src(0).contiguous(), copy.src(1)}, copy.arg());
}

double reduce_identity(Op op, DType dt) {
  if (op == Op::Add) return 0;
  if (op == Op::Mul) return 1;
  return dt.is_float() ? -std::numeric_limits<double>::infinity() : dt.min();
}

// The device a node lives on: the first DEVICE down its first sources (a node without elements still
// lives somewhere).
UOp device_of(const UOp& u) {
  for (const UOp* x = &u;; x = &x->src(0)) {
    for (const UOp& s : x->src())
      if (s.op() == Op::Device) return s;
    if (x->num_src() == 0) return UOp();
  }
}

UOp fill(const UOp& r, double v) {
  UOp d = device_of(r);
  UOp c =
      d ? UOp::make(Op::Const, r.dtype(), {d}, UOp::const_(r.dtype(), v).arg()) : UOp::const_(r.dtype(), v);
  return const_view(c, r.shape());
}

}  // namespace

UOp const_leaf(const UOp& u) {
  const UOp* x = &u;
  if (x->op() == Op::Expand) x = &x->src(0);
  if (x->op() == Op::Reshape) x = &x->src(0);
  return x->op() == Op::Const ? *x : UOp();
}

UOp const_view(const UOp& c, const Shape& shape) {
  if (shape.empty()) return c;
  return c.reshape(Shape(shape.size(), 1)).expand(shape);
}

// clang-format off
const PatternMatcher fold_const_rules{{
  {(var("x") + tc(0.0)).named("r"), [](Match& m) { return keep(m, "x"); }},                    // x+0 -> x
  {(var("x") - tc(0.0)).named("r"), [](Match& m) { return keep(m, "x"); }},                    // x-0 -> x
  {(var("x") * tc(1.0)).named("r"), [](Match& m) { return keep(m, "x"); }},                    // x*1 -> x
  {UPat(Op::FDiv).src({var("x"), tc(1.0)}).named("r"), [](Match& m) { return keep(m, "x"); }}, // x/1 -> x
  {(var("x") / tc(1.0)).named("r"), [](Match& m) { return keep(m, "x"); }},                    // x//1 -> x
  {(var("x") * tc(0.0)).named("r"),                                                            // x*0 -> 0 (ints)
   [](Match& m) { return m["r"].dtype().is_float() ? UOp() : fill(m["r"], 0); }},
  {UPat(Op::Where).src({tc("c"), var("t"), var("f")}).named("r"),                             // where(1,t,f) -> t
   [](Match& m) { return keep(m, m["c"].const_value() != 0 ? "t" : "f"); }},
  {UPat(kElementwise).src_repeat(any_tc).named("r"), [](Match& m) { return fold_elementwise(m["r"]); }},  // op(c1,c2) -> c
  {UPat(kViews).src({tc("c")}).named("r"),                                                     // view(c) -> c of its shape
   [](Match& m) { return const_view(const_leaf(m["c"]), m["r"].shape()); }},
  {UPat(Op::ReduceAxis).src({tc("c")}).named("r"),                                             // sum(c) -> c*n, max(c) -> c
   [](Match& m) { return fold_reduce(m["r"], const_leaf(m["c"])); }},
  {UPat(Op::Copy).src({tc("c"), UPat(Op::Device).named("d")}).named("r"),                      // copy(c) -> c there
   [](Match& m) { return const_view(UOp::make(Op::Const, m["r"].dtype(), {m["d"]}, const_leaf(m["c"]).arg()), m["r"].shape()); }},
}};

const PatternMatcher fold_rules{{
  {UPat(Op::Detach).src({var("x")}), [](Match& m) { return m["x"]; }},                             // detach(x) -> x
  {UPat(Op::Contiguous).src({UPat(Op::Contiguous).named("x")}), [](Match& m) { return m["x"]; }},  // contiguous twice -> once
  {UPat(Op::Contiguous).src({UPat::any_of({UPat(Op::Buffer), UPat(Op::Reshape).src({UPat(Op::Buffer)})}).named("x")}),
   [](Match& m) { return m["x"]; }},                                                                // contiguous(buffer) -> buffer
  {UPat(Op::Where).src({var("c"), var("x"), var("x")}), [](Match& m) { return m["x"]; }},         // where(c,x,x) -> x
  {UPat(Op::ReduceAxis).src({UPat(Op::ReduceAxis).named("i")}).named("r"),                         // r(r(x,a),b) -> r(x,a+b)
   [](Match& m) { return merge_reduces(m["r"], m["i"]); }},
  {UPat(Op::ReduceAxis).named("r"), [](Match& m) { return drop_unit_axes(m["r"]); }},              // sum over size-1 axes -> x
  {UPat(Op::Copy).named("r"), [](Match& m) { return copy_contiguous(m["r"]); }},                   // copy(view) -> copy(contiguous)
}};

const PatternMatcher fold_empty_rules{{
  {UPat(Op::ReduceAxis).named("r"),                                                                // sum(nothing) -> 0, max -> -inf
   [](Match& m) {
     const UOp& r = m["r"];
     if (r.numel() == 0 || r.src(0).numel() > 0) return UOp();
     return fill(r, reduce_identity(r.arg_as<ReduceArg>().op, r.dtype()));
   }},
  {UPat(kComputed).named("r"), [](Match& m) { return m["r"].numel() == 0 ? fill(m["r"], 0) : UOp(); }},  // no elements -> 0
}};
// clang-format on

}  // namespace sluice::sched
