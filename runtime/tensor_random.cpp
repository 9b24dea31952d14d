// Random tensors from a counter-based generator: element i of a tensor with seed s is a keyed hash of i,
// built from uint32 ALU ops (XOR, SHR, MUL, ADD). No state, no device-specific code: a seed gives the same
// graph, hence the same numbers, on every device.
#include <cmath>
#include <numbers>

#include "base/splitmix64.h"
#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

namespace {
// lowbias32 (C. Wellons): a bijective 32-bit hash with near-ideal avalanche.
Tensor hash32(Tensor x) {
  x = x ^ (x >> 16);
  x = x * 0x7feb352d;
  x = x ^ (x >> 15);
  x = x * 0x846ca68b;
  return x ^ (x >> 16);
}

// n uint32 words: hash(hash(i ^ k0) + k1), where a device-side counter c makes the second key
// hash(c ^ k1), a value the graph reads when it runs.
Tensor random_bits(const char* op, int64_t n, uint64_t seed, const std::string& device,
                   const Tensor* counter = nullptr) {
  SLUICE_CHECK_IN(ValueError, op, n <= (int64_t(1) << 32)) << n << " elements exceed the 2^32 counter";
  uint64_t state = seed;  // the two 32-bit keys of the seed: nearby seeds give unrelated keys
  uint32_t k0 = uint32_t(splitmix64(state)), k1 = uint32_t(splitmix64(state));
  Tensor mixed = hash32(detail::index_ramp({n}, 0, dtypes::uint32, device) ^ int64_t(k0));
  return hash32(counter ? mixed + hash32(*counter ^ int64_t(k1)) : mixed + int64_t(k1));
}

// Uniform [0, 1) in a float dtype: as many top bits as the dtype's significand holds, so the value is exact
// and never rounds up to 1.
Tensor uniform_bits(const char* op, int64_t n, uint64_t seed, const std::string& device, DType dt,
                    const Tensor* counter = nullptr) {
  SLUICE_CHECK_IN(DTypeError, op, dt.is_float()) << "needs a float dtype, got " << dt.name();
  int bits = dt == dtypes::float16 ? 11 : dt == dtypes::bfloat16 ? 8 : dt == dtypes::float32 ? 24 : 32;
  return (random_bits(op, n, seed, device, counter) >> (32 - bits)).cast(dt) * std::ldexp(1.0, -bits);
}
}  // namespace

Tensor Tensor::rand(const Shape& shape, uint64_t seed, DType dtype, const std::string& device) {
  OpScope scope("rand");
  detail::check_shape("rand", shape);
  return uniform_bits("rand", sluice::prod(shape), seed, canonical_device(device), dtype).reshape(shape);
}

Tensor Tensor::rand(const Shape& shape, uint64_t seed, const Tensor& counter, DType dtype) {
  OpScope scope("rand");
  detail::check_shape("rand", shape);
  SLUICE_CHECK_IN(DTypeError, "rand", counter.dtype() == dtypes::uint32 && counter.shape().empty())
      << "the counter must be a uint32 scalar, got " << counter.dtype().name() << " "
      << tuple_str(counter.shape());
  return uniform_bits("rand", sluice::prod(shape), seed, counter.device(), dtype, &counter).reshape(shape);
}

// Box-Muller on 2n uniforms: cos(2 pi u1) * sqrt(-2 ln(1 - u2)), with 1 - u2 in (0, 1].
Tensor Tensor::randn(const Shape& shape, uint64_t seed, DType dtype, const std::string& device) {
  OpScope scope("randn");
  detail::check_shape("randn", shape);
  SLUICE_CHECK_IN(DTypeError, "randn", dtype.is_float()) << "needs a float dtype, got " << dtype.name();
  int64_t n = sluice::prod(shape);
  auto halves = uniform_bits("randn", 2 * n, seed, canonical_device(device), dtypes::float32).split(n);
  Tensor z = (halves[0] * (2 * std::numbers::pi)).cos() * ((1 - halves[1]).log() * -2).sqrt();
  return z.cast(dtype).reshape(shape);
}

// Integers in [low, high) by the remainder of a 32-bit word (bias below range / 2^32).
Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, uint64_t seed, DType dtype,
                       const std::string& device) {
  OpScope scope("randint");
  detail::check_shape("randint", shape);
  SLUICE_CHECK_IN(DTypeError, "randint", dtype.is_int()) << "needs an integer dtype, got " << dtype.name();
  SLUICE_CHECK_IN(ValueError, "randint",
                  low < high && uint64_t(high) - uint64_t(low) <= (uint64_t(1) << 32) &&
                      double(low) >= dtype.min() && double(high - 1) <= dtype.max())
      << "range [" << low << ", " << high << ") must be non-empty, at most 2^32 wide and fit "
      << dtype.name();
  Tensor bits = random_bits("randint", sluice::prod(shape), seed, canonical_device(device));
  Tensor r = high - low == (int64_t(1) << 32) ? bits : bits % (high - low);
  return (r.cast(dtype) + low).reshape(shape);
}

Tensor Tensor::uniform(const Shape& shape, double low, double high, uint64_t seed, DType dtype,
                       const std::string& device) {
  OpScope scope("uniform");
  return (rand(shape, seed, dtype, device) * (high - low) + low).cast(dtype);
}

Tensor Tensor::normal(const Shape& shape, double mean, double std, uint64_t seed, DType dtype,
                      const std::string& device) {
  OpScope scope("normal");
  return (randn(shape, seed, dtype, device) * std + mean).cast(dtype);
}

}  // namespace sluice
