#pragma once
// Vector loads and stores (kernel.h: LOAD/STORE with a vector dtype, VECTORIZE, GEP): after UPCAST or
// UNROLL, n scalar accesses of one buffer at base+k, k = 0..n-1, become one n-wide access when base is
// provably a multiple of n (so the access is aligned), the accesses are unmasked and the dtype is float32.
// On a CPU, loads masked by one gate (the same INDEX valid node: a padded row's own test, once the test
// along the row has folded into constants per lane) merge too, into one load under that gate: a renderer
// of a target with vector widths of 8 or more must render gated vector loads (renderers/cstyle.cpp).
// Widths are tried widest first from `widths` (DeviceCaps::vector_widths). Works on the lowered graph
// (before linearize). Pure function; any thread.
//
// Widths of 8 or more are the CPU's (its C vectors may be unaligned, renderers/cstyle.cpp): there any
// base will do, and the arithmetic feeding each vector store is packed into vector ops too, so a register
// tile's accumulators become vector registers and its updates vector FMAs (MULACC):
//   lanes                                    packed
//   x, x, ..., x                             VECTORIZE(x, ..., x)              (a splat)
//   GEP(v, 0), ..., GEP(v, n-1)              v
//   a_i + b_i*c_i                            MULACC(b, c, a)                   (one rounding: an FMA)
//   a_i <op> b_i   (ADD, SUB, MUL, FDIV,     a <op> b
//                   MAX)
//   <op> a_i       (NEG, RECIP, EXP2, LOG2,  <op> a                          (the math functions run
//                   SIN, SQRT, TRUNC)                                          per lane: cstyle.h)
//   ASSIGN(acc_i, x_i), acc_i DEFINE_REG     ASSIGN(acc, x), acc one vector DEFINE_REG
//   anything else                            VECTORIZE(lanes)                  (a gather)
// A Split reduce's partial accumulators (GROUP on a CPU, lower.cpp), combined by a sum after their loops,
// are packed the same way, seeded from that sum (no vector store leads to them); the sum adds the lanes.
#include <vector>

#include "core/ir/uop.h"

namespace sluice::codegen {

UOp vectorize(const UOp& sink, const std::vector<int>& widths);

// The registers a contiguous run of `lanes` float32 values takes on the CPU once vectorize() packs it:
// the widest widths first, and what is left (fewer lanes than the narrowest width) in one more. A
// register tile's accumulators are counted with it (heuristic.cpp).
int64_t registers_for_lanes(int64_t lanes, const std::vector<int>& widths);

}  // namespace sluice::codegen
