#pragma once
// Column panels for a large matmul (DESIGN.md §2, the CPU register tile): the kernel becomes two, a copy
// of the column operand B into panels of `width` columns, [N/width][K][width], and the matmul reading the
// panels. A register tile of `width` columns then reads each reduction step's row of B from the next 128
// bytes instead of a row N floats away: rows 4 KB apart all land in the same L1 sets (1024^3 on one core:
// 122-128 -> 180-190 GFLOP/s in a standalone harness).
//
// pack_columns(item, width) matches a kernel whose only STORE holds one REDUCE_AXIS(ADD) over one axis r of
// float32 values, reading (among others) a buffer B through one plain view whose step is 1 along an output
// axis c, at least 256 along r and 0 along every other axis (B is read nowhere else in the kernel), where
// width divides the size of c, r has at least 256 steps and the other output axes at least 256 rows
// together (each packed element is then read 256 times or more). It returns {pack, matmul}: the pack
// kernel stores a new BUFFER (B's device and dtype) from B; the matmul is the item with axis c split into
// (c / width, width) in every view and B's load reading the panels. Nothing matched: std::nullopt.
// The results compute the same values in the same order as the item.
#include <array>
#include <cstdint>
#include <optional>

#include "core/schedule/schedule.h"

namespace sluice {

std::optional<std::array<ScheduleItem, 2>> pack_columns(const ScheduleItem& item, int64_t width);

}  // namespace sluice
