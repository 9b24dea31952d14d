#include "core/codegen/opts.h"

#include "base/error.h"

#include <algorithm>
#include <sstream>

namespace sluice::codegen {

const char* opt_name(OptOp op) {
  switch (op) {
    case OptOp::Upcast: return "UPCAST";
    case OptOp::Unroll: return "UNROLL";
    case OptOp::Local: return "LOCAL";
    case OptOp::Group: return "GROUP";
    case OptOp::GroupTop: return "GROUPTOP";
    case OptOp::PadTo: return "PADTO";
    case OptOp::NoLocals: return "NOLOCALS";
    case OptOp::TensorCore: return "TC";
  }
  return "?";
}

namespace {

template <class... T>
[[noreturn]] void reject(const Plan& plan, const Opt& opt, const T&... why) {
  std::ostringstream os;
  os << "[opts] " << plan.ast_name << ": " << opt_name(opt.op) << " axis " << opt.axis << " arg " << opt.arg
     << ": ";
  (os << ... << why);
  throw OptError(os.str());
}

}  // namespace

std::vector<size_t> Plan::open() const {
  std::vector<size_t> out;
  for (AxisKind k : {AxisKind::Global, AxisKind::Loop})
    for (size_t i = 0; i < pieces.size(); ++i)
      if (pieces[i].kind == k) out.push_back(i);
  return out;
}

int64_t Plan::product(AxisKind k) const {
  int64_t n = 1;
  for (const Piece& p : pieces)
    if (p.kind == k) n *= p.size;
  return n;
}

int64_t Plan::copies() const {
  return product(AxisKind::Upcast) * product(AxisKind::Unroll) * product(AxisKind::Split);
}

int64_t Plan::local_bytes() const {
  if (!has(AxisKind::GroupReduce)) return 0;
  return product(AxisKind::Local) * product(AxisKind::GroupReduce) * product(AxisKind::Upcast) * n_reduces *
         itemsize;
}

Plan make_plan(const UOp& ast, const Shape& full_shape, const std::vector<int64_t>& reduce_axes) {
  Plan p;
  p.full_shape = full_shape;
  p.padded = full_shape;
  p.reduced.assign(full_shape.size(), false);
  for (int64_t a : reduce_axes) p.reduced[size_t(a)] = true;
  for (size_t a = 0; a < full_shape.size(); ++a)
    if (full_shape[a] > 1)
      p.pieces.push_back({int64_t(a), full_shape[a], 1, p.reduced[a] ? AxisKind::Loop : AxisKind::Global});
  for (const UOp& u : ast.toposort())
    if (u.op() == Op::ReduceAxis) {
      ++p.n_reduces;
      p.itemsize = std::max(p.itemsize, u.dtype().itemsize());
    }
  return p;
}

void apply_opt(Plan& plan, const Opt& opt, const DeviceCaps& caps) {
  const std::vector<size_t> open = plan.open();
  if (opt.axis < 0 || size_t(opt.axis) >= open.size())
    reject(plan, opt, "axis out of range (the kernel has ", open.size(), " open axes)");
  Piece& p = plan.pieces[open[size_t(opt.axis)]];
  const bool is_loop = p.kind == AxisKind::Loop;

  if (opt.op == OptOp::PadTo) {
    const int64_t full = plan.full_shape[size_t(p.axis)];
    if (opt.arg < 2) reject(plan, opt, "PADTO needs a multiple >= 2");
    if (p.size != full || p.stride != 1 || plan.padded[size_t(p.axis)] != full)
      reject(plan, opt, "the axis was split or padded already (size ", p.size, " of ", full, ")");
    const int64_t to = (full + opt.arg - 1) / opt.arg * opt.arg;
    if (to == full) reject(plan, opt, "size ", full, " is a multiple already");
    if (to > 2 * full) reject(plan, opt, "padding ", full, " to ", to, " more than doubles the work");
    p.size = to;
    plan.padded[size_t(p.axis)] = to;
    plan.applied.push_back(opt);
    return;
  }

  AxisKind kind = AxisKind::Upcast;
  switch (opt.op) {
    case OptOp::Upcast:
      if (is_loop) reject(plan, opt, "UPCAST applies to output axes; a reduce axis is unrolled with UNROLL");
      kind = AxisKind::Upcast;
      break;
    case OptOp::Local:
      if (is_loop)
        reject(plan, opt, "LOCAL applies to output axes; a reduce axis is split across work-items by GROUP");
      kind = AxisKind::Local;
      break;
    case OptOp::Unroll:
      if (!is_loop)
        reject(plan, opt, "UNROLL applies to reduce axes; an output axis is unrolled with UPCAST");
      kind = AxisKind::Unroll;
      break;
    case OptOp::Group:
    case OptOp::GroupTop:
      if (!is_loop) reject(plan, opt, "GROUP on a non-reduce axis");
      // Without work-groups the partials are registers of one work-item: the same split, no shared memory.
      kind = caps.has_local ? AxisKind::GroupReduce : AxisKind::Split;
      break;
    default: reject(plan, opt, "not supported");
  }
  const int64_t amt = opt.arg == 0 ? p.size : opt.arg;
  if (amt < 2) reject(plan, opt, "the split must be at least 2");
  if (p.size % amt != 0) reject(plan, opt, "arg ", amt, " does not divide the axis size ", p.size);
  const bool top = opt.op == OptOp::GroupTop;
  Piece inner{p.axis, amt, top ? p.stride * (p.size / amt) : p.stride, kind};
  p.size /= amt;
  if (!top) p.stride *= amt;
  plan.pieces.push_back(inner);

  if (kind == AxisKind::Upcast || kind == AxisKind::Unroll || kind == AxisKind::Split) {
    const int64_t n = plan.copies();
    if (n > kMaxUpcast)
      reject(plan, opt, "a work-item would do ", n, " unrolled copies (at most ", kMaxUpcast, ")");
  }
  if (kind == AxisKind::Local || kind == AxisKind::GroupReduce) {
    if (!caps.has_local)
      reject(plan, opt, "the device has no work-groups of several work-items (no local ids)");
    int dims = 0;
    for (const Piece& q : plan.pieces)
      if (q.kind == AxisKind::Local || q.kind == AxisKind::GroupReduce) {
        if (dims < 3 && q.size > caps.local_max[size_t(dims)])
          reject(plan, opt, "local dimension ", dims, " of ", q.size, " exceeds the device's ",
                 caps.local_max[size_t(dims)]);
        ++dims;
      }
    if (dims > 3) reject(plan, opt, "more than 3 local dimensions");
    const int64_t items = plan.product(AxisKind::Local) * plan.product(AxisKind::GroupReduce);
    if (items > caps.max_local_size)
      reject(plan, opt, "a work-group of ", items, " work-items exceeds the device's ", caps.max_local_size,
             " (max_local_size)");
  }
  if (kind == AxisKind::GroupReduce && plan.local_bytes() > caps.local_bytes)
    reject(plan, opt, "needs ", plan.local_bytes(), " bytes of local memory, the device has ",
           caps.local_bytes, " (local_bytes)");
  if (kind == AxisKind::Upcast && plan.local_bytes() > caps.local_bytes)
    reject(plan, opt, "the group's shared memory would need ", plan.local_bytes(), " bytes, the device has ",
           caps.local_bytes);
  plan.applied.push_back(opt);
}

void fit_loop_limit(Plan& plan, const DeviceCaps& caps) {
  const int64_t limit = std::max<int64_t>(caps.max_loop, 1);
  // Iterations per work-item: the loop nest, then a GROUP's loop over the partials.
  const int64_t group = plan.has(AxisKind::GroupReduce) ? plan.product(AxisKind::GroupReduce) : 0;
  auto total = [&] { return (plan.has(AxisKind::Loop) ? plan.product(AxisKind::Loop) : 0) + group; };
  while (total() > limit) {
    const std::vector<size_t> open = plan.open();
    int64_t axis = -1;  // the innermost loop still longer than 1, as an open-axis number
    for (size_t k = 0; k < open.size(); ++k)
      if (plan.pieces[open[k]].kind == AxisKind::Loop && plan.pieces[open[k]].size > 1) axis = int64_t(k);
    const int64_t left = std::max<int64_t>(limit - group, 1);
    const int64_t need = (plan.product(AxisKind::Loop) + left - 1) / left;
    const int64_t room = kMaxUpcast / plan.copies();
    SLUICE_CHECK_IN(Error, "make_kernel", axis >= 0 && need <= room)
        << "kernel " << plan.ast_name << " runs " << total()
        << " loop iterations per work-item, over the device's " << limit << " (max_loop), and unrolling by "
        << need << " would pass " << kMaxUpcast << " copies";
    const Piece& p = plan.pieces[open[size_t(axis)]];
    int64_t f = need;
    while (f <= room && p.size % f != 0) ++f;
    if (f > room) {  // no factor divides it: pad it (masked, as PADTO), which needs the whole axis
      try {
        apply_opt(plan, {OptOp::PadTo, axis, need}, caps);
      } catch (const OptError& e) {
        SLUICE_CHECK_IN(Error, "make_kernel", false)
            << "kernel " << plan.ast_name << " runs " << total()
            << " loop iterations per work-item, over the "
            << "device's " << limit << " (max_loop), and no unrolling fits: " << e.what();
      }
      f = need;
    }
    apply_opt(plan, {OptOp::Unroll, axis, f}, caps);
  }
}

}  // namespace sluice::codegen
