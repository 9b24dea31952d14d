#pragma once
// Symbolic algebra as rule tables (DESIGN.md §2), in three layers so later passes can pick what they need:
//   fold_constants  — every ALU op (and CAST/BITCAST) on constants, with the dtype's exact semantics
//   symbolic_simple — identities: x+0, x*1, x*0 (integers), x//1, x-x, x&x, where(c,x,x), casts, ...
//   symbolic        — simple + canonical sums and products ((x+c1)+c2, x*c1*c2, x*c+x*d), range analysis
//                     (a node whose vmin == vmax is that constant) and division/modulo folding from ranges:
//                     (x*4+y)//4 -> x and (x*4+y)%4 -> y when 0<=y<4, nested div/mod, common factors.
// Integer rewrites keep C semantics (toward-zero division) exactly; float rewrites never change a result,
// NaN and inf included (so x*0 -> 0 and x-x -> 0 hold for integers only).
#include "core/ir/pattern.h"
#include "core/ir/uop.h"

namespace sluice {

extern const PatternMatcher fold_constants;
extern const PatternMatcher symbolic_simple;
extern const PatternMatcher symbolic;

// The constant an ALU/CAST/BITCAST node with all-constant sources evaluates to; null if undefined in C.
UOp fold_alu(const UOp& u);

// graph_rewrite(u, symbolic): the simplest form of an expression.
UOp simplify(const UOp& u);

// e simplified where `valid` holds (a masked load's index under its mask): each clause x < c, x >= c or
// c < x of the conjunction bounds x, and e is simplified with those bounds (a padded axis's
// ((i + 7) / 8 + 23) / 24 is 1 where 1 <= i <= 192). Only where valid holds is the result e's value.
// An e without divisions or remainders comes back as it is.
UOp simplify_given(const UOp& e, const UOp& valid);

}  // namespace sluice
