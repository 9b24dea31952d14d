#pragma once
// ShapeTracker: the movement ops applied to a buffer, as a stack of Views (DESIGN.md §2, "Shape").
//
// views.front() indexes the buffer; each later view indexes the elements of the one before it;
// views.back() has the tracker's shape. Movement ops change the last view, except a reshape that the last
// view cannot express: that pushes a new view. After every op the top views merge while one view can
// express both, so the stack stays as short as the ops allow.
//
// to_indexed turns the stack into two UOps over per-axis index UOps: the buffer position each element
// reads, and whether it reads one at all (false on padding). The position is only meaningful where the
// validity holds: it may be out of range, even negative, elsewhere.
//
// A ShapeTracker is a value (copying copies the views) and an ArgObject, so it can be a UOp's arg:
//   UOp::make(Op::View, dtypes::void_, {}, std::make_shared<const ShapeTracker>(st))
// Bad arguments throw ShapeError (see view.h). No shared state: any thread.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/uop.h"
#include "core/ir/view.h"

namespace sluice {

class ShapeTracker : public ArgObject {
 public:
  std::vector<View> views;  // never empty

  explicit ShapeTracker(std::vector<View> views);
  // The identity tracker of a dense buffer of `shape`; a negative size throws.
  static ShapeTracker from_shape(const Shape& shape);

  const Shape& shape() const { return views.back().shape; }
  int64_t size() const { return views.back().size(); }
  // One view reading the buffer in order, without padding: it can be read as it is.
  bool contiguous() const { return views.size() == 1 && views[0].contiguous; }
  // Like contiguous, but the buffer may start at an offset.
  bool consecutive() const;

  // Movement ops (argument conventions as for View; sizes are concrete, -1 is resolved by the caller).
  ShapeTracker reshape(const Shape& new_shape) const;
  ShapeTracker permute(const Shape& axes) const;
  ShapeTracker expand(const Shape& new_shape) const;
  ShapeTracker pad(const Bounds& pads) const;
  ShapeTracker shrink(const Bounds& bounds) const;
  ShapeTracker flip(const Shape& axes) const;

  // `top` applied on top of this tracker: top's first view indexes the elements of this tracker (top was
  // built from from_shape(shape()) or an equivalent view). Merged view by view.
  ShapeTracker operator+(const ShapeTracker& top) const;
  // The same tracker with adjacent views merged wherever one view can express both.
  ShapeTracker simplify() const;

  // (index, valid) for one index UOp per axis, each an integer UOp with 0 <= idxs[a] < shape()[a]; the
  // results are dtypes::index (int64 where an index is int64) and dtypes::bool_ UOps, simplified. Throws
  // ShapeError if the count differs.
  std::pair<UOp, UOp> to_indexed(std::span<const UOp> idxs) const;
  // The same over variables idx0, idx1, ... with bounds [0, shape[a] - 1].
  std::pair<UOp, UOp> to_indexed() const;

  // Per axis: the buffer-position step of one step along that axis, or std::nullopt where it is not a
  // single number (the axis goes through a division or modulo, or, unless ignore_valid, it is masked).
  std::vector<std::optional<int64_t>> real_strides(bool ignore_valid = false) const;
  // The axes whose real stride is 1.
  std::vector<int64_t> unit_stride_axes(bool ignore_valid = false) const;

  friend bool operator==(const ShapeTracker& a, const ShapeTracker& b) { return a.views == b.views; }

  // ArgObject
  size_t hash() const override;
  bool equals(const ArgObject& other) const override;
  std::string str() const override;  // ShapeTracker(views=(View(...), ...))

 private:
  ShapeTracker with_last(View v) const;
};

}  // namespace sluice
