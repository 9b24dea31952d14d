#pragma once
// Vector loads and stores (kernel.h: LOAD/STORE with a vector dtype, VECTORIZE, GEP): after UPCAST or
// UNROLL, n scalar accesses of one buffer at base+k, k = 0..n-1, become one n-wide access when base is
// provably a multiple of n (so the access is aligned), the accesses are unmasked and the dtype is float32.
// Widths are tried widest first from `widths` (DeviceCaps::vector_widths). Works on the lowered graph
// (before linearize). Pure function; any thread.
#include <vector>

#include "core/ir/uop.h"

namespace sluice::codegen {

UOp vectorize(const UOp& sink, const std::vector<int>& widths);

}  // namespace sluice::codegen
