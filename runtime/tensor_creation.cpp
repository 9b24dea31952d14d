// Creation: tensors from host data, constants, ranges and the identity matrix.
#include <cmath>
#include <cstring>

#include "runtime/buffer.h"
#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

Tensor Tensor::from_bytes(const void* data, DType dtype, int64_t n, const Shape& shape,
                          const std::string& device) {
  detail::check_shape("from", shape);
  SLUICE_CHECK_IN(ShapeError, "from", sluice::prod(shape) == n)
      << n << " elements do not fill shape " << tuple_str(shape);
  auto host = std::make_shared<HostBuffer>();
  host->dtype = dtype;
  host->size = n;
  host->bytes.resize(size_t(n) * size_t(dtype.itemsize()));
  if (n > 0) std::memcpy(host->bytes.data(), data, host->bytes.size());
  std::string dev = canonical_device(device);
  UOp buf = UOp::new_buffer(dev, dtype, n);
  attach_host_buffer(buf, std::move(host));
  return Tensor(buf.reshape(shape), dev);
}

Tensor Tensor::from_host(std::shared_ptr<const HostBuffer> host, const Shape& shape, const std::string& device) {
  detail::check_shape("from_host", shape);
  SLUICE_CHECK_IN(ShapeError, "from_host", host && sluice::prod(shape) == host->size)
      << (host ? host->size : 0) << " elements do not fill shape " << tuple_str(shape);
  std::string dev = canonical_device(device);
  UOp buf = UOp::new_buffer(dev, host->dtype, host->size);
  attach_host_buffer(buf, std::move(host));
  return Tensor(buf.reshape(shape), dev);
}

Tensor Tensor::from(const std::vector<bool>& data, const Shape& shape, const std::string& device) {
  std::vector<uint8_t> bytes(data.begin(), data.end());  // vector<bool> packs bits; a bool buffer is bytes
  return from_bytes(bytes.data(), dtypes::bool_, int64_t(bytes.size()), shape, device);
}

Tensor Tensor::from(std::span<const float> data, const Shape& shape, DType dtype, const std::string& device) {
  SLUICE_CHECK_IN(DTypeError, "from", dtype.is_float())
      << "float data needs a float dtype, got " << dtype.name();
  if (dtype == dtypes::float32) return from(data, shape, device);
  if (dtype == dtypes::float64) {
    std::vector<double> wide(data.begin(), data.end());
    return from(wide, shape, device);
  }
  std::vector<uint16_t> bits(data.size());
  for (size_t i = 0; i < data.size(); i++)
    bits[i] = dtype == dtypes::float16 ? float_to_half_bits(data[i]) : float_to_bf16_bits(data[i]);
  return from_bytes(bits.data(), dtype, int64_t(bits.size()), shape, device);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device) {
  detail::check_shape("empty", shape);
  std::string dev = canonical_device(device);
  return Tensor(UOp::new_buffer(dev, dtype, sluice::prod(shape)).reshape(shape), dev);
}

Tensor Tensor::full(const Shape& shape, Number fill, std::optional<DType> dtype, const std::string& device) {
  OpScope scope("full");
  detail::check_shape("full", shape);
  return detail::const_tensor(canonical_device(device), dtype.value_or(fill.default_dtype()), fill, shape);
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device) {
  return full(shape, 0, dtype, device);
}
Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device) {
  return full(shape, 1, dtype, device);
}
Tensor Tensor::full_like(Number fill, std::optional<DType> dtype) const {
  return full(shape(), fill, dtype.value_or(this->dtype()), device_);
}
Tensor Tensor::zeros_like(std::optional<DType> dtype) const { return full_like(0, dtype); }
Tensor Tensor::ones_like(std::optional<DType> dtype) const { return full_like(1, dtype); }

namespace detail {
// Bit j of every index is a (2,) constant [0, 2^j] (a padded scalar) broadcast along its own axis of a
// (2, 2, ..., 2) block; their sum, flattened, counts 0, 1, 2, ... This keeps arange elementwise (one fused
// kernel, O(n log n) work) where the reference design's cumsum of ones is a quadratic reduction.
Tensor index_ramp(const Shape& shape, int64_t axis, DType dt, const std::string& device) {
  auto a = size_t(resolve_axis("arange", axis, int64_t(shape.size())));
  int64_t n = shape[a];
  SLUICE_CHECK_IN(ValueError, "arange", n >= 0 && double(n - 1) <= dt.max())
      << n << " elements do not fit in " << dt.name();
  int64_t bits = 0;
  while ((int64_t(1) << bits) < n) bits++;
  Shape pre(shape.begin(), shape.begin() + long(a)), post(shape.begin() + long(a) + 1, shape.end());
  Shape cube = pre, flat = pre;
  cube.insert(cube.end(), size_t(bits), 2);
  cube.insert(cube.end(), post.begin(), post.end());
  flat.push_back(int64_t(1) << bits);
  flat.insert(flat.end(), post.begin(), post.end());
  Tensor sum = const_tensor(device, dt, 0, cube);
  for (int64_t j = 0; j < bits; j++) {
    UOp digit = UOp::const_int_on(device, dt, int64_t(1) << j).reshape({1}).pad({{1, 0}});
    Shape view(cube.size(), 1);
    view[pre.size() + size_t(bits - 1 - j)] = 2;
    Tensor term(digit.reshape(view).expand(cube), device);
    sum = j == 0 ? term : alu(Op::Add, sum, term);
  }
  Bounds keep;
  for (size_t i = 0; i < flat.size(); i++) keep.push_back({0, i == a ? n : flat[i]});
  return Tensor(sum.uop().reshape(flat).shrink(keep), device);
}
}  // namespace detail

Tensor Tensor::arange(Number stop) { return arange(0, stop); }

Tensor Tensor::arange(Number start, Number stop, Number step, std::optional<DType> dtype,
                      const std::string& device) {
  OpScope scope("arange");
  bool ints = start.kind != Number::Kind::Float && stop.kind != Number::Kind::Float &&
              step.kind != Number::Kind::Float;
  DType dt = dtype.value_or(ints ? dtypes::int32 : dtypes::float32);
  double a = start.as_double(), b = stop.as_double(), s = step.as_double();
  SLUICE_CHECK_IN(ValueError, "arange", s != 0) << "step must not be 0";
  int64_t n = std::max<int64_t>(0, int64_t(std::ceil((b - a) / s)));
  std::string dev = canonical_device(device);
  Tensor idx = detail::index_ramp({n}, 0, dtypes::int32, dev);
  // start + i * step, computed in the result's dtype (exact for integers; one rounding per float element).
  DType work = dt.is_float() || !ints ? least_upper_float(dt) : dt;
  Tensor v =
      idx.cast(work).mul(detail::const_tensor(dev, work, step)).add(detail::const_tensor(dev, work, start));
  return v.cast(dt);
}

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype, const std::string& device) {
  OpScope scope("linspace");
  SLUICE_CHECK_IN(ValueError, "linspace", steps >= 0) << "steps must be >= 0, got " << steps;
  if (steps == 1) return full({1}, start, dtype, device);
  std::string dev = canonical_device(device);
  Tensor idx = detail::index_ramp({steps}, 0, dtypes::int32, dev).cast(least_upper_float(dtype));
  return (idx * ((stop - start) / double(steps - 1)) + start).cast(dtype);
}

Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, DType dtype, const std::string& device) {
  OpScope scope("eye");
  int64_t cols = m.value_or(n);
  SLUICE_CHECK_IN(ValueError, "eye", n >= 0 && cols >= 0) << "negative size (" << n << ", " << cols << ")";
  // Ones in a column padded to rows of n + 1, read back as rows of n: the ones land on the diagonal.
  Tensor square =
      ones({n, 1}, dtype, device).pad({{0, 0}, {0, n}}).flatten().shrink({{0, n * n}}).reshape({n, n});
  return cols >= n ? square.pad({{0, 0}, {0, cols - n}}) : square.shrink({{0, n}, {0, cols}});
}

}  // namespace sluice
