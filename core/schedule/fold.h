#pragma once
// Constant folding on the tensor graph before grouping (internal to core/schedule). A tensor constant is a
// CONST (with a DEVICE source, or without one) reshaped to 1s and expanded to its shape: the form the
// Tensor API builds and these rules keep, since a view of a constant that is not padded is again a
// constant of the view's shape. Every rule keeps the root's shape and dtype, and never changes a result
// (float NaN and inf included: x*0 folds for integers only).
#include "core/ir/pattern.h"

namespace sluice::sched {

// Rules that need a constant among the root's sources; the scheduler's graph walk tries them only then.
extern const PatternMatcher fold_const_rules;
// Rules on DETACH, CONTIGUOUS, WHERE, REDUCE_AXIS and COPY roots, whatever their sources.
extern const PatternMatcher fold_rules;
// Rules for nodes without elements, or reductions of nothing; tried only on those.
extern const PatternMatcher fold_empty_rules;

// The CONST under a tensor constant (through its reshape and expand); null if u is not one.
UOp const_leaf(const UOp& u);
// Constant c (a CONST) broadcast to `shape` in the canonical form.
UOp const_view(const UOp& c, const Shape& shape);

}  // namespace sluice::sched
