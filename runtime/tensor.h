#pragma once
// Tensor: the lazy tensor users hold (DESIGN.md §5). A cheap value handle {UOp, device}: every op builds
// tensor-level UOps from the IR's primitive ops and returns at once; nothing runs until a later realize.
// The math follows the reference design's Tensor (method names included), decomposed into ~20 primitives.
//
// Conventions:
// - Axes may be negative (counted from the end). Reductions take a list of axes; an empty list means all
//   axes. `keepdim` keeps reduced axes with size 1.
// - Binary ops broadcast with numpy rules and promote with least_upper_dtype. A Number operand (a C++
//   scalar) keeps the tensor's dtype when the tensor is float, or when both are integers; otherwise it
//   takes the default dtype of its kind (bool, int32, float32) and promotes with the tensor.
// - Each computing UOp a tensor op creates is tagged with the op's name (the outermost op, so softmax's
//   subtraction is tagged "softmax"); the scheduler reports the tags as kernel metadata. Constants and
//   buffers, also seen through movement ops, are data and stay untagged.
// - Bad arguments throw a sluice::Error subclass naming the op in brackets and the values:
//   ShapeError (shapes, axes), DTypeError (dtypes), ValueError (other values), DeviceError (device names).
// - Building graphs is thread-safe; a Tensor object itself is a value (assign() replaces this object's
//   node only, not that of copies made earlier).
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/uop.h"
#include "core/schedule/schedule.h"
#include "runtime/device_name.h"

namespace sluice {

// The C++ scalar types tensors are made from and combined with.
template <class T>
concept HostScalar = std::is_arithmetic_v<T> && !std::is_same_v<T, long double>;

// A C++ scalar operand: its kind (bool, integer, float) decides dtype promotion, as a Python scalar does
// in the reference design. Integers keep their exact value (uint64 as its bit pattern). Implicit, so that
// `t + 1` reads as it does in the reference design.
struct Number {
  enum class Kind : uint8_t { Bool, Int, Float };
  Kind kind = Kind::Int;
  int64_t i = 0;  // Bool and Int
  double f = 0;   // Float

  template <HostScalar T>
  Number(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      kind = Kind::Bool;
      i = v;
    } else if constexpr (std::is_integral_v<T>) {
      i = int64_t(v);
    } else {
      kind = Kind::Float;
      f = double(v);
    }
  }
  double as_double() const { return kind == Kind::Float ? f : double(i); }
  DType default_dtype() const;  // bool, int32 or float32
};

// Python-style slice of one axis: start/stop default to the ends (by the sign of step), negatives count
// from the end, out-of-range values clamp, step != 0.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};

enum class PadMode : uint8_t { Constant, Reflect, Replicate, Circular };
enum class Rounding : uint8_t { None, Trunc, Floor };
enum class Reduction : uint8_t { None, Mean, Sum };
enum class InterpolateMode : uint8_t { Nearest, NearestExact, Linear };

struct ConvOptions;  // below: they hold Tensors
namespace detail {
struct GradState;  // runtime/tensor_grad.cpp
}
struct HostBuffer;  // runtime/buffer.h
struct PoolOptions;

class Tensor {
 public:
  // Wraps a tensor-level node living on `device` (canonicalized). Tags untagged new nodes with the name
  // of the tensor op being built, if any.
  Tensor(UOp uop, const std::string& device);

  // ---------------------------------------------------------------- creation
  // A new buffer holding a copy of host data (a HostBuffer, runtime/buffer.h), viewed as `shape`.
  // T: bool, any integer (int8..uint64 by size and sign), float, double. Throws ShapeError when
  // data.size() != prod(shape).
  template <HostScalar T>
  static Tensor from(std::span<const T> data, const Shape& shape,
                     const std::string& device = default_device()) {
    return from_bytes(data.data(), host_dtype<T>(), int64_t(data.size()), shape, device);
  }
  template <class T>
  static Tensor from(const std::vector<T>& data, const Shape& shape,
                     const std::string& device = default_device()) {
    return from(std::span<const T>(data), shape, device);
  }
  static Tensor from(const std::vector<bool>& data, const Shape& shape,
                     const std::string& device = default_device());
  template <class T>
  static Tensor from(const std::vector<T>& data) {  // 1-d on the default device
    return from(data, Shape{int64_t(data.size())});
  }
  // Braced lists take their element type: from({1.5f, 2.f}, {2}) is float32, from({0, 1}, {2}) int32.
  template <HostScalar T>
  static Tensor from(std::initializer_list<T> data, const Shape& shape,
                     const std::string& device = default_device()) {
    return from(std::span<const T>(data.begin(), data.size()), shape, device);
  }
  template <HostScalar T>
  static Tensor from(std::initializer_list<T> data) {  // 1-d on the default device
    return from(data, Shape{int64_t(data.size())});
  }
  // A tensor over host data that the caller already holds as a HostBuffer (runtime/buffer.h: any dtype,
  // native layout), without copying it; the buffer must not change afterwards. ShapeError when the
  // buffer's size does not fill `shape`.
  static Tensor from_host(std::shared_ptr<const HostBuffer> host, const Shape& shape,
                          const std::string& device = default_device());
  // Float data stored as a float dtype (float16, bfloat16, float32, float64), rounded to nearest even.
  static Tensor from(std::span<const float> data, const Shape& shape, DType dtype,
                     const std::string& device = default_device());
  // The dtype a host scalar type is stored as.
  template <class T>
  static constexpr DType host_dtype() {
    if constexpr (std::is_same_v<T, bool>)
      return dtypes::bool_;
    else if constexpr (std::is_floating_point_v<T>)
      return sizeof(T) == 4 ? dtypes::float32 : dtypes::float64;
    else if constexpr (std::is_signed_v<T>)
      return sizeof(T) == 1   ? dtypes::int8
             : sizeof(T) == 2 ? dtypes::int16
             : sizeof(T) == 4 ? dtypes::int32
                              : dtypes::int64;
    else
      return sizeof(T) == 1   ? dtypes::uint8
             : sizeof(T) == 2 ? dtypes::uint16
             : sizeof(T) == 4 ? dtypes::uint32
                              : dtypes::uint64;
  }

  static Tensor empty(const Shape& shape, DType dtype = dtypes::float32,
                      const std::string& device = default_device());  // a buffer with no contents yet
  // fill's dtype by default follows its kind: bool, int32 or float32.
  static Tensor full(const Shape& shape, Number fill, std::optional<DType> dtype = std::nullopt,
                     const std::string& device = default_device());
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::float32,
                      const std::string& device = default_device());
  static Tensor ones(const Shape& shape, DType dtype = dtypes::float32,
                     const std::string& device = default_device());
  Tensor full_like(Number fill, std::optional<DType> dtype = std::nullopt) const;  // dtype: this one's
  Tensor zeros_like(std::optional<DType> dtype = std::nullopt) const;
  Tensor ones_like(std::optional<DType> dtype = std::nullopt) const;
  // [start, stop) in steps; the dtype is int32 when all three are integers, else float32 (or as given).
  static Tensor arange(Number stop);
  static Tensor arange(Number start, Number stop, Number step = 1, std::optional<DType> dtype = std::nullopt,
                       const std::string& device = default_device());
  static Tensor linspace(double start, double stop, int64_t steps, DType dtype = dtypes::float32,
                         const std::string& device = default_device());
  static Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = dtypes::float32,
                    const std::string& device = default_device());

  // Random tensors from a counter-based generator: a keyed integer hash of (seed, element index) built
  // from uint32 ALU ops, so a seed gives the same numbers on every device and the same graph every time.
  // Every creation function takes (shape, its own values, [seed], dtype, device), in that order.
  static Tensor rand(const Shape& shape, uint64_t seed = 0, DType dtype = dtypes::float32,
                     const std::string& device = default_device());  // uniform in [0, 1)
  static Tensor randn(const Shape& shape, uint64_t seed = 0, DType dtype = dtypes::float32,
                      const std::string& device = default_device());  // standard normal (Box-Muller)
  static Tensor randint(const Shape& shape, int64_t low, int64_t high, uint64_t seed = 0,
                        DType dtype = dtypes::int32, const std::string& device = default_device());
  static Tensor uniform(const Shape& shape, double low, double high, uint64_t seed = 0,
                        DType dtype = dtypes::float32, const std::string& device = default_device());
  static Tensor normal(const Shape& shape, double mean, double std, uint64_t seed = 0,
                       DType dtype = dtypes::float32, const std::string& device = default_device());
  // Uniform in [0, 1) from the stream (seed, counter): `counter` is a uint32 scalar tensor whose value
  // is read on the device, so a graph that advances it (write(counter + 1)) draws new numbers each time
  // it runs, a replayed jitted one included. The result is on the counter's device.
  static Tensor rand(const Shape& shape, uint64_t seed, const Tensor& counter, DType dtype = dtypes::float32);

  // ---------------------------------------------------------------- queries (never realize)
  const UOp& uop() const { return uop_; }
  // The BUFFER of exactly numel() elements this tensor is (or is a chain of reshapes of), else null: a
  // realized dense tensor, whose bytes are the buffer's.
  UOp dense_buffer() const;
  const std::string& device() const { return device_; }
  const Shape& shape() const { return uop_.shape(); }
  int64_t shape(int64_t axis) const;  // negative axes count from the end
  DType dtype() const { return uop_.dtype(); }
  int64_t numel() const { return uop_.numel(); }
  int64_t ndim() const { return int64_t(shape().size()); }
  std::string str() const;  // "Tensor(shape=(2, 3), dtype=float, device=CPU)"

  // ---------------------------------------------------------------- state
  Tensor& assign(const Tensor& value);  // in-place write: this tensor's node becomes the ASSIGN
  // The same write as a separate node (value cast to this dtype), leaving this tensor its buffer: for
  // state that a step built once updates every time it runs (optimizer state, running statistics, a
  // random stream's counter). Realize the returned tensor to write.
  Tensor write(const Tensor& value) const;
  Tensor contiguous() const;  // a realize point
  Tensor detach() const;
  Tensor to(const std::string& device) const;  // COPY (this tensor when already there)
  Tensor cast(DType dtype) const;
  Tensor bitcast(DType dtype) const;  // same itemsize only

  // ---------------------------------------------------------------- gradients (core/gradient)
  // Reverse mode, on the lazy graph: backward() adds d(this)/d(t) to t.grad() for every tensor t that
  // requires grad and that this tensor depends on; the gradients are lazy tensors like any other. Copies
  // of a Tensor share whether it requires grad and its gradient (as references to one tensor do in the
  // reference design); assign() and realize() keep them.
  // Marks this tensor as a leaf whose gradient backward() keeps. Float tensors only (DTypeError).
  Tensor& requires_grad(bool on);
  bool requires_grad() const;
  // The sum of the gradients backward() gave this tensor since zero_grad(); nullopt before any.
  std::optional<Tensor> grad() const;
  void zero_grad();
  // For a tensor of one element; `gradient` (this shape) for any other. ValueError when no tensor that
  // requires grad reaches this one; DTypeError for a non-float tensor.
  void backward();
  void backward(const Tensor& gradient);

  // ---------------------------------------------------------------- scheduling (plans kernels, runs nothing)
  std::vector<ScheduleItem> schedule() const;  // the kernels that compute this tensor
  static std::vector<ScheduleItem> schedule_all(const std::vector<Tensor>& tensors);  // of all, together
  Tensor kernelize() const;  // this tensor in its realized form, with its kernels explicit (core kernelize)

  // ---------------------------------------------------------------- realize (runs kernels, blocks)
  // Schedules and runs this tensor on its device (the registry's Realizer, runtime/device.h), then makes
  // this tensor its realized form: the BUFFER the result was stored into (device memory, runtime/buffer.h,
  // which stays on the device), viewed in its shape; copies made earlier keep their graph. Returns once
  // the work is submitted. Throws DeviceError for an absent device, and what the Realizer throws. On NULL
  // the values are whatever its memory holds.
  Tensor& realize();
  // realize() for several tensors of one device in one schedule: work they share runs once, and an
  // ASSIGN one of them reads is ordered before it (an optimizer's parameters and their state).
  static void realize_all(const std::vector<Tensor*>& tensors);
  // The values as nested lists, numpy style, for tensors of up to `max_elements`:
  // "Tensor([[1, 2.5], [nan, -inf]], dtype=float, device=CPU)"; larger ones print as str(). Realizes this
  // tensor itself (as to_vector does), so reading it again computes nothing. operator<< prints this.
  std::string values_str(int64_t max_elements = 1000);
  // The values, flat in row-major order (realizes first). T must be this dtype's host type exactly
  // (float: float32, double: float64, int32_t: int32, bool: bool, ...); float16 and bfloat16 read as float.
  // Else DTypeError "[to_vector] tensor is float, asked for int32_t".
  template <HostScalar T>
  std::vector<T> to_vector() {
    return read<T>("to_vector");
  }
  // The single value of a tensor with numel 1; ValueError otherwise, DTypeError as to_vector.
  template <HostScalar T>
  T item() {
    check_item();
    return read<T>("item").at(0);
  }

  // ---------------------------------------------------------------- elementwise: arithmetic
  Tensor add(const Tensor& y) const;
  Tensor add(Number y) const;
  Tensor sub(const Tensor& y) const;
  Tensor sub(Number y) const;
  Tensor mul(const Tensor& y) const;
  Tensor mul(Number y) const;
  // True division (integers divide as float32) or, with a rounding mode, division rounded toward zero or
  // down; integer operands then stay integers.
  Tensor div(const Tensor& y, Rounding rounding = Rounding::None) const;
  Tensor div(Number y, Rounding rounding = Rounding::None) const;
  Tensor floor_divide(const Tensor& y) const { return div(y, Rounding::Floor); }
  Tensor floor_divide(Number y) const { return div(y, Rounding::Floor); }
  Tensor mod(const Tensor& y) const;  // the result has the sign of the divisor (Python, torch.remainder)
  Tensor mod(Number y) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Number exponent) const;
  Tensor maximum(const Tensor& y) const;  // NaN propagates
  Tensor maximum(Number y) const;
  Tensor minimum(const Tensor& y) const;
  Tensor minimum(Number y) const;
  Tensor neg() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor square() const;
  Tensor reciprocal() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor trunc() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;  // half to even
  Tensor isnan() const;
  Tensor isinf(bool detect_positive = true, bool detect_negative = true) const;
  Tensor clip(std::optional<Number> min, std::optional<Number> max) const;
  Tensor clamp(std::optional<Number> min, std::optional<Number> max) const { return clip(min, max); }
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, Number weight) const;
  // This (as a bool condition) selects x where true, y where false; x and y broadcast and promote.
  Tensor where(const Tensor& x, const Tensor& y) const;
  Tensor where(const Tensor& x, Number y) const;
  Tensor where(Number x, const Tensor& y) const;
  Tensor where(Number x, Number y) const;

  // ---------------------------------------------------------------- elementwise: comparisons, logic, bits
  Tensor lt(const Tensor& y) const;
  Tensor lt(Number y) const;
  Tensor le(const Tensor& y) const;
  Tensor le(Number y) const;
  Tensor gt(const Tensor& y) const;
  Tensor gt(Number y) const;
  Tensor ge(const Tensor& y) const;
  Tensor ge(Number y) const;
  Tensor eq(const Tensor& y) const;
  Tensor eq(Number y) const;
  Tensor ne(const Tensor& y) const;
  Tensor ne(Number y) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& y) const;
  Tensor logical_or(const Tensor& y) const;
  Tensor logical_xor(const Tensor& y) const;
  Tensor bitwise_and(const Tensor& y) const;  // integer or bool tensors
  Tensor bitwise_and(Number y) const;
  Tensor bitwise_or(const Tensor& y) const;
  Tensor bitwise_or(Number y) const;
  Tensor bitwise_xor(const Tensor& y) const;
  Tensor bitwise_xor(Number y) const;
  Tensor bitwise_not() const;
  Tensor lshift(const Tensor& y) const;  // integer tensors
  Tensor lshift(Number y) const;
  Tensor rshift(const Tensor& y) const;
  Tensor rshift(Number y) const;

  // ---------------------------------------------------------------- activations
  Tensor relu() const;
  Tensor relu6() const;
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor elu(double alpha = 1.0) const;
  Tensor celu(double alpha = 1.0) const;
  Tensor selu(double alpha = 1.67326, double gamma = 1.0507) const;
  Tensor gelu() const;  // tanh approximation
  Tensor quick_gelu() const;
  Tensor silu() const;
  Tensor swish() const { return silu(); }
  Tensor mish() const;
  Tensor softplus(double beta = 1.0) const;
  Tensor softsign() const;
  Tensor sigmoid() const;
  Tensor logsigmoid() const;
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;
  Tensor hardswish() const;
  Tensor hardtanh(double min_val = -1, double max_val = 1) const;
  Tensor tanh() const;
  Tensor erf() const;

  // ---------------------------------------------------------------- reductions
  // sum accumulates small integers in int32 (uint32 if unsigned) and halves in float32 (returned as half).
  Tensor sum(const Shape& axes = {}, bool keepdim = false,
             std::optional<DType> acc_dtype = std::nullopt) const;
  Tensor prod(const Shape& axes = {}, bool keepdim = false) const;
  Tensor max(const Shape& axes = {}, bool keepdim = false) const;
  Tensor min(const Shape& axes = {}, bool keepdim = false) const;
  Tensor mean(const Shape& axes = {}, bool keepdim = false) const;  // integers average as float32
  Tensor var(const Shape& axes = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(const Shape& axes = {}, bool keepdim = false, double correction = 1) const;
  Tensor any(const Shape& axes = {}, bool keepdim = false) const;
  Tensor all(const Shape& axes = {}, bool keepdim = false) const;
  // Index (int32) of the first maximum / minimum; no axis: of the flattened tensor.
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(const Shape& axes = {}, bool keepdim = false) const;
  Tensor cumsum(int64_t axis = 0) const;
  Tensor cumprod(int64_t axis = 0) const;
  Tensor cummax(int64_t axis = 0) const;

  // ---------------------------------------------------------------- movement (views, no copies)
  Tensor reshape(const Shape& shape) const;  // one axis may be -1
  Tensor permute(const Shape& axes) const;
  Tensor transpose(int64_t a = 1, int64_t b = 0) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor unflatten(int64_t axis, const Shape& sizes) const;  // one size may be -1
  Tensor squeeze() const;                                    // every size-1 axis
  Tensor squeeze(int64_t axis) const;                        // that axis, if its size is 1
  Tensor unsqueeze(int64_t axis) const;
  Tensor expand(const Shape& shape) const;  // -1 keeps a size; new leading axes allowed
  // One (before, after) pair per axis. Constant mode fills with `value` (in this dtype); negative amounts
  // crop there. Reflect needs pads < size, Circular pads <= size, and neither takes negative amounts.
  Tensor pad(const Bounds& pads, Number value = 0, PadMode mode = PadMode::Constant) const;
  Tensor shrink(const Bounds& bounds) const;
  Tensor flip(const Shape& axes) const;
  Tensor slice(const std::vector<Slice>& slices) const;  // one per leading axis
  Tensor select(int64_t axis, int64_t index) const;      // that index, axis removed (negative ok)
  Tensor operator[](int64_t index) const { return select(0, index); }
  // This tensor followed by `others` (as the reference design's a.cat(b, c, dim=...)). The free functions
  // sluice::cat / sluice::stack take the whole list; there is deliberately no static Tensor::cat, which
  // C++ would let `a.cat({b})` call while silently dropping `a`.
  Tensor cat(const std::vector<Tensor>& others, int64_t axis = 0) const;
  Tensor stack(const std::vector<Tensor>& others, int64_t axis = 0) const;
  std::vector<Tensor> split(int64_t size, int64_t axis = 0) const;        // pieces of `size` (last smaller)
  std::vector<Tensor> split(const Shape& sizes, int64_t axis = 0) const;  // sizes summing to the axis
  std::vector<Tensor> chunk(int64_t chunks, int64_t axis = 0) const;
  Tensor repeat(const Shape& repeats) const;
  Tensor roll(const Shape& shifts, const Shape& axes) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;

  // ---------------------------------------------------------------- indexing
  // Gathers along `axis`: out[i][j]... = this[..., index[...], ...] with index.ndim == ndim.
  Tensor gather(int64_t axis, const Tensor& index) const;
  // Rows `index` (any shape, integers, negatives from the end) along `axis`: the result's shape is
  // shape[:axis] + index.shape + shape[axis+1:]. Built from one-hot masks (no data-dependent loads).
  Tensor index_select(int64_t axis, const Tensor& index) const;
  Tensor operator[](const Tensor& index) const { return index_select(0, index); }
  Tensor one_hot(int64_t num_classes) const;  // int32, a new last axis
  Tensor masked_fill(const Tensor& mask, Number value) const;

  // ---------------------------------------------------------------- linear algebra
  // Batched, broadcasting matmul as a reshape + expand + mul + sum over the last axis (one reduce kernel).
  // The result dtype is acc_dtype when given, else the operands' least upper dtype.
  Tensor dot(const Tensor& w, std::optional<DType> acc_dtype = std::nullopt) const;
  Tensor matmul(const Tensor& w,
                std::optional<DType> acc_dtype = std::nullopt) const;  // dot, tagged "matmul"
  // "ij,jk->ik", implicit outputs ("ij,jk") and "..." broadcasting; repeated letters in one operand not.
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands);

  // ---------------------------------------------------------------- nn
  // NCHW input, (C_out, C_in / groups, kH, kW) weight; any number of spatial dims (conv1d is the same op).
  // Options as designated initializers: x.conv2d(w, {.bias = b, .stride = {2}, .padding = {1}}).
  Tensor conv2d(const Tensor& weight) const;
  Tensor conv2d(const Tensor& weight, const ConvOptions& o) const;
  Tensor conv1d(const Tensor& weight) const { return conv2d(weight); }
  Tensor conv1d(const Tensor& weight, const ConvOptions& o) const { return conv2d(weight, o); }
  Tensor conv_transpose2d(const Tensor& weight) const;  // weight (C_in, C_out / groups, kH, kW)
  Tensor conv_transpose2d(const Tensor& weight, const ConvOptions& o) const;
  Tensor max_pool2d() const;  // 2x2, stride 2
  Tensor max_pool2d(const PoolOptions& o) const;
  Tensor avg_pool2d() const;
  Tensor avg_pool2d(const PoolOptions& o) const;
  // Resizes the last len(size) axes.
  Tensor interpolate(const Shape& size, InterpolateMode mode = InterpolateMode::Linear,
                     bool align_corners = false) const;
  Tensor layernorm(int64_t axis = -1, double eps = 1e-5) const;
  Tensor rmsnorm(int64_t axis = -1, double eps = 1e-6) const;
  // Inference batchnorm over `axis`: (x - mean) * invstd * weight + bias with per-channel 1-d tensors.
  Tensor batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                   const Tensor& invstd, int64_t axis = 1) const;
  // (..., L, E) queries against (..., S, E) keys and (..., S, Ev) values. A bool mask selects what attends;
  // a float mask is added to the scores.
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      const std::optional<Tensor>& attn_mask = std::nullopt,
                                      bool is_causal = false) const;
  // Logits (N, C, d...) against class indices (N, d...) or probabilities (N, C, d...).
  Tensor cross_entropy(const Tensor& y, Reduction reduction = Reduction::Mean,
                       double label_smoothing = 0) const;
  // Logits (..., C) against class indices (...); labels equal to ignore_index do not count.
  Tensor sparse_categorical_crossentropy(const Tensor& y, int64_t ignore_index = -1,
                                         double label_smoothing = 0,
                                         Reduction reduction = Reduction::Mean) const;
  // Log-probabilities (N, C) against class indices (N).
  Tensor nll_loss(const Tensor& y, const std::optional<Tensor>& weight = std::nullopt,
                  std::optional<int64_t> ignore_index = std::nullopt,
                  Reduction reduction = Reduction::Mean) const;
  Tensor binary_cross_entropy(const Tensor& y, Reduction reduction = Reduction::Mean) const;  // probabilities
  Tensor binary_cross_entropy_with_logits(const Tensor& y, Reduction reduction = Reduction::Mean) const;

 private:
  template <class T>
  static constexpr const char* host_type_name() {
    if constexpr (std::is_same_v<T, bool>)
      return "bool";
    else if constexpr (std::is_floating_point_v<T>)
      return sizeof(T) == 4 ? "float" : "double";
    else if constexpr (std::is_signed_v<T>)
      return sizeof(T) == 1 ? "int8_t" : sizeof(T) == 2 ? "int16_t" : sizeof(T) == 4 ? "int32_t" : "int64_t";
    else
      return sizeof(T) == 1   ? "uint8_t"
             : sizeof(T) == 2 ? "uint16_t"
             : sizeof(T) == 4 ? "uint32_t"
                              : "uint64_t";
  }
  template <class T>
  std::vector<T> read(const char* fn) {
    check_read(fn, host_dtype<T>(), host_type_name<T>());  // before allocating: a wrong type costs nothing
    std::vector<T> out(static_cast<size_t>(numel()));
    if constexpr (std::is_same_v<T, bool>) {  // vector<bool> packs bits; a bool buffer is 0/1 bytes
      std::vector<uint8_t> bytes(out.size());
      read_into(fn, host_dtype<T>(), bytes.data());
      for (size_t k = 0; k < out.size(); k++) out[k] = bytes[k] != 0;
    } else {
      read_into(fn, host_dtype<T>(), out.data());
    }
    return out;
  }
  // DTypeError unless this dtype is `want` (the host type `type_name`'s; float16 and bfloat16 read as float).
  void check_read(const char* fn, DType want, const char* type_name) const;
  // Realizes and writes numel() elements of `want` (checked) to `out`.
  void read_into(const char* fn, DType want, void* out);
  void check_item() const;
  // n elements of `dtype`, native layout, copied into a new buffer.
  static Tensor from_bytes(const void* data, DType dtype, int64_t n, const Shape& shape,
                           const std::string& device);

  // Keeps this tensor's gradient state in step with its node (assign, realize).
  void set_uop(UOp uop);

  UOp uop_;
  std::string device_;
  std::shared_ptr<detail::GradState> grad_;  // null until requires_grad()
};

// d(y)/d(x) for each x of `xs` as lazy tensors (zeros where y does not depend on x), given y's upstream
// gradient (default: ones, for a y of one element). Needs no requires_grad; float tensors only.
std::vector<Tensor> gradients(const Tensor& y, const std::vector<Tensor>& xs,
                              const std::optional<Tensor>& y_grad = std::nullopt);

// While one lives on this thread, every float tensor an op builds is detached (Tensor::detach): no
// gradient flows through it. An optimizer's update runs in one.
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;
  static bool active();
};

// Options of the N-d convolutions (conv2d works on any number of spatial dims: weight.ndim - 2).
// stride, dilation: one value for every spatial dim or one per dim. padding: one value, one per dim
// (both sides), or a (before, after) pair per dim in dim order.
// Concatenation along an existing axis, and stacking along a new one, of every tensor in the list.
Tensor cat(const std::vector<Tensor>& tensors, int64_t axis = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t axis = 0);

struct ConvOptions {
  std::optional<Tensor> bias = std::nullopt;
  int64_t groups = 1;
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> output_padding = {0};  // conv_transpose2d only
};

// Options of max_pool2d / avg_pool2d (over the last len(kernel) dims; one value means both 2-d dims).
struct PoolOptions {
  std::vector<int64_t> kernel = {2};
  std::vector<int64_t> stride = {};  // empty: the kernel size
  std::vector<int64_t> dilation = {1};
  std::vector<int64_t> padding = {0};  // as ConvOptions::padding
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d only
};

// Operators. Arithmetic as add/sub/mul/div (true division)/mod, bitwise on integers and bools, comparisons
// give bool tensors. A Number on the left becomes a tensor by the promotion rules above.
#define SLUICE_TENSOR_OPERATOR(OP)                      \
  Tensor operator OP(const Tensor& a, const Tensor& b); \
  Tensor operator OP(const Tensor& a, Number b);        \
  Tensor operator OP(Number a, const Tensor& b);
SLUICE_TENSOR_OPERATOR(+)
SLUICE_TENSOR_OPERATOR(-)
SLUICE_TENSOR_OPERATOR(*)
SLUICE_TENSOR_OPERATOR(/)
SLUICE_TENSOR_OPERATOR(%)
SLUICE_TENSOR_OPERATOR(&)
SLUICE_TENSOR_OPERATOR(|)
SLUICE_TENSOR_OPERATOR(^)
SLUICE_TENSOR_OPERATOR(<)
SLUICE_TENSOR_OPERATOR(<=)
SLUICE_TENSOR_OPERATOR(>)
SLUICE_TENSOR_OPERATOR(>=)
SLUICE_TENSOR_OPERATOR(==)
SLUICE_TENSOR_OPERATOR(!=)
#undef SLUICE_TENSOR_OPERATOR
Tensor operator<<(const Tensor& a, const Tensor& b);
Tensor operator<<(const Tensor& a, Number b);
Tensor operator>>(const Tensor& a, const Tensor& b);
Tensor operator>>(const Tensor& a, Number b);
Tensor operator-(const Tensor& a);
Tensor operator~(const Tensor& a);
std::ostream& operator<<(std::ostream& os, Tensor& t);        // t.values_str(): realizes t in place
std::ostream& operator<<(std::ostream& os, const Tensor& t);  // a temporary or a const tensor: a copy

}  // namespace sluice
