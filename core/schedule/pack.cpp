#include "core/schedule/pack.h"

#include <unordered_map>
#include <vector>

#include "core/schedule/views.h"

namespace sluice {
namespace {

constexpr int64_t kMinSteps = 256;  // reduction steps, B's row step (elements) and output rows, each at least

// The nodes of `root` of op `op` (UOp::toposort, filtered).
std::vector<UOp> nodes_of(const UOp& root, Op op) {
  std::vector<UOp> out;
  for (const UOp& u : root.toposort())
    if (u.op() == op) out.push_back(u);
  return out;
}

Shape split(const Shape& s, size_t axis, int64_t width) {
  Shape out(s.begin(), s.begin() + int64_t(axis));
  out.insert(out.end(), {s[axis] / width, width});
  out.insert(out.end(), s.begin() + int64_t(axis) + 1, s.end());
  return out;
}

}  // namespace

std::optional<Panels> pack_columns(const ScheduleItem& item, int64_t width) {
  const UOp& sink = item.ast;
  if (width <= 1 || sink.op() != Op::Sink || sink.src().size() != 1 || sink.src()[0].op() != Op::Store)
    return std::nullopt;
  const std::vector<UOp> reduces = nodes_of(sink, Op::ReduceAxis);
  if (reduces.size() != 1) return std::nullopt;
  const ReduceArg& ra = reduces[0].arg_as<ReduceArg>();
  if (ra.op != Op::Add || ra.axes.size() != 1 || reduces[0].dtype() != dtypes::float32) return std::nullopt;
  const size_t r = size_t(ra.axes[0]);

  // B: a LOAD below the reduce through one plain view, stepping 1 along c, >= kMinSteps along r, 0 elsewhere.
  UOp load, global;
  size_t c = 0;
  Shape full;
  int64_t row_step = 0, offset = 0;
  const std::vector<UOp> all_loads = nodes_of(sink, Op::Load);
  for (const UOp& l : nodes_of(reduces[0], Op::Load)) {
    const ShapeTracker& st = sched::st_of(l.src()[1]);
    if (st.views.size() != 1 || st.views[0].mask || l.dtype() != dtypes::float32) continue;
    const Shape& strides = st.views[0].strides;
    const Shape& shape = st.shape();
    if (r >= shape.size() || strides[r] < kMinSteps || shape[r] < kMinSteps) continue;
    std::optional<size_t> col;
    bool plain = true;
    for (size_t a = 0; a < shape.size(); ++a) {
      if (a == r || strides[a] == 0) continue;
      if (strides[a] == 1 && !col)
        col = a;
      else
        plain = false;
    }
    if (!plain || !col || shape[*col] % width != 0) continue;
    int64_t rows = 1;
    for (size_t a = 0; a < shape.size(); ++a)
      if (a != r && a != *col) rows *= shape[a];
    if (rows < kMinSteps) continue;
    // B read elsewhere (a second LOAD of it, or it is the output) would still need its own layout.
    size_t uses = 0;
    for (const UOp& g : all_loads) uses += g.src()[0] == l.src()[0];
    if (uses != 1 || sink.src()[0].src()[0] == l.src()[0]) continue;
    load = l, global = l.src()[0], c = *col, full = shape;
    row_step = strides[r], offset = st.views[0].offset;
    break;
  }
  if (!load) return std::nullopt;
  const int64_t index = global.arg_as<int64_t>();
  const UOp& b = item.bufs[size_t(index)];
  const int64_t cols = full[c], steps = full[r];
  const UOp packed = UOp::new_buffer(b.device(), b.dtype(), cols * steps);
  const DType ptr = packed.dtype().ptr(AddrSpace::Global, cols * steps);

  // The pack kernel, over (k, j, u): panels[j][k][u] = B[k * row_step + j * width + u] (+ B's offset).
  const Shape shape = {steps, cols / width, width};
  const View from = View::create(shape, {row_step, width, 1}, offset);
  const View to = View::create(shape, {width, width * steps, 1});
  const UOp src = UOp::make(
      Op::Load, load.dtype(),
      {UOp::make(Op::DefineGlobal, global.dtype(), {}, int64_t(1)), sched::make_view(ShapeTracker({from}))});
  ScheduleItem pack{UOp::sink({UOp::make(Op::Store, dtypes::void_,
                                         {UOp::make(Op::DefineGlobal, ptr, {}, int64_t(0)),
                                          sched::make_view(ShapeTracker({to})), src})}),
                    {packed, b},
                    {"pack"}};

  // The matmul: axis c split in every view; B's load reads the panels (c/width -> width * steps, c%width
  // -> 1, r -> width).
  std::unordered_map<const void*, UOp> memo;
  const UOp panels = UOp::make(Op::DefineGlobal, ptr, {}, index);
  Shape panel_strides(full.size() + 1, 0);
  panel_strides[c] = width * steps, panel_strides[c + 1] = 1, panel_strides[r + (r > c)] = width;
  const UOp panel_view = sched::make_view(ShapeTracker({View::create(split(full, c, width), panel_strides)}));
  auto rebuild = [&](auto&& self, const UOp& u) -> UOp {
    if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
    UOp out;
    if (u == load) {
      out = UOp::make(Op::Load, u.dtype(), {panels, panel_view});
    } else if (u.op() == Op::View) {
      const ShapeTracker& st = sched::st_of(u);
      out = sched::make_view(st.reshape(split(st.shape(), c, width)));
    } else {
      std::vector<UOp> srcs;
      for (const UOp& s : u.src()) srcs.push_back(self(self, s));
      Arg arg = u.arg();
      if (u.op() == Op::ReduceAxis) arg = ReduceArg{Op::Add, {int64_t(r + (r > c))}};
      out = UOp::make(u.op(), u.dtype(), srcs, arg);
    }
    return memo[u.get()] = out;
  };
  Panels out{std::move(pack), ScheduleItem{rebuild(rebuild, sink), item.bufs, item.metadata}, size_t(index)};
  out.kernel.bufs[size_t(index)] = packed;
  return out;
}

}  // namespace sluice
