#pragma once
// Lowering a kernel AST (core/schedule/schedule.h, "KERNEL AST FORMAT") to kernel-level UOps under a Plan
// (opts.h): the graph that linearize (linearize.h) orders into a Kernel's uops.
//
//   Global pieces    -> SPECIAL work-group ids over the device's launch dimensions (global_dims.h)
//   Local, GroupReduce pieces -> SPECIAL work-item ids "lidxN"
//   Loop pieces      -> RANGE loops, shared by every reduce (arg: the piece's number)
//   Upcast pieces    -> the kernel's stores (and accumulators) repeated per value of the piece
//   Unroll pieces    -> a reduce's operand repeated per value, folded before it meets the accumulator
//   LOAD(buf, VIEW)  -> LOAD(INDEX(buf, idx[, valid])): a masked load reads nothing where invalid (0)
//   CONST(VIEW)      -> the constant, or WHERE(valid, c, 0)
//   REDUCE_AXIS(x)   -> ASSIGN(DEFINE_REG(identity, ranges...), acc <op> x): an accumulator; with GroupReduce
//                       pieces the per-work-item partial goes to DEFINE_LOCAL, a BARRIER, then a second
//                       nest of RANGEs (arg 1000 + piece) reduces the partials; stores are then masked to
//                       the work-items whose group ids are 0
//   STORE(buf, VIEW, v) -> STORE(INDEX(buf, idx[, valid]), v)
// Padded axes (PADTO) add `index < size` to the validity of every load and store that uses them, and a
// reduce's operand is its identity on padded reduce elements.
// Indices come from ShapeTracker::to_indexed, simplified with core/ir/symbolic.
// Index arithmetic is int32, or int64 in a kernel where an index value may reach 2^30 (a buffer, view or
// iteration space that large): every SPECIAL, RANGE and index expression of the kernel then is int64.
//
// Pure functions; any thread. Throws Error `[lower] ...` for an AST that is not a compute kernel (COPY) or
// breaks the format (views of different ranks, reduces over different axes).
#include <array>
#include <cstdint>
#include <vector>

#include "core/codegen/global_dims.h"
#include "core/codegen/kernel.h"
#include "core/codegen/opts.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

// The iteration structure of a kernel AST.
struct Analysis {
  Shape full_shape;    // F (the output shape when the kernel has no reduction)
  Shape output_shape;  // O
  std::vector<int64_t> reduce_axes;
};
Analysis analyze(const UOp& ast);

struct Lowered {
  UOp sink;  // SINK of the kernel-level STOREs
  GlobalMap global;
  std::array<uint32_t, 3> local_size = {1, 1, 1};
  int64_t local_bytes = 0;
};

Lowered lower(const UOp& ast, const Plan& plan, const DeviceCaps& caps);

// The identity of a reduce op in dtype dt: 0 for ADD, 1 for MUL, -inf (or the dtype's minimum) for MAX.
UOp reduce_identity(Op op, DType dt);

}  // namespace sluice::codegen
