#pragma once
// Helpers shared by the tensor_*.cpp files (not part of the public API).
#include <utility>

#include "base/error.h"
#include "runtime/tensor.h"

namespace sluice::detail {

// Names the tensor op whose nodes are being built, for the tags the Tensor constructor sets. The outermost
// scope on a thread wins, so the nodes softmax builds through sub/exp/sum are all tagged "softmax".
class OpScope {
 public:
  explicit OpScope(const char* name);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;
  static const char* current();  // nullptr outside every scope

 private:
  bool outer_;
};

// Inside a NoGrad scope: `u` detached when it computes a float value (an ALU op, a cast, a reduction),
// else `u` (buffers, constants and views of them carry no gradient anyway).
UOp without_grad(const UOp& u);

// ShapeError naming `op` when a size is negative.
void check_shape(const char* op, const Shape& shape);
// `axis` in [-ndim, ndim) as a non-negative axis; ShapeError naming `op` otherwise.
int64_t resolve_axis(const char* op, int64_t axis, int64_t ndim);
// Resolved, sorted, distinct axes; empty means all axes.
Shape resolve_axes(const char* op, const Shape& axes, int64_t ndim);
// numpy broadcasting of two shapes; ShapeError naming `op` and both shapes.
Shape broadcast_shape(const char* op, const Shape& a, const Shape& b);
// t viewed as `shape` (leading 1s prepended, then expanded); ShapeError when it does not broadcast.
Tensor broadcast_to(const char* op, const Tensor& t, const Shape& shape);
// x and y on one device, promoted to their least upper dtype (unless match_dtype is false) and broadcast.
std::pair<Tensor, Tensor> broadcasted(const char* op, const Tensor& x, const Tensor& y,
                                      bool match_dtype = true);
// A constant of dtype `dt` broadcast to `shape` (CONST on the device, reshaped to 1s and expanded).
Tensor const_tensor(const std::string& device, DType dt, Number v, const Shape& shape = {});
// A Number as a shape-() tensor next to `like`, in the dtype the promotion rule gives it (tensor.h).
Tensor number_tensor(const Tensor& like, Number v);
// ALU nodes over tensors of one shape and device (already broadcast and promoted).
Tensor alu(Op op, const Tensor& a);
Tensor alu(Op op, const Tensor& a, const Tensor& b);
Tensor alu(Op op, const Tensor& a, const Tensor& b, const Tensor& c);
// REDUCE_AXIS over resolved axes, keeping them with size 1; no axes: t itself.
Tensor reduce(const Tensor& t, Op op, const Shape& axes);
// t without the (resolved) axes, which must have size 1.
Tensor drop_axes(const Tensor& t, const Shape& axes);
// A tensor of `shape` and dtype dt holding each element's index along `axis`, built from padded constants
// at that shape (no reduction, and nothing computed that a consumer must read through an expand).
Tensor index_ramp(const Shape& shape, int64_t axis, DType dt, const std::string& device);
// index.unsqueeze(-1) == [0, n) along a new last axis; with wrap_negative, -n..-1 match too.
Tensor one_hot_mask(const Tensor& index, int64_t n, bool wrap_negative = false);
// Where column - row >= diagonal, for r rows and c columns: movement ops on a constant (no kernel of its
// own).
Tensor upper_triangle(int64_t r, int64_t c, int64_t diagonal, const std::string& device);
// An order-reversing map, so min(a, b) = inverse(max(inverse(a), inverse(b))): -x for floats, ~x for
// integers (signed or not), !x for bools.
Tensor inverse(const Tensor& t);
// The identity of a reduce op (0 for ADD, 1 for MUL, the dtype's minimum for MAX).
double reduce_identity(Op op, DType dt);
// Windows of the last len(kernel) axes: (..., o_1..o_k, k_1..k_k), the reference design's _pool.
Tensor pool(const Tensor& t, const Shape& kernel, const Shape& stride, const Shape& dilation);
// Per-axis (before, after) pads of the last `dims` axes from the ConvOptions/PoolOptions padding forms.
Bounds resolve_pool_pads(const char* op, const Shape& padding, size_t dims);
// One value per dim from a one-value or per-dim list.
Shape per_dim(const char* op, const char* what, const Shape& v, size_t dims);

}  // namespace sluice::detail
