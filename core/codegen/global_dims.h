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
};

// Axes of size > 1 are merged (leading ones first) until they fit caps.global_dims; a dimension larger
// than caps.global_max is split in two by its largest divisor that fits, when a dimension is free. Throws
// Error `[global_dims] ...` when the shape cannot be mapped. A shape with a 0 gives no specials and a
// dims entry of 0 (nothing to launch).
GlobalMap map_global(const Shape& shape, const DeviceCaps& caps);

}  // namespace sluice::codegen
