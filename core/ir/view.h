#pragma once
// View: one strided, offset, optionally masked window onto a flat buffer (DESIGN.md §2, "Shape").
//
// Element `i` (one index per axis) of a view lives at `offset + sum(i[a] * strides[a])` of the buffer below
// it, and exists only where `mask[a].first <= i[a] < mask[a].second` on every axis; elsewhere it reads as
// padding. Movement ops return new views (values, no sharing); reshape can fail (std::nullopt) when the
// result is not one view, and `a + b` composes two stacked views into one where that is possible.
//
// Views are always canonical (View::create): size-1 axes have stride 0, an axis masked down to a single
// element has stride 0, a mask that covers everything is dropped, a view masked down to nothing is all
// zero strides with the mask (0, 0) on every axis, and a view with a size-0 axis is contiguous.
// Two canonical views that index the same elements usually compare equal, but not always.
//
// Bad arguments throw ShapeError naming the op and the values: `[reshape] cannot reshape (2, 3) to (4,)`.
// Everything is pure value computation: any thread, no shared state.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace sluice {

using Shape = std::vector<int64_t>;
using Bounds = std::vector<std::pair<int64_t, int64_t>>;  // per axis [begin, end)

// Row-major strides of a dense buffer of `shape`, with 0 on size-1 axes: (2, 3, 1) -> (3, 1, 0).
Shape strides_for_shape(const Shape& shape);
int64_t prod(std::span<const int64_t> v);
// Tuple-style printing for messages: (2, 3), (4,), () and ((0, 1), (2, 3)).
std::string tuple_str(std::span<const int64_t> v);
std::string tuple_str(const Bounds& b);

// Argument checks of the movement ops, shared by View, ShapeTracker and the tensor-level builders on UOp.
// Each throws ShapeError naming the op and the values: `[reshape] cannot reshape (2, 3) to (4,)`.
void check_reshape(const Shape& shape, const Shape& new_shape);  // same size, no negative sizes
void check_permute(const Shape& shape, const Shape& axes);       // a permutation of 0..ndim-1
void check_expand(const Shape& shape, const Shape& new_shape);   // only size-1 axes change
void check_pad(const Shape& shape, const Bounds& pads);          // one (before, after) >= 0 per axis
void check_shrink(const Shape& shape, const Bounds& bounds);     // 0 <= begin <= end <= size per axis
void check_flip(const Shape& shape, const Shape& axes);          // distinct axes in range

struct View {
  Shape shape, strides;
  int64_t offset = 0;
  std::optional<Bounds> mask;  // std::nullopt: every element is valid
  bool contiguous = true;      // the identity view of a dense buffer of `shape`

  // The canonical view (see above). Empty strides mean dense row-major; a negative size throws.
  static View create(Shape shape, Shape strides = {}, int64_t offset = 0, std::optional<Bounds> mask = {});

  int64_t size() const { return prod(shape); }

  // The same elements in a new shape of the same size, as one view; std::nullopt when that needs a second
  // view (a permuted or masked view split or merged across its non-contiguous axes).
  std::optional<View> reshape(const Shape& new_shape) const;
  View permute(const Shape& axes) const;      // axis a of the result is axis axes[a] of this view
  View expand(const Shape& new_shape) const;  // size-1 axes broadcast to any size
  View pad(const Bounds& pads) const;         // (before, after) per axis, both >= 0; new elements are padding
  View shrink(const Bounds& bounds) const;    // [begin, end) per axis, 0 <= begin <= end <= size
  View flip(const Shape& axes) const;         // reverse each listed axis (each at most once)
  // The same view with as few axes as possible: axes that merge into one stride are merged.
  View minify() const;

  // The one view that reads what `top` reads when `top` is placed over this view (this view indexes the
  // buffer, `top` indexes this view's elements); std::nullopt when no single view can.
  std::optional<View> operator+(const View& top) const;

  friend bool operator==(const View&, const View&) = default;
  size_t hash() const;
  std::string str() const;  // View(shape=(2, 3), strides=(3, 1), offset=0, mask=None, contiguous=True)
};

}  // namespace sluice
