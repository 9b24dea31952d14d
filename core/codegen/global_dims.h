#pragma once
// Mapping a kernel's output shape onto a device's launch dimensions (DESIGN.md §2, "Codegen").
#include <cstdint>
#include <vector>

#include "core/codegen/kernel.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

struct GlobalMap {
  std::vector<uint32_t> dims;  // launch sizes, at most caps.global_dims of them (empty: a single group)
  std::vector<UOp> specials;   // SPECIAL "gidxN" per launch dimension
  std::vector<UOp> axis_idx;   // per output axis: its index as a UOp over the specials (0 for size-1 axes)
  UOp valid;  // null, or the condition for a work-group to store (a dimension split beyond its size)
};

// Axes of size > 1 are merged (the neighbours with the fewest work-groups together, the leading ones on a
// tie) until they fit caps.global_dims; a dimension larger than caps.global_max is split in two (hi, lo)
// when a dimension is free: by its largest divisor that fits, or, when no divisor makes both halves fit (a
// prime factor above the limit), into lo = the limit and hi = ceil(size / lo), whose surplus work-groups
// compute in-range indices (the group's leading axis wraps too) and store nothing (`valid`). Specials and
// indices have dtype idx_dt. Throws Error `[global_dims] ...` when the shape cannot be mapped. A shape
// with a 0 gives no specials and a dims entry of 0 (nothing to launch).
GlobalMap map_global(const Shape& shape, const DeviceCaps& caps, DType idx_dt = dtypes::index);

}  // namespace sluice::codegen
