#pragma once
// dtypes: scalars, vectors (scalar x count) and pointers (to a scalar or vector, in an address space).
// A DType is a small value: compare with ==, hash with std::hash, pass by value.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

// Declared once; the order is the promotion priority (used to break ties, as the reference design does).
//  X(enumerator, name, C name, itemsize, kind)   kind: b=bool i=signed u=unsigned f=float v=void
#define SLUICE_SCALARS(X)                       \
  X(Void, "void", "void", 0, 'v')               \
  X(Bool, "bool", "bool", 1, 'b')               \
  X(Int8, "char", "signed char", 1, 'i')        \
  X(UInt8, "uchar", "unsigned char", 1, 'u')    \
  X(Int16, "short", "short", 2, 'i')            \
  X(UInt16, "ushort", "unsigned short", 2, 'u') \
  X(Int32, "int", "int", 4, 'i')                \
  X(UInt32, "uint", "unsigned int", 4, 'u')     \
  X(Int64, "long", "long", 8, 'i')              \
  X(UInt64, "ulong", "unsigned long", 8, 'u')   \
  X(Float16, "half", "half", 2, 'f')            \
  X(BFloat16, "bfloat16", "__bf16", 2, 'f')     \
  X(Float32, "float", "float", 4, 'f')          \
  X(Float64, "double", "double", 8, 'f')

enum class Scalar : uint8_t {
#define SLUICE_X(e, n, c, s, k) e,
  SLUICE_SCALARS(SLUICE_X)
#undef SLUICE_X
};
inline constexpr int kNumScalars = int(Scalar::Float64) + 1;

enum class AddrSpace : uint8_t { None, Global, Local, Reg };

struct DType {
  Scalar scalar = Scalar::Void;
  uint16_t count = 1;                // vector width; 1 for scalars
  AddrSpace addr = AddrSpace::None;  // None: a value; otherwise a pointer to scalar x count
  int64_t ptr_size = -1;             // element count behind a pointer, -1 when unknown

  // Properties of the element type (a pointer's properties are those of what it points to).
  int itemsize() const;  // bytes of one element: scalar size x count; 8 for a pointer
  bool is_ptr() const { return addr != AddrSpace::None; }
  bool is_vector() const { return count > 1; }
  bool is_bool() const { return scalar == Scalar::Bool; }
  bool is_int() const;       // signed or unsigned integer (not bool)
  bool is_unsigned() const;  // unsigned integer
  bool is_float() const;
  bool is_void() const { return scalar == Scalar::Void; }

  DType base() const { return DType{scalar}; }  // the scalar, dropping vector and pointer
  DType vec(int n) const;                       // this scalar as an n-vector
  DType ptr(AddrSpace a = AddrSpace::Global, int64_t size = -1) const;
  DType deref() const { return DType{scalar, count}; }  // what a pointer points to

  std::string name() const;    // "float", "float4", "float*", "float4[local]*"
  std::string c_name() const;  // "float", "unsigned char"; vectors as name+count ("float4")

  // Range of representable values as doubles (for floats: -inf/inf). Integers also exactly:
  double min() const;
  double max() const;
  int64_t min_int() const;    // for integer/bool types
  uint64_t max_uint() const;  // for integer/bool types

  friend bool operator==(const DType&, const DType&) = default;
};
// Writes name(), as a Tensor prints its dtype: std::cout << t.dtype() shows "float".
std::ostream& operator<<(std::ostream& os, const DType& dt);

namespace dtypes {
inline constexpr DType void_{Scalar::Void}, bool_{Scalar::Bool}, int8{Scalar::Int8}, uint8{Scalar::UInt8},
    int16{Scalar::Int16}, uint16{Scalar::UInt16}, int32{Scalar::Int32}, uint32{Scalar::UInt32},
    int64{Scalar::Int64}, uint64{Scalar::UInt64}, float16{Scalar::Float16}, bfloat16{Scalar::BFloat16},
    float32{Scalar::Float32}, float64{Scalar::Float64};
// Index arithmetic in kernels: int32, or int64 in a kernel whose indices may not fit (core/codegen/lower.h).
inline constexpr DType index = int32;
const std::vector<DType>& all();                          // every value scalar (no void)
std::optional<DType> from_name(const std::string& name);  // "float32", "float", "half", "int64", ...
}  // namespace dtypes

// Least upper bound over the promotion lattice: int32+float16 -> float16, uint8+int8 -> int16,
// float16+bfloat16 -> float32. Throws DTypeError for void, pointers or vectors.
DType least_upper_dtype(std::initializer_list<DType> ds);
DType least_upper_dtype(const std::vector<DType>& ds);
// The float a value of this dtype computes in: floats stay, everything else becomes float32.
DType least_upper_float(DType d);
// A 64-bit integer pattern wrapped to integer dtype d (two's complement wrap-around, as C casts do);
// bool becomes 0/1. 64-bit types keep the pattern (uint64 values above INT64_MAX stay as bit patterns).
int64_t wrap_int(DType d, int64_t v);
// v rounded to float dtype d (round to nearest even, as a cast does; overflow to +-inf, NaN stays NaN).
double round_float(DType d, double v);
// IEEE half and bfloat16 bit conversions (round to nearest even).
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(uint16_t b);

}  // namespace sluice

template <>
struct std::hash<sluice::DType> {
  size_t operator()(const sluice::DType& d) const noexcept {
    return size_t(d.scalar) | size_t(d.count) << 8 | size_t(d.addr) << 24 | size_t(d.ptr_size) << 32;
  }
};
