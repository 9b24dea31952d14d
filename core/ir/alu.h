#pragma once
// The exact meaning of every ALU op on scalar values — the single definition that constant folding, the
// reference evaluator and the tests share. Integers follow C on two's complement: wrap-around, division
// and modulo toward zero, arithmetic right shift for signed types. Floats are IEEE, computed in double and
// rounded to the dtype. MAX propagates NaN (as torch.maximum does).
//
// Results are std::nullopt where C leaves them undefined (integer division or modulo by zero, INT_MIN / -1,
// shifts by a negative amount or the width or more, float -> int casts of NaN or out-of-range values):
// folding then leaves the op in place.
#include <cstdint>
#include <optional>
#include <span>

#include "core/ir/dtype.h"
#include "core/ir/ops.h"

namespace sluice {

// A scalar value: integers as int64 (uint64 as its bit pattern), floats as double, bool as 0/1 integer.
struct Scalar64 {
  int64_t i = 0;
  double f = 0;
  static Scalar64 of_int(int64_t v) { return {v, 0}; }
  static Scalar64 of_float(double v) { return {0, v}; }
};

// Floor division and modulo (Python's // and %) and ceiling division on int64, for algebra on constants
// (the ALU ops themselves truncate toward zero, as C does). b != 0.
inline int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
inline int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }
inline int64_t ceildiv(int64_t a, int64_t b) { return -floordiv(-a, b); }

// op applied to values of dtype `in` (the dtype of the sources; for WHERE, of the branches); the result
// has the op's result dtype (bool for comparisons, `in` otherwise).
std::optional<Scalar64> exec_alu(Op op, DType in, std::span<const Scalar64> x);
// A value of dtype `from` cast (C semantics) or bitcast to `to`.
std::optional<Scalar64> exec_cast(Scalar64 v, DType from, DType to);
std::optional<Scalar64> exec_bitcast(Scalar64 v, DType from, DType to);

}  // namespace sluice
