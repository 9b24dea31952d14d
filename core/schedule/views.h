#pragma once
// VIEW nodes for the scheduler (internal to core/schedule): a ShapeTracker as an interned UOp, so equal
// trackers are one node and compare by pointer. Building trackers allocates (every movement op copies its
// views), and schedules build the same ones over and over (every block of a model, every forward pass),
// so construction is memoized per thread by structure: a chain by its base shape and ops, a composition
// by its two (interned) VIEWs. The memo holds VIEW nodes only (they have no sources: they keep no graph
// alive) and forgets everything when it grows past a bound.
#include <cstdint>
#include <span>

#include "core/ir/shape_tracker.h"
#include "core/ir/uop.h"

namespace sluice::sched {

UOp make_view(ShapeTracker st);
const ShapeTracker& st_of(const UOp& view);

// `top` placed over `below` (either may be null: the identity).
UOp compose(const UOp& below, const UOp& top);
// ShapeTracker::from_shape(shape).
UOp identity_view(const Shape& shape);
// One value read everywhere: shape with all strides 0.
UOp broadcast_view(const Shape& shape);
// The movement ops `chain` (sources first, each a RESHAPE/PERMUTE/EXPAND/PAD/SHRINK/FLIP node) applied to
// ShapeTracker::from_shape(base).
UOp chain_view(const Shape& base, std::span<const UOp* const> chain);

}  // namespace sluice::sched
