#pragma once
// Transcendentals from ALU ops only, for devices whose EXP2/LOG2/SIN builtins are approximate or missing
// (DeviceCaps::accurate_transcendentals = false; AMDGPU has no float64 ones at all). The approximations
// use only ADD/MUL/FDIV/WHERE/CMPLT/CMPNE/CAST/BITCAST/AND/OR/SHL/SHR, in the reference design's manner
// (Sleef-style range reduction + minimax polynomials):
//   EXP2  q = rint(x), 2^(x-q) by a polynomial on [-1/2, 1/2], scaled by 2^q in two steps (subnormals)
//   LOG2  x = m 2^e with m in [3/4, 3/2) (denormals scaled by 2^64 first), log2 m by an odd polynomial
//         in (m-1)/(m+1)
//   SIN   r = x mod pi/2 in [-pi/4, pi/4] with its quadrant, then the sin or cos polynomial of r:
//         float32: Payne-Hanek for |x| >= pi/4, exact integer multiplication by 128 bits of 1/(2 pi);
//         float64: Cody-Waite (pi/2 in four parts) for |x| < 2^20, Payne-Hanek beyond.
// float16 and bfloat16 compute through float32 and round once at the end.
//
// Accuracy, measured by tests/render/transcendental_test.cpp against the exact value (evaluating the
// rewritten uops op by op with core/ir/alu's exec_alu, each op rounded to its dtype) over dense sweeps,
// sweeps of bit patterns (all magnitudes, denormals) and edge cases. Bounds asserted (measured):
//   op     float32               float64
//   EXP2   1.5 ulp (1.08)        1.5 ulp (1.00)
//   LOG2   3.5 ulp (3.34)        3.5 ulp (3.01)      the Sleef u3.5 polynomial; worst near x = 3/4
//   SIN    2 ulp (1.50), all x   2.5 ulp (2.15) for |x| < 2^20; beyond, absolute error <= 2^-51.5
//                                (2^-52.2 measured: the relative error grows where sin x is near 0)
//   float16 through float32: exact to the half ulp for every finite half.
// GPU compilers may contract a*b+c into fma, which changes the last bit of some results.
// Special values follow IEEE/C: exp2(-inf) = 0, exp2(inf) = inf, log2(0) = log2(-0) = -inf, log2(x < 0) =
// NaN, log2(inf) = inf, sin(+-0) = +-0, sin(+-inf) = NaN; NaN stays NaN.
//
// Pure functions; any thread.
#include "core/ir/uop.h"

namespace sluice::codegen {

// The approximation of op (EXP2, LOG2 or SIN) applied to x (a float scalar).
UOp exp2_approx(const UOp& x);
UOp log2_approx(const UOp& x);
UOp sin_approx(const UOp& x);

// The graph below sink with every scalar float EXP2, LOG2 and SIN replaced by its approximation.
UOp rewrite_transcendentals(const UOp& sink);

}  // namespace sluice::codegen
