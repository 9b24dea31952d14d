#include "core/ir/dtype.h"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>

#include "base/error.h"

namespace sluice {
namespace {

struct ScalarInfo {
  const char* name;
  const char* c_name;
  int size;
  char kind;
};
constexpr ScalarInfo kInfo[] = {
#define SLUICE_X(e, n, c, s, k) {n, c, s, k},
    SLUICE_SCALARS(SLUICE_X)
#undef SLUICE_X
};
const ScalarInfo& info(Scalar s) { return kInfo[int(s)]; }

// The promotion lattice of the reference design: each type and the types it promotes to directly.
using S = Scalar;
const std::vector<std::pair<S, std::vector<S>>> kLattice = {
    {S::Bool, {S::Int8, S::UInt8}},
    {S::Int8, {S::Int16}},
    {S::Int16, {S::Int32}},
    {S::Int32, {S::Int64}},
    {S::Int64, {S::Float16, S::BFloat16}},
    {S::UInt8, {S::Int16, S::UInt16}},
    {S::UInt16, {S::Int32, S::UInt32}},
    {S::UInt32, {S::Int64, S::UInt64}},
    {S::UInt64, {S::Float16, S::BFloat16}},
    {S::Float16, {S::Float32}},
    {S::BFloat16, {S::Float32}},
    {S::Float32, {S::Float64}},
};

using Set = std::bitset<kNumScalars>;
Set parents(S s) {  // s and everything it promotes to
  Set out;
  out.set(size_t(s));
  for (auto& [from, tos] : kLattice)
    if (from == s)
      for (S t : tos) out |= parents(t);
  return out;
}

}  // namespace

int DType::itemsize() const { return is_ptr() ? 8 : info(scalar).size * count; }
bool DType::is_int() const { return info(scalar).kind == 'i' || info(scalar).kind == 'u'; }
bool DType::is_unsigned() const { return info(scalar).kind == 'u'; }
bool DType::is_float() const { return info(scalar).kind == 'f'; }

DType DType::vec(int n) const {
  SLUICE_CHECK_AS(DTypeError, n >= 1 && n <= 65535 && !is_ptr() && count == 1)
      << "cannot make a " << n << "-vector of " << name();
  return DType{scalar, uint16_t(n)};
}
DType DType::ptr(AddrSpace a, int64_t size) const {
  SLUICE_CHECK_AS(DTypeError, a != AddrSpace::None && !is_ptr()) << "cannot make a pointer to " << name();
  return DType{scalar, count, a, size};
}

std::string DType::name() const {
  std::string s = info(scalar).name;
  if (count > 1) s += std::to_string(count);
  if (is_ptr()) {
    if (addr == AddrSpace::Local) s += "[local]";
    if (addr == AddrSpace::Reg) s += "[reg]";
    s += "*";
  }
  return s;
}
std::ostream& operator<<(std::ostream& os, const DType& dt) { return os << dt.name(); }

std::string DType::c_name() const {
  std::string s = count > 1 ? std::string(info(scalar).name) + std::to_string(count) : info(scalar).c_name;
  return is_ptr() ? s + "*" : s;
}

int64_t DType::min_int() const {
  if (is_bool() || is_unsigned()) return 0;
  return info(scalar).size == 8 ? std::numeric_limits<int64_t>::min()
                                : -(int64_t(1) << (8 * info(scalar).size - 1));
}
uint64_t DType::max_uint() const {
  if (is_bool()) return 1;
  int bits = 8 * info(scalar).size - (is_unsigned() ? 0 : 1);
  return bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t(1) << bits) - 1;
}
double DType::min() const {
  if (is_float()) return -std::numeric_limits<double>::infinity();
  return double(min_int());
}
double DType::max() const {
  if (is_float()) return std::numeric_limits<double>::infinity();
  return double(max_uint());
}

int64_t wrap_int(DType d, int64_t v) {
  switch (d.scalar) {
    case S::Bool: return v != 0;
    case S::Int8: return int8_t(v);
    case S::UInt8: return uint8_t(v);
    case S::Int16: return int16_t(v);
    case S::UInt16: return uint16_t(v);
    case S::Int32: return int32_t(v);
    case S::UInt32: return uint32_t(v);
    default: return v;  // 64-bit types keep their bit pattern
  }
}

uint16_t float_to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0xff) return uint16_t(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));  // inf / NaN
  int e = int(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00);  // overflow -> inf
  if (e <= 0) {                                 // subnormal half (or zero)
    if (e < -10) return uint16_t(sign);
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return uint16_t(sign | half);
  }
  uint32_t half = uint32_t(e) << 10 | man >> 13, rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;  // may carry into the exponent: correct
  return uint16_t(sign | half);
}
float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000 | man << 13;
  } else if (exp == 0) {
    if (man == 0) {
      x = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do { man <<= 1, e++; } while (!(man & 0x400));
      x = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else {
    x = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
uint16_t float_to_bf16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // keep NaN quiet
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}
float bf16_bits_to_float(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
double round_float(DType d, double v) {
  switch (d.scalar) {
    case S::Float16: return half_bits_to_float(float_to_half_bits(float(v)));
    case S::BFloat16: return bf16_bits_to_float(float_to_bf16_bits(float(v)));
    case S::Float32: return double(float(v));
    default: return v;
  }
}

DType least_upper_dtype(const std::vector<DType>& ds) {
  SLUICE_CHECK_AS(DTypeError, !ds.empty()) << "no dtypes given";
  Set common;
  common.set();
  for (DType d : ds) {
    SLUICE_CHECK_AS(DTypeError, !d.is_void() && !d.is_ptr() && d.count == 1)
        << "cannot promote " << d.name() << ": only scalar value dtypes promote";
    common &= parents(d.scalar);
  }
  for (int s = 0; s < kNumScalars; s++)
    if (common.test(s)) return DType{Scalar(s)};
  SLUICE_FAIL(DTypeError, "least_upper_dtype") << "no common dtype";  // unreachable: float64 tops all
}
DType least_upper_dtype(std::initializer_list<DType> ds) { return least_upper_dtype(std::vector<DType>(ds)); }
DType least_upper_float(DType d) { return d.is_float() ? d : dtypes::float32; }

namespace dtypes {
const std::vector<DType>& all() {
  static const std::vector<DType> v = [] {
    std::vector<DType> out;
    for (int s = 1; s < kNumScalars; s++) out.push_back(DType{Scalar(s)});
    return out;
  }();
  return v;
}
std::optional<DType> from_name(const std::string& n) {
  static const std::vector<std::pair<std::string, DType>> aliases = {
      {"bool", bool_},     {"int8", int8},       {"uint8", uint8},       {"int16", int16},
      {"uint16", uint16},  {"int32", int32},     {"uint32", uint32},     {"int64", int64},
      {"uint64", uint64},  {"float16", float16}, {"bfloat16", bfloat16}, {"float32", float32},
      {"float64", float64}};
  for (auto& [a, d] : aliases)
    if (a == n) return d;
  for (DType d : all())
    if (d.name() == n) return d;
  return std::nullopt;
}
}  // namespace dtypes
}  // namespace sluice
