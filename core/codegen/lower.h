#pragma once
// Lowering a kernel AST (core/schedule/schedule.h, "KERNEL AST FORMAT") to kernel-level UOps: the graph
// that linearize (linearize.h) orders into a Kernel's uops.
//
//   output axes      -> SPECIAL work-group ids over the device's launch dimensions (global_dims.h)
//   reduced axes     -> RANGE loops, one per reduced axis of size > 1, shared by every reduce
//   LOAD(buf, VIEW)  -> LOAD(INDEX(buf, idx[, valid])): a masked load reads nothing where invalid (0)
//   CONST(VIEW)      -> the constant, or WHERE(valid, c, 0)
//   REDUCE_AXIS(x)   -> ASSIGN(DEFINE_REG(identity, ranges...), acc <op> x): an accumulator
//   STORE(buf, VIEW, v) -> STORE(INDEX(buf, idx[, valid]), v)
// Indices come from ShapeTracker::to_indexed, simplified with core/ir/symbolic.
//
// Pure function; any thread. Throws Error `[lower] ...` for an AST that is not a compute kernel (COPY) or
// breaks the format (views of different ranks, reduces over different axes).
#include <cstdint>
#include <vector>

#include "core/codegen/global_dims.h"
#include "core/codegen/kernel.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

struct Lowered {
  UOp sink;            // SINK of the kernel-level STOREs, in the AST's order
  Shape full_shape;    // F (the output shape when the kernel has no reduction)
  Shape output_shape;  // O
  std::vector<int64_t> reduce_axes;
  GlobalMap global;
};

Lowered lower(const UOp& ast, const DeviceCaps& caps);

// The identity of a reduce op in dtype dt: 0 for ADD, 1 for MUL, -inf (or the dtype's minimum) for MAX.
UOp reduce_identity(Op op, DType dt);

}  // namespace sluice::codegen
