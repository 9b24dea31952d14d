#include "core/codegen/heuristic.h"

#include <algorithm>
#include <optional>

#include "core/codegen/vectorize.h"
#include "core/ir/shape_tracker.h"

namespace sluice::codegen {
namespace {

const ShapeTracker& st_of(const UOp& view) {
  return static_cast<const ShapeTracker&>(*view.arg_as<std::shared_ptr<const ArgObject>>());
}

// Applies opt when apply_opt accepts it; plan is unchanged otherwise.
bool try_opt(Plan& plan, const Opt& opt, const DeviceCaps& caps) {
  Plan next = plan;
  try {
    apply_opt(next, opt, caps);
  } catch (const OptError&) { return false; }
  plan = std::move(next);
  return true;
}

// The open-axis number (opt.axis) of the piece at `pieces[i]`, or -1.
int64_t open_axis(const Plan& plan, size_t i) {
  const std::vector<size_t> open = plan.open();
  for (size_t k = 0; k < open.size(); ++k)
    if (open[k] == i) return int64_t(k);
  return -1;
}

// Rows of a CPU register tile: rows x (columns / vector width) accumulators.
constexpr int64_t kCpuTileRows = 4;

struct LoadInfo {
  std::vector<std::optional<int64_t>> strides;  // per axis of F (F-shaped views only)
};

int64_t widest(const DeviceCaps& caps) {
  return caps.vector_widths.empty() ? 0
                                    : *std::max_element(caps.vector_widths.begin(), caps.vector_widths.end());
}
// Wide vectors and no work-groups: step 0's register tile.
bool has_cpu_tile(const DeviceCaps& caps) { return !caps.has_local && widest(caps) >= 8; }

}  // namespace

int64_t panel_width(const DeviceCaps& caps) { return has_cpu_tile(caps) ? 2 * widest(caps) : 0; }

void apply_heuristic(Plan& plan, const UOp& ast, const DeviceCaps& caps) {
  const Shape& F = plan.full_shape;
  std::vector<LoadInfo> loads;
  bool padded = false;           // some load reads through a padding (a masked view)
  std::vector<LoadInfo> stores;  // output-shaped views: per axis of F, reduced axes of size 1
  Op reduce_op = Op::Noop;
  UOp reduce_src;
  for (const UOp& u : ast.toposort()) {
    if (u.op() == Op::ReduceAxis) reduce_op = u.arg_as<ReduceArg>().op, reduce_src = u.src(0);
    if (u.op() == Op::Store && u.src(1).op() == Op::View && st_of(u.src(1)).shape().size() == F.size() &&
        u.src(2).dtype() == dtypes::float32)
      stores.push_back({st_of(u.src(1)).real_strides()});
    if (u.op() != Op::Load || u.src(1).op() != Op::View) continue;
    const ShapeTracker& st = st_of(u.src(1));
    for (const View& v : st.views) padded |= v.mask.has_value();
    if (st.shape() != F) continue;
    loads.push_back({st.real_strides()});
  }
  auto broadcast = [&](int64_t axis) {
    for (const LoadInfo& l : loads)
      if (l.strides[size_t(axis)] && *l.strides[size_t(axis)] == 0) return true;
    return false;
  };
  auto pieces_of = [&](AxisKind k) {
    std::vector<size_t> out;
    for (size_t i = 0; i < plan.pieces.size(); ++i)
      if (plan.pieces[i].kind == k) out.push_back(i);
    return out;
  };
  auto contiguous_out = [&](int64_t axis) {
    for (const LoadInfo& s : stores)
      if (!s.strides[size_t(axis)] || *s.strides[size_t(axis)] != 1) return false;
    return !stores.empty() && stores.size() == ast.num_src();
  };
  const int64_t min_groups = 4 * int64_t(caps.compute_units);
  const int64_t out_size = plan.product(AxisKind::Global);

  // 0. register tile on a CPU (wide vectors, no work-groups).
  const int64_t vw = widest(caps);
  const bool cpu_tile = has_cpu_tile(caps);
  // (contiguous_out below also requires every store to be an output-shaped float32 one.)
  if (cpu_tile && reduce_op == Op::Add && !pieces_of(AxisKind::Loop).empty()) {
    auto stride_is = [](const std::vector<LoadInfo>& ls, int64_t axis, int64_t v) {
      for (const LoadInfo& l : ls)
        if (l.strides[size_t(axis)] && *l.strides[size_t(axis)] == v) return true;
      return false;
    };
    // Columns: an output axis stored and loaded contiguously that some load broadcasts (a matmul's or a
    // conv's output columns). A multiple of the vector width is tiled by whole vectors; failing that, a
    // ragged axis is upcast whole or by a divisor (below), its ragged end packed into narrower vectors by
    // vectorize.h.
    auto col_ok = [&](const Piece& q) {
      return contiguous_out(q.axis) && stride_is(loads, q.axis, 1) && broadcast(q.axis);
    };
    std::optional<size_t> col, row;
    for (size_t i : pieces_of(AxisKind::Global))
      if (!col && plan.pieces[i].size % vw == 0 && col_ok(plan.pieces[i])) col = i;
    // Ragged columns are upcast by `width` lanes (0: not ragged): the whole axis when it fits two vectors,
    // else its largest divisor between one and two vectors (a 6625-class linear layer: 25 = 16 + 8 + 1).
    int64_t width = 0;
    auto ragged_width = [&](int64_t size) -> int64_t {
      if (size >= 4 && size <= 2 * vw) return size;
      for (int64_t d = 2 * vw; d > vw; --d)
        if (size % d == 0) return d;
      return 0;
    };
    if (!col)
      for (size_t i : pieces_of(AxisKind::Global))
        if (!col && col_ok(plan.pieces[i]))
          if (int64_t w = ragged_width(plan.pieces[i].size)) col = i, width = w;
    // Rows: an axis some load broadcasts; best one the load read along the columns broadcasts (a conv's
    // output channels, not its output rows), so each column vector loaded serves every row.
    auto serves_rows = [&](int64_t axis) {
      for (const LoadInfo& l : loads)
        if (l.strides[size_t(plan.pieces[*col].axis)] == 1 && l.strides[size_t(axis)] == 0) return true;
      return false;
    };
    for (size_t i : pieces_of(AxisKind::Global))
      if (col && i != *col && plan.pieces[i].size % kCpuTileRows == 0 && broadcast(plan.pieces[i].axis) &&
          (!row || serves_rows(plan.pieces[i].axis) || !serves_rows(plan.pieces[*row].axis)))
        row = i;
    if (col && width && out_size / width >= caps.compute_units) {
      // The columns, then rows while the tile's floats fit half the registers: a conv's output channels
      // by 4, then its output rows or batch by 4 or 2 (each loaded input vector serves every row), else
      // more of the same rows (a linear layer's batch). Fewer work-groups than cores x 4 are allowed: a
      // tile this short is cheap per group, and 4 groups of 16 rows beat 64 of 1.
      // A ragged row of columns is several vectors, so the accumulators are also counted as registers
      // (registers_for_lanes): never more than the machine has.
      const int64_t budget = int64_t(caps.vector_registers) * vw / 2, groups = caps.compute_units;
      int64_t tile = width, regs = registers_for_lanes(width, caps.vector_widths);
      Plan p = plan;
      auto grow = [&](size_t i, int64_t f) {
        if (plan.pieces[i].size % f != 0 || tile * f > budget || regs * f > caps.vector_registers ||
            out_size / (tile * f) < groups || !try_opt(p, {OptOp::Upcast, open_axis(p, i), f}, caps))
          return false;
        tile *= f, regs *= f;
        return true;
      };
      if (try_opt(p, {OptOp::Upcast, open_axis(p, *col), width == plan.pieces[*col].size ? 0 : width},
                  caps)) {
        if (row && grow(*row, kCpuTileRows)) {
          bool more = true;
          const std::vector<size_t> gs = pieces_of(AxisKind::Global);
          for (size_t k = gs.size(); k-- > 0;)
            for (int64_t f : {4, 2})
              if (more && gs[k] != *col && gs[k] != *row && broadcast(plan.pieces[gs[k]].axis) &&
                  grow(gs[k], f))
                more = false;
          for (int64_t f : {4, 2})
            if (more && grow(*row, f)) more = false;
        }
        plan = std::move(p);
        return;
      }
    }
    if (col && row) {
      // Tallest first: each step of the reduction loads the tile's column vectors (from L2 in a large
      // matmul, a new row of B each step) and broadcasts one value per row (from L1), so 8 rows of 2
      // vectors need half the L2 lines per FMA that 4 rows of 4 do (1024^3: 9.5 -> 8.5 ms on 2 cores).
      // Half the registers hold accumulators: AVX2's 16 allow 4 rows of 2 vectors.
      const std::pair<int64_t, int64_t> tiles[] = {
          {2 * kCpuTileRows, 2 * vw}, {kCpuTileRows, 4 * vw}, {kCpuTileRows, 2 * vw}, {kCpuTileRows, vw}};
      for (auto [rows, cols] : tiles) {
        if (rows * cols / vw > caps.vector_registers / 2 || plan.pieces[*col].size % cols != 0 ||
            plan.pieces[*row].size % rows != 0 || out_size / (rows * cols) < min_groups)
          continue;
        Plan p = plan;
        if (try_opt(p, {OptOp::Upcast, open_axis(p, *col), cols}, caps) &&
            try_opt(p, {OptOp::Upcast, open_axis(p, *row), rows}, caps)) {
          plan = std::move(p);
          return;
        }
      }
    }
    // No row axis (a depthwise conv: nothing is shared across its channels): full-width column vectors
    // alone, and the steps below may still unroll the reduction. Each accumulator waits on its last FMA (4
    // cycles, two units), so two vectors leave the FMA units idle most of the time: 2 vectors where step 3
    // will upcast the columns left over by 4 (8 vectors then), else up to 8 vectors of columns (PP-OCR
    // cls's 5x5 depthwise conv, 96 columns: 412 -> 331 us).
    if (col && !row) {
      const int64_t size = plan.pieces[*col].size;
      const bool later = size % (8 * vw) == 0 && broadcast(plan.pieces[*col].axis);
      for (int64_t cols = later ? 2 * vw : std::min(8 * vw, size) / vw * vw; cols >= vw; cols -= vw)
        if (size % cols == 0 && out_size / cols >= min_groups &&
            try_opt(plan, {OptOp::Upcast, open_axis(plan, *col), cols}, caps))
          break;
    }
  }

  // 0b. on a CPU, a float32 sum read contiguously along a reduce axis and by no output axis (a
  // matrix-vector product with the matrix row-major, an LSTM's gates): split it into partial sums in vector
  // lanes (GROUP: Split), two vectors of them for two FMAs in flight; the outputs are then upcast by step 3.
  // Only float32 sums: the vector pass packs their partials; others would stay scalar registers.
  if (cpu_tile && reduce_op == Op::Add && reduce_src && reduce_src.dtype() == dtypes::float32 &&
      !plan.has(AxisKind::Upcast)) {
    auto contiguous_along = [&](int64_t axis) {
      bool one = false;
      for (const LoadInfo& l : loads) {
        if (!l.strides[size_t(axis)] || (*l.strides[size_t(axis)] != 0 && *l.strides[size_t(axis)] != 1))
          return false;
        one |= *l.strides[size_t(axis)] == 1;
      }
      return one;
    };
    bool column = false;  // some output axis is read contiguously: step 0's tile serves it better
    for (size_t i : pieces_of(AxisKind::Global))
      for (const LoadInfo& l : loads) column |= l.strides[size_t(plan.pieces[i].axis)] == 1;
    for (size_t i : pieces_of(AxisKind::Loop)) {
      if (column || !contiguous_along(plan.pieces[i].axis)) continue;
      bool done = false;
      for (int64_t g : {2 * vw, vw})
        if (!done && plan.pieces[i].size % g == 0 && plan.pieces[i].size > g)
          done = try_opt(plan, {OptOp::Group, open_axis(plan, i), g}, caps);
      if (done) break;
    }
  }

  // 1. matrix-vector.
  if (caps.has_local && reduce_op == Op::Add && pieces_of(AxisKind::Global).size() == 1 &&
      pieces_of(AxisKind::Loop).size() == 1 && reduce_src && reduce_src.op() == Op::Mul &&
      reduce_src.src(0).op() == Op::Load && reduce_src.src(1).op() == Op::Load && loads.size() == 2) {
    const Piece g = plan.pieces[pieces_of(AxisKind::Global)[0]],
                r = plan.pieces[pieces_of(AxisKind::Loop)[0]];
    const bool vec_bcast = broadcast(g.axis);
    bool contiguous = true;
    for (const LoadInfo& l : loads) contiguous &= l.strides[size_t(r.axis)] == 1;
    if (vec_bcast && contiguous && g.size % 16 == 0 && r.size % 8 == 0) {
      Plan p = plan;
      if (try_opt(p, {OptOp::Group, 1, 8}, caps) && try_opt(p, {OptOp::Local, 0, 4}, caps) &&
          try_opt(p, {OptOp::Upcast, 0, 4}, caps)) {
        plan = std::move(p);
        return;
      }
    }
  }

  // 2. grouped reduction: few outputs, a long reduction.
  const std::vector<size_t> loops = pieces_of(AxisKind::Loop);
  if (caps.has_local && !loops.empty() && out_size <= 2048) {
    const size_t last = loops.back();
    if (plan.pieces[last].size >= 4096)
      for (int64_t sz : out_size <= 32 ? std::vector<int64_t>{256, 16} : std::vector<int64_t>{16})
        if (try_opt(plan, {OptOp::GroupTop, open_axis(plan, last), sz}, caps)) break;
  }

  // 3. upcast axes some load broadcasts.
  int upcasts = 0;
  for (size_t i : pieces_of(AxisKind::Global)) {
    if (upcasts == 2) break;
    const Piece& q = plan.pieces[i];
    if (q.size % 4 != 0 || !broadcast(q.axis) || plan.product(AxisKind::Global) / 4 < min_groups) continue;
    if (try_opt(plan, {OptOp::Upcast, open_axis(plan, i), 4}, caps)) ++upcasts;
  }

  // 4. unroll the last reduce axis.
  if (const std::vector<size_t> ls = pieces_of(AxisKind::Loop); !ls.empty()) {
    const size_t last = ls.back();
    const int64_t sz = plan.pieces[last].size;
    const int64_t ax = open_axis(plan, last);
    if (sz <= 32 && plan.copies() <= 16)
      try_opt(plan, {OptOp::Unroll, ax, 0}, caps);
    else if (out_size <= 16 && sz % 16 == 0 && !plan.has(AxisKind::Split))
      try_opt(plan, {OptOp::Unroll, ax, 16}, caps);
    else if (sz % 4 == 0 && plan.copies() < 16)  // 16 accumulators give ILP already
      try_opt(plan, {OptOp::Unroll, ax, 4}, caps);
  }

  // 5. vector stores of an elementwise output. On a CPU a row of up to 8 vectors is upcast whole: one
  // work-group per row instead of one per 4 floats, and a padding's test along the row folds into
  // constants per lane, leaving the row's own test to gate whole vector loads (vectorize.h). PP-OCR cls's
  // padded copy of a 2x96 map into 6x100: 513 -> 249 us. Read through a padding, rows up to kMaxUpcast
  // lanes: a 192-wide map padded by 1 (194 lanes, no divisor of 4) would otherwise stay scalar, testing
  // every element. A reduction's rows are accumulators: only a short ragged one (a pooled 13-wide map, one
  // vector and its tail) is upcast whole there, else by 4, as is a row apply_opt refuses whole (kMaxUpcast
  // copies with an unrolled reduction).
  if (!plan.has(AxisKind::Upcast) && !plan.has(AxisKind::GroupReduce)) {
    const std::vector<size_t> gs = pieces_of(AxisKind::Global);
    if (!gs.empty()) {
      const Piece& q = plan.pieces[gs.back()];
      const bool reduces = reduce_op != Op::Noop;
      const int64_t row = reduces ? 2 * vw : padded ? kMaxUpcast : 8 * vw;
      const bool whole = cpu_tile && (!reduces || q.size % 4 != 0) && q.size >= 4 && q.size <= row &&
                         q.stride == 1 && contiguous_out(q.axis) &&
                         plan.product(AxisKind::Global) / q.size >= min_groups &&
                         try_opt(plan, {OptOp::Upcast, open_axis(plan, gs.back()), 0}, caps);
      if (!whole && q.size % 4 == 0 && q.stride == 1 && plan.product(AxisKind::Global) / 4 >= min_groups)
        try_opt(plan, {OptOp::Upcast, open_axis(plan, gs.back()), 4}, caps);
    }
  }

  // 6. local sizes, innermost output axis first.
  if (caps.has_local) {
    const std::vector<size_t> gs = pieces_of(AxisKind::Global);
    for (size_t k = gs.size(); k-- > 0;) {
      for (int64_t sz : {32, 16, 8, 4, 2}) {
        const int64_t items = plan.product(AxisKind::Local) * plan.product(AxisKind::GroupReduce);
        if (items * sz > 128 || plan.pieces[gs[k]].size % sz != 0) continue;
        if (try_opt(plan, {OptOp::Local, open_axis(plan, gs[k]), sz}, caps)) break;
      }
    }
  }
}

}  // namespace sluice::codegen
