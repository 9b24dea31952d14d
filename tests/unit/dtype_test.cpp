#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "base/error.h"
#include "core/ir/dtype.h"

using namespace sluice;
namespace d = sluice::dtypes;

TEST(DType, ItemsizeAndKinds) {
  EXPECT_EQ(d::bool_.itemsize(), 1);
  EXPECT_EQ(d::int16.itemsize(), 2);
  EXPECT_EQ(d::float64.itemsize(), 8);
  EXPECT_EQ(d::float32.vec(4).itemsize(), 16);
  EXPECT_EQ(d::float16.ptr().itemsize(), 8);
  EXPECT_TRUE(d::uint8.is_int());
  EXPECT_TRUE(d::uint8.is_unsigned());
  EXPECT_FALSE(d::int8.is_unsigned());
  EXPECT_FALSE(d::bool_.is_int());
  EXPECT_TRUE(d::bfloat16.is_float());
  EXPECT_FALSE(d::float32.is_int());
}

TEST(DType, NamesAndCNames) {
  EXPECT_EQ(d::float32.name(), "float");
  EXPECT_EQ(d::float32.vec(4).name(), "float4");
  EXPECT_EQ(d::float32.ptr().name(), "float*");
  EXPECT_EQ(d::float32.ptr(AddrSpace::Local).name(), "float[local]*");
  EXPECT_EQ(d::uint8.c_name(), "unsigned char");
  EXPECT_EQ(d::int64.c_name(), "long");
  EXPECT_EQ(d::float16.vec(2).c_name(), "half2");
}

TEST(DType, PrintsWithStreams) {
  std::ostringstream os;
  os << d::float32 << ' ' << d::uint8 << ' ' << d::int32.vec(4);
  EXPECT_EQ(os.str(), "float uchar int4");
}

TEST(DType, VectorAndPointerShape) {
  DType v = d::int32.vec(8);
  EXPECT_EQ(v.count, 8);
  EXPECT_EQ(v.base(), d::int32);
  DType p = v.ptr(AddrSpace::Global, 100);
  EXPECT_TRUE(p.is_ptr());
  EXPECT_EQ(p.deref(), v);
  EXPECT_EQ(p.ptr_size, 100);
  EXPECT_THROW(p.ptr(), DTypeError);
  EXPECT_THROW(v.vec(2), DTypeError);
}

TEST(DType, MinMax) {
  EXPECT_EQ(d::int8.min_int(), -128);
  EXPECT_EQ(d::int8.max_uint(), 127u);
  EXPECT_EQ(d::uint16.max_uint(), 65535u);
  EXPECT_EQ(d::int64.min_int(), INT64_MIN);
  EXPECT_EQ(d::uint64.max_uint(), UINT64_MAX);
  EXPECT_EQ(d::bool_.max(), 1);
  EXPECT_TRUE(std::isinf(d::float16.max()));
}

TEST(DType, PromotionLattice) {
  EXPECT_EQ(least_upper_dtype({d::int32, d::float16}), d::float16);     // int32+float16 -> float16
  EXPECT_EQ(least_upper_dtype({d::uint8, d::int8}), d::int16);          // uint8+int8 -> int16
  EXPECT_EQ(least_upper_dtype({d::float16, d::bfloat16}), d::float32);  // no common half type
  EXPECT_EQ(least_upper_dtype({d::bool_, d::bool_}), d::bool_);
  EXPECT_EQ(least_upper_dtype({d::bool_, d::uint8}), d::uint8);
  EXPECT_EQ(least_upper_dtype({d::uint32, d::int32}), d::int64);
  EXPECT_EQ(least_upper_dtype({d::uint64, d::int64}), d::float16);  // as the reference design
  EXPECT_EQ(least_upper_dtype({d::float32, d::float64}), d::float64);
  EXPECT_EQ(least_upper_dtype({d::int16, d::uint16}), d::int32);
  EXPECT_EQ(least_upper_float(d::int32), d::float32);
  EXPECT_EQ(least_upper_float(d::float16), d::float16);
}

TEST(DType, PromotionRejectsNonValues) {
  EXPECT_THROW(least_upper_dtype({d::void_, d::int32}), DTypeError);
  EXPECT_THROW(least_upper_dtype({d::float32.ptr(), d::int32}), DTypeError);
  try {
    least_upper_dtype({d::float32.vec(4), d::int32});
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_TRUE(std::string(e.what()).find("[least_upper_dtype] cannot promote float4") == 0) << e.what();
  }
}

TEST(DType, FromName) {
  EXPECT_EQ(*d::from_name("float32"), d::float32);
  EXPECT_EQ(*d::from_name("half"), d::float16);
  EXPECT_EQ(*d::from_name("ulong"), d::uint64);
  EXPECT_FALSE(d::from_name("float7").has_value());
}

TEST(DType, WrapInt) {
  EXPECT_EQ(wrap_int(d::int8, 200), -56);
  EXPECT_EQ(wrap_int(d::uint8, -1), 255);
  EXPECT_EQ(wrap_int(d::int32, int64_t(1) << 31), INT32_MIN);
  EXPECT_EQ(wrap_int(d::bool_, 7), 1);
}

TEST(DType, HalfAndBFloat16Rounding) {
  EXPECT_EQ(round_float(d::float16, 1.0 + 1.0 / 4096), 1.0);                         // below half an ulp
  EXPECT_EQ(round_float(d::float16, 65504.0), 65504.0);                              // max half
  EXPECT_TRUE(std::isinf(round_float(d::float16, 70000.0)));                         // overflow
  EXPECT_EQ(round_float(d::float16, 5.960464477539063e-08), 5.960464477539063e-08);  // min subnormal
  EXPECT_TRUE(std::isnan(round_float(d::float16, NAN)));
  EXPECT_EQ(round_float(d::bfloat16, 1.00390625), 1.0);       // ties to even
  EXPECT_EQ(round_float(d::bfloat16, 1.01171875), 1.015625);  // ties to even, upward
  EXPECT_EQ(round_float(d::float32, 0.1), double(0.1f));
  for (uint32_t h = 0; h < 0x7c00; h++)  // every finite positive half round-trips
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(uint16_t(h))), h);
}
