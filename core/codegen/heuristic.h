#pragma once
// The hand-coded heuristic (the reference design's hand_coded_optimizations): picks optimization actions
// (opts.h) for a kernel from its shape and its loads' strides, and applies them to the plan. It only
// picks actions the device supports (every action goes through apply_opt's checks against caps; one
// that fails is skipped). In order:
//   0. CPU register tile (no work-groups, vector widths of 8 or more): a sum-reduction whose output's
//      contiguous axis one load reads contiguously and another broadcasts (a matmul's columns), beside an
//      output axis some load broadcasts (its rows): UPCAST the columns by 4, 2 or 1 vector widths (w, the
//      widest of caps.vector_widths) and the rows by 4, as long as the accumulators fill at most half of
//      caps.vector_registers, and nothing else. vectorize.h packs the tile into rows x columns/w vector
//      accumulators, each k step one splat per row, one vector load per w columns and a vector FMA per
//      accumulator. With no row axis (a depthwise conv) the columns alone: 2 vectors where step 3
//      upcasts the rest of them by 4, else up to 8 (independent FMA chains).
//   1. matrix-vector (one output axis, one reduce axis, sum of a product of two loads, one of them
//      broadcast along the output): GROUP 8, LOCAL 4, UPCAST 4                          (work-groups)
//   2. big reductions with small outputs (output <= 2048, reduce >= 4096): GROUPTOP 256 or 16
//   3. UPCAST 4 of up to two output axes some load broadcasts (stride 0): reuse in registers
//   4. UNROLL a small last reduce axis whole (<= 32), else by 4 unless 16 outputs are upcast already (by 16
//      when the output is tiny)
//   5. UPCAST the last output axis when nothing was upcast (vector stores): whole on a CPU where it is
//      at most 8 vectors (kMaxUpcast lanes when a load reads through a padding; a reduction's only when
//      ragged and at most 2 vectors), else by 4
//   6. LOCAL sizes for the output axes, up to 128 work-items per group                   (work-groups)
// Upcasts keep at least 4 work-groups per compute unit so the CPU's thread pool stays busy.
// Pure function of (plan, ast, caps); any thread.
#include "core/codegen/kernel.h"
#include "core/codegen/opts.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

void apply_heuristic(Plan& plan, const UOp& ast, const DeviceCaps& caps);

// The columns of step 0's matmul tile on a CPU (two of its widest vectors): the panel width a large
// matmul's column operand is packed to (core/schedule/pack.h); 0 where there is no such tile.
int64_t panel_width(const DeviceCaps& caps);

}  // namespace sluice::codegen
