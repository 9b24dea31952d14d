#pragma once
// Reverse-mode gradients on the tensor graph (DESIGN.md §2, "Gradient"). Each primitive op's derivative
// is one rule (gradient.cpp) that builds tensor-level UOps, so the backward graph is an ordinary lazy
// graph that the scheduler fuses and every device runs; every Tensor op, being made of these primitives,
// is differentiated through them.
//
// Conventions, as the reference design's:
// - Only float tensors carry gradients; integer and bool nodes pass none (comparisons, casts from
//   integers, bit operations, integer division).
// - MAX (elementwise) splits the gradient equally between tied inputs; a MAX reduction divides it among
//   the tied maxima of each output.
// - DETACH and constants pass no gradient; truncation (floor, round, trunc) has a zero derivative.
#include <span>
#include <vector>

#include "core/ir/uop.h"

namespace sluice {

// d(root)/d(target) for each target, given the upstream gradient `root_grad` (root's shape and dtype):
// lazy tensor-level nodes. A target that root does not depend on through differentiable ops gets a null
// UOp. Throws DTypeError naming `where` if root or root_grad is not float.
std::vector<UOp> gradient(const UOp& root, const UOp& root_grad, std::span<const UOp> targets);

}  // namespace sluice
