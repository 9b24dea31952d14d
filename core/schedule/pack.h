#pragma once
// Column panels for a large matmul (DESIGN.md §2, the CPU register tile): the kernel becomes two, a copy
// of the column operand B into panels of `width` columns, [N/width][K][width], and the matmul reading the
// panels. A register tile of `width` columns then reads each reduction step's row of B from the next 128
// bytes instead of a row N floats away: rows 4 KB apart all land in the same L1 sets (1024^3 on one core:
// 122-128 -> 180-190 GFLOP/s in a standalone harness). The tile's rows of A, 4 KB apart as well, gain
// nothing from panels of their own (measured: the packed matmul ran no faster, the copy cost 5%).
//
// pack_columns(item, width) matches a kernel whose only STORE holds one REDUCE_AXIS(ADD) over one axis r of
// float32 values, reading (among others) a buffer B through one plain view whose step is 1 along an output
// axis c, at least 256 along r and 0 along every other axis (B is read nowhere else in the kernel), where
// width divides the size of c, r has at least 256 steps and the other output axes at least 256 rows
// together (each packed element is then read 256 times or more). It returns the pack kernel, which stores a
// new BUFFER (B's device and dtype) from B row by row (B's memory order: reading it a panel at a time
// touches a page per row of B for each panel), and the item with axis c split into (c / width, width) in
// every view and B's load reading the panels; std::nullopt when nothing matched. The results compute the same
// values in the same order as the item.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/schedule/schedule.h"

namespace sluice {

struct Panels {
  ScheduleItem pack;    // bufs {panels, B}
  ScheduleItem kernel;  // the item, B replaced by the panels
  size_t operand;       // B's index in the item's bufs
};

std::optional<Panels> pack_columns(const ScheduleItem& item, int64_t width);

}  // namespace sluice
