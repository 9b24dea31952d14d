#pragma once
// The reference evaluator: computes a tensor-level graph (DESIGN.md §2) on the host by walking the graph
// itself — no scheduling, no codegen, no ShapeTracker — so it is an oracle that every device's op results
// can be compared with.
//
// Semantics (per element; the ALU ops are those of core/ir/alu.h):
// - Floats compute in double and are NOT rounded after each op: the oracle is the exact-as-possible value
//   the op means. Only a CAST to a float dtype rounds (round_float), so the oracle holds what storage
//   would hold after it; a BITCAST uses the bits of its source value rounded to the source dtype. Float
//   ALU ops are exec_alu on float64, so IEEE rules hold: 0/0 and log2(-1) give NaN, 1/0 gives inf, MAX
//   propagates NaN.
// - Integers and bools are exact, with the dtype's wrap-around (int8 100+100 = -56, uint8 0-1 = 255);
//   division and modulo truncate toward zero (C); bool ADD/MUL are OR/AND. CAST follows exec_cast
//   (float -> int truncates; the source is the unrounded double).
// - Undefined elements: where C leaves a result undefined (exec_alu/exec_cast give nullopt: integer
//   division or modulo by zero, INT_MIN / -1, shifts by a negative amount or >= the width, float -> int
//   casts of NaN or out-of-range values) the element holds 0 and is flagged in HostArray::undefined.
//   The flag follows the data: an element computed from an undefined element is undefined (WHERE: from
//   its condition or the branch it picks; a reduction: from any element it reduces); padding is defined.
//   Device tests compare only the defined elements.
// - Movement ops map indices exactly: RESHAPE row-major, PERMUTE, EXPAND (size-1 axes broadcast), PAD
//   (new elements are 0 / false), SHRINK, FLIP.
// - REDUCE_AXIS folds the listed axes in index order, starting from the identity (ADD 0, MUL 1, MAX -inf
//   or the dtype's minimum), so reducing an empty axis gives the identity; reduced axes keep size 1.
// - CONTIGUOUS, DETACH and COPY pass their source's values; ASSIGN(target, value) is the new contents,
//   value (the target is not read). CONST is a shape () scalar.
// - An ALU source of shape () broadcasts to the op's shape (as `u + 1` builds it); any other shape
//   mismatch throws ShapeError.
//
// Failures: ops that are not tensor-level (kernel ops, VIEW, DEFINE_VAR), float-only ALU ops on integers
// and bool bitcasts throw DTypeError/ValueError naming the op ("[evaluate] ..."); a reader that returns
// the wrong dtype or size throws ValueError. Everything else is total.
//
// Each node is computed once per call (shared subtrees are not recomputed) and its array is freed once
// its last user in the graph is done; the walk is iterative, so deep chains do not recurse. Pure
// computation: any thread, as long as the reader is safe to call from it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/ir/alu.h"
#include "core/ir/dtype.h"
#include "core/ir/uop.h"

namespace sluice::eval {

// A dense row-major array of values on the host.
struct HostArray {
  DType dtype;
  Shape shape;
  std::vector<double> f;   // float dtypes: the values
  std::vector<int64_t> i;  // bool and integer dtypes: the values (uint64 as its bit pattern)
  // One flag per element, 1 where it is undefined (see above), or empty when every element is defined
  // (always empty then in evaluate's results). Undefined elements hold 0.
  std::vector<uint8_t> undefined;

  int64_t numel() const { return prod(shape); }
  bool is_defined(int64_t k) const { return undefined.empty() || !undefined[size_t(k)]; }
  // Element k (flat, row-major) as a double (uint64 read as unsigned) or as a Scalar64.
  double value(int64_t k) const;
  Scalar64 scalar(int64_t k) const;

  // Arrays of dtype dt and shape; ValueError if the number of values does not match the shape.
  // from_values: floats rounded to dt, integers and bools converted as UOp::const_ does (truncate, wrap).
  static HostArray from_values(DType dt, Shape shape, const std::vector<double>& values);
  // from_ints: integers wrapped to dt (bool: != 0), floats converted and rounded as a cast does.
  static HostArray from_ints(DType dt, Shape shape, const std::vector<int64_t>& values);
  // The elements as storage holds them: little-endian, dt's itemsize each (half and bfloat16 as their
  // IEEE bits, bool as 0/1 bytes). ValueError if the byte count does not match.
  static HostArray from_bytes(DType dt, Shape shape, std::span<const std::byte> bytes);
  std::vector<std::byte> to_bytes() const;  // the inverse; floats rounded to the dtype on the way

  // "float (2, 2) [1, 2, 3, nan]" with undefined elements shown as '?'; for test failure messages.
  std::string str() const;
};

// The flat contents of a BUFFER node (any shape with the buffer's size; its dtype must be the buffer's).
using BufferReader = std::function<HostArray(const UOp& buffer)>;

// The value of a tensor-level graph; the result has root's dtype and shape. Calls `read` once per
// distinct BUFFER the value depends on.
HostArray evaluate(const UOp& root, const BufferReader& read);

}  // namespace sluice::eval
