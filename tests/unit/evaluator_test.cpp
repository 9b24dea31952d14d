// The reference evaluator against hand-computed values, on UOp graphs built directly.
#include "core/eval/evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "base/error.h"
#include "tests/unit/host_array_expect.h"

using namespace sluice;
using eval::HostArray;
namespace d = sluice::dtypes;
using testing_eval::floats;
using testing_eval::ints;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Buffers with host data, and a reader that hands it to the evaluator (counting the reads).
class Host {
 public:
  UOp values(DType dt, const Shape& shape, const std::vector<double>& v) {
    return add(HostArray::from_values(dt, {int64_t(v.size())}, v), shape);
  }
  UOp ints(DType dt, const Shape& shape, const std::vector<int64_t>& v) {
    return add(HostArray::from_ints(dt, {int64_t(v.size())}, v), shape);
  }
  UOp iota(DType dt, const Shape& shape) {
    std::vector<double> v(size_t(prod(shape)));
    for (size_t k = 0; k < v.size(); k++) v[k] = double(k);
    return values(dt, shape, v);
  }
  HostArray eval(const UOp& u) {
    return eval::evaluate(u, [this](const UOp& b) {
      reads++;
      for (auto& [buf, data] : bufs_)
        if (buf == b) return data;
      throw std::runtime_error("no data for this buffer");
    });
  }
  int reads = 0;

 private:
  UOp add(HostArray data, const Shape& shape) {
    UOp b = UOp::new_buffer("CPU", data.dtype, data.numel());
    bufs_.push_back({b, std::move(data)});
    return b.reshape(shape);
  }
  std::vector<std::pair<UOp, HostArray>> bufs_;
};

}  // namespace

// ---------------------------------------------------------------- ALU on floats

TEST(EvalAlu, FloatBinaryOps) {
  Host h;
  UOp a = h.values(d::float32, {4}, {1.5, -2, 0.25, 4}), b = h.values(d::float32, {4}, {2, -2, -0.5, 8});
  EXPECT_TRUE(floats(h.eval(a + b), d::float32, {4}, {3.5, -4, -0.25, 12}));
  EXPECT_TRUE(floats(h.eval(a - b), d::float32, {4}, {-0.5, 0, 0.75, -4}));
  EXPECT_TRUE(floats(h.eval(a * b), d::float32, {4}, {3, 4, -0.125, 32}));
  EXPECT_TRUE(floats(h.eval(a / b), d::float32, {4}, {0.75, 1, -0.5, 0.5}));
  EXPECT_TRUE(floats(h.eval(a.max(b)), d::float32, {4}, {2, -2, 0.25, 8}));
  EXPECT_TRUE(ints(h.eval(a.lt(b)), d::bool_, {4}, {1, 0, 0, 1}));
  EXPECT_TRUE(ints(h.eval(a.ne(b)), d::bool_, {4}, {1, 0, 1, 1}));
  EXPECT_TRUE(floats(h.eval(a.alu(Op::MulAcc, b, a)), d::float32, {4}, {4.5, 2, 0.125, 36}));
  UOp c = h.ints(d::bool_, {4}, {1, 0, 1, 0});
  EXPECT_TRUE(floats(h.eval(c.where(a, b)), d::float32, {4}, {1.5, -2, 0.25, 8}));
}

TEST(EvalAlu, FloatUnaryOps) {
  Host h;
  UOp a = h.values(d::float32, {4}, {1.5, -2, 0.25, 4});
  EXPECT_TRUE(floats(h.eval(-a), d::float32, {4}, {-1.5, 2, -0.25, -4}));
  EXPECT_TRUE(floats(h.eval(a.alu(Op::Recip)), d::float32, {4}, {2.0 / 3, -0.5, 4, 0.25}));
  UOp t = h.values(d::float32, {4}, {2.75, -2.75, 0.5, -0.5});
  EXPECT_TRUE(floats(h.eval(t.alu(Op::Trunc)), d::float32, {4}, {2, -2, 0, -0.0}));
  UOp s = h.values(d::float32, {4}, {0.25, 4, 2, 0});
  EXPECT_TRUE(floats(h.eval(s.alu(Op::Sqrt)), d::float32, {4}, {0.5, 2, std::numbers::sqrt2, 0}));
  UOp e = h.values(d::float32, {4}, {0, 1, -1, 0.5});
  EXPECT_TRUE(floats(h.eval(e.alu(Op::Exp2)), d::float32, {4}, {1, 2, 0.5, std::numbers::sqrt2}));
  UOp l = h.values(d::float32, {4}, {1, 8, 0.5, 0});
  EXPECT_TRUE(floats(h.eval(l.alu(Op::Log2)), d::float32, {4}, {0, 3, -1, -kInf}));
  const double pi = std::numbers::pi;
  UOp r = h.values(d::float64, {4}, {0, pi / 2, pi / 6, -pi / 2});
  EXPECT_TRUE(floats(h.eval(r.alu(Op::Sin)), d::float64, {4}, {0, 1, 0.5, -1}));
}

TEST(EvalAlu, FloatsComputeInDoubleWithoutRoundingPerOp) {
  Host h;
  UOp one = h.values(d::float32, {1}, {1}), three = h.values(d::float32, {1}, {3});
  // float32 would give 0.3333333432674408; the oracle keeps the exact quotient.
  EXPECT_TRUE(floats(h.eval(one / three), d::float32, {1}, {1.0 / 3}, 1e-15));
  // 2^24 + 1 does not exist in float32, but the oracle does not round until a cast.
  UOp big = h.values(d::float32, {1}, {16777216});
  EXPECT_EQ(h.eval(big + one).f[0], 16777217.0);
  EXPECT_EQ(h.eval((big + one).cast(d::float64)).f[0], 16777217.0);  // float -> wider float: no rounding
}

TEST(EvalAlu, NanAndInfinityFollowIeee) {
  Host h;
  UOp a = h.values(d::float32, {6}, {0, 1, -1, kInf, kNan, 1});
  UOp b = h.values(d::float32, {6}, {0, 0, 0, kInf, 1, kNan});
  EXPECT_TRUE(floats(h.eval(a / b), d::float32, {6}, {kNan, kInf, -kInf, kNan, kNan, kNan}));
  EXPECT_TRUE(floats(h.eval(a - b), d::float32, {6}, {0, 1, -1, kNan, kNan, kNan}));
  EXPECT_TRUE(floats(h.eval(a * b), d::float32, {6}, {0, 0, -0.0, kInf, kNan, kNan}));
  EXPECT_TRUE(floats(h.eval(a.max(b)), d::float32, {6}, {0, 1, 0, kInf, kNan, kNan}));  // NaN either side
  EXPECT_TRUE(ints(h.eval(a.lt(b)), d::bool_, {6}, {0, 0, 1, 0, 0, 0}));
  EXPECT_TRUE(ints(h.eval(a.ne(b)), d::bool_, {6}, {0, 1, 1, 0, 1, 1}));
  EXPECT_TRUE(floats(h.eval(a.alu(Op::Log2)), d::float32, {6}, {-kInf, 0, kNan, kInf, kNan, 0}));
  EXPECT_TRUE(floats(h.eval(a.alu(Op::Sqrt)), d::float32, {6}, {0, 1, kNan, kInf, kNan, 1}));
  EXPECT_TRUE(floats(h.eval(b.alu(Op::Recip)), d::float32, {6}, {kInf, kInf, kInf, 0, 1, kNan}));
}

// ---------------------------------------------------------------- ALU on integers

TEST(EvalAlu, IntegerArithmeticTruncatesTowardZero) {
  Host h;
  UOp a = h.ints(d::int32, {5}, {7, -7, 7, -7, 100}), b = h.ints(d::int32, {5}, {2, 2, -2, -2, 7});
  EXPECT_TRUE(ints(h.eval(a / b), d::int32, {5}, {3, -3, -3, 3, 14}));
  EXPECT_TRUE(ints(h.eval(a % b), d::int32, {5}, {1, -1, 1, -1, 2}));  // the sign of the dividend
  EXPECT_TRUE(ints(h.eval(a + b), d::int32, {5}, {9, -5, 5, -9, 107}));
  EXPECT_TRUE(ints(h.eval(a - b), d::int32, {5}, {5, -9, 9, -5, 93}));
  EXPECT_TRUE(ints(h.eval(a * b), d::int32, {5}, {14, -14, -14, 14, 700}));
  EXPECT_TRUE(ints(h.eval(a.max(b)), d::int32, {5}, {7, 2, 7, -2, 100}));
  EXPECT_TRUE(ints(h.eval(a.lt(b)), d::bool_, {5}, {0, 1, 0, 1, 0}));
  EXPECT_TRUE(ints(h.eval(-a), d::int32, {5}, {-7, 7, -7, 7, -100}));
  EXPECT_TRUE(ints(h.eval(a.alu(Op::MulAcc, b, b)), d::int32, {5}, {16, -12, -16, 12, 707}));
  UOp c = h.ints(d::bool_, {5}, {0, 0, 1, 1, 0});
  EXPECT_TRUE(ints(h.eval(c.where(a, b)), d::int32, {5}, {2, 2, 7, -7, 7}));
}

TEST(EvalAlu, BitwiseOpsAndShifts) {
  Host h;
  UOp a = h.ints(d::int32, {3}, {12, -1, 5}), b = h.ints(d::int32, {3}, {10, 3, -6});
  EXPECT_TRUE(ints(h.eval(a & b), d::int32, {3}, {8, 3, 0}));
  EXPECT_TRUE(ints(h.eval(a | b), d::int32, {3}, {14, -1, -1}));
  EXPECT_TRUE(ints(h.eval(a ^ b), d::int32, {3}, {6, -4, -1}));
  UOp x = h.ints(d::int32, {3}, {1, 3, -1}), n = h.ints(d::int32, {3}, {4, 2, 31});
  EXPECT_TRUE(ints(h.eval(x.alu(Op::Shl, n)), d::int32, {3}, {16, 12, -2147483648}));
  UOp y = h.ints(d::int32, {3}, {-16, 255, -2147483648});
  EXPECT_TRUE(ints(h.eval(y.alu(Op::Shr, n)), d::int32, {3}, {-1, 63, -1}));  // arithmetic for signed
  UOp u = h.ints(d::uint8, {2}, {0xF0, 0x81}), k = h.ints(d::uint8, {2}, {4, 7});
  EXPECT_TRUE(ints(h.eval(u.alu(Op::Shr, k)), d::uint8, {2}, {0x0F, 1}));  // logical for unsigned
  EXPECT_TRUE(ints(h.eval(u.alu(Op::Shl, k)), d::uint8, {2}, {0, 0x80}));  // bits shifted out are gone
  UOp p = h.ints(d::bool_, {4}, {0, 0, 1, 1}), q = h.ints(d::bool_, {4}, {0, 1, 0, 1});
  EXPECT_TRUE(ints(h.eval(p & q), d::bool_, {4}, {0, 0, 0, 1}));
  EXPECT_TRUE(ints(h.eval(p | q), d::bool_, {4}, {0, 1, 1, 1}));
  EXPECT_TRUE(ints(h.eval(p ^ q), d::bool_, {4}, {0, 1, 1, 0}));
  EXPECT_TRUE(ints(h.eval(p + q), d::bool_, {4}, {0, 1, 1, 1}));  // bool ADD is OR
  EXPECT_TRUE(ints(h.eval(p * q), d::bool_, {4}, {0, 0, 0, 1}));  // bool MUL is AND
}

TEST(EvalAlu, IntegersWrapAroundToTheirDtype) {
  Host h;
  UOp i8 = h.ints(d::int8, {2}, {100, -128});
  EXPECT_TRUE(ints(h.eval(i8 + i8), d::int8, {2}, {-56, 0}));
  EXPECT_TRUE(ints(h.eval(-i8), d::int8, {2}, {-100, -128}));
  UOp u8 = h.ints(d::uint8, {2}, {0, 200}), one8 = h.ints(d::uint8, {2}, {1, 100});
  EXPECT_TRUE(ints(h.eval(u8 - one8), d::uint8, {2}, {255, 100}));
  EXPECT_TRUE(ints(h.eval(u8 + one8), d::uint8, {2}, {1, 44}));
  EXPECT_TRUE(ints(h.eval(u8.lt(one8)), d::bool_, {2}, {1, 0}));  // compares as unsigned
  UOp i32 = h.ints(d::int32, {1}, {2147483647}), one = h.ints(d::int32, {1}, {1});
  EXPECT_TRUE(ints(h.eval(i32 + one), d::int32, {1}, {-2147483648}));
  UOp i16 = h.ints(d::int16, {1}, {300});
  EXPECT_TRUE(ints(h.eval(i16 * i16), d::int16, {1}, {24464}));  // 90000 - 65536
  UOp i64 = h.ints(d::int64, {1}, {std::numeric_limits<int64_t>::max()}), one64 = h.ints(d::int64, {1}, {1});
  EXPECT_TRUE(ints(h.eval(i64 + one64), d::int64, {1}, {std::numeric_limits<int64_t>::min()}));
  UOp u64 = h.ints(d::uint64, {1}, {0}), one_u64 = h.ints(d::uint64, {1}, {1});
  HostArray m = h.eval(u64 - one_u64);
  EXPECT_TRUE(ints(m, d::uint64, {1}, {-1}));  // the bit pattern of 2^64 - 1
  EXPECT_EQ(m.value(0), 18446744073709551615.0);
  UOp u32 = h.ints(d::uint32, {1}, {0xFFFFFFFF});
  EXPECT_TRUE(ints(h.eval(u32.max(h.ints(d::uint32, {1}, {1}))), d::uint32, {1}, {0xFFFFFFFF}));
}

TEST(EvalAlu, FloatOnlyOpsOnIntegersThrow) {
  Host h;
  // check_alu refuses these at build time; a graph built by hand must still not evaluate silently.
  UOp a = h.ints(d::int32, {2}, {1, 2});
  EXPECT_THROW(h.eval(UOp::make(Op::Sqrt, d::int32, {a})), DTypeError);
  UOp f = h.values(d::float32, {2}, {1, 2});
  EXPECT_THROW(h.eval(UOp::make(Op::And, d::float32, {f, f})), DTypeError);
}

// ---------------------------------------------------------------- undefined elements

TEST(EvalUndefined, DivisionByZeroAndOverflowingDivisionAreFlagged) {
  Host h;
  UOp a = h.ints(d::int32, {4}, {7, 7, -2147483648, 5}), b = h.ints(d::int32, {4}, {0, 2, -1, 0});
  HostArray q = h.eval(a / b);
  EXPECT_EQ(q.i, (std::vector<int64_t>{0, 3, 0, 0}));
  EXPECT_EQ(q.undefined, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(q.str(), "int (4,) [?, 3, ?, ?]");
  EXPECT_EQ(h.eval(a % b).undefined, (std::vector<uint8_t>{1, 0, 1, 1}));
  UOp u = h.ints(d::uint8, {2}, {9, 9}), z = h.ints(d::uint8, {2}, {0, 4});
  HostArray uq = h.eval(u / z);
  EXPECT_EQ(uq.undefined, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(uq.i[1], 2);
}

TEST(EvalUndefined, ShiftsOutOfRangeAreFlagged) {
  Host h;
  UOp x = h.ints(d::int32, {4}, {1, 1, 1, 1}), n = h.ints(d::int32, {4}, {31, 32, -1, 0});
  HostArray r = h.eval(x.alu(Op::Shl, n));
  EXPECT_EQ(r.undefined, (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(r.i[0], -2147483648);
  EXPECT_EQ(h.eval(x.alu(Op::Shr, n)).undefined, (std::vector<uint8_t>{0, 1, 1, 0}));
}

TEST(EvalUndefined, FlagsFollowTheData) {
  Host h;
  UOp a = h.ints(d::int32, {4}, {8, 8, 8, 8}), b = h.ints(d::int32, {4}, {0, 2, 4, 0});
  UOp q = a / b;  // [?, 4, 2, ?]
  EXPECT_EQ(h.eval(q + a).undefined, (std::vector<uint8_t>{1, 0, 0, 1}));
  // WHERE depends only on the branch it picks.
  UOp c = h.ints(d::bool_, {4}, {0, 1, 0, 1});
  HostArray w = h.eval(c.where(q, a));
  EXPECT_EQ(w.undefined, (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(w.i, (std::vector<int64_t>{8, 4, 8, 0}));
  // A WHERE whose condition is undefined is undefined.
  EXPECT_EQ(h.eval(q.lt(a).where(a, a)).undefined, (std::vector<uint8_t>{1, 0, 0, 1}));
  // Padding is defined; movement carries the flags along.
  HostArray p = h.eval(q.reshape({2, 2}).pad({{0, 0}, {1, 0}}).flip({1}));
  EXPECT_EQ(p.undefined, (std::vector<uint8_t>{0, 1, 0, 1, 0, 0}));
  EXPECT_EQ(p.str(), "int (2, 3) [4, ?, 0, ?, 2, 0]");
  // A reduction is undefined when any element it folds is.
  EXPECT_EQ(h.eval(q.reshape({2, 2}).reduce(Op::Add, {0})).undefined, (std::vector<uint8_t>{1, 1}));
  HostArray r = h.eval(q.reshape({2, 2}).permute({1, 0}).reduce(Op::Max, {1}));  // [[?, 2], [4, ?]]
  EXPECT_EQ(r.undefined, (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(h.eval(q.reshape({2, 2}).shrink({{0, 2}, {1, 2}}).reduce(Op::Add, {0})).undefined,
            (std::vector<uint8_t>{1}));
  HostArray ok = h.eval(q.shrink({{1, 3}}).reduce(Op::Add, {0}));
  EXPECT_TRUE(ints(ok, d::int32, {1}, {6}));
  // Casts carry the flag too, and cast to float it still says undefined.
  EXPECT_EQ(h.eval(q.cast(d::float32)).undefined, (std::vector<uint8_t>{1, 0, 0, 1}));
}

// ---------------------------------------------------------------- casts and bitcasts

TEST(EvalCast, ToHalfRoundsToNearestEven) {
  Host h;
  UOp a = h.values(d::float64, {7}, {0.1, 65520, 1e-8, -2.5, 70000, 1 + 0x1p-11, 1 + 3 * 0x1p-11});
  EXPECT_TRUE(floats(h.eval(a.cast(d::float16)), d::float16, {7},
                     {0.0999755859375, kInf, 0, -2.5, kInf, 1, 1.001953125}, 0));
}

TEST(EvalCast, ToBfloat16RoundsToNearestEven) {
  Host h;
  UOp a = h.values(d::float64, {5}, {0.1, 1.0 / 3, 3, 257, 259});
  EXPECT_TRUE(
      floats(h.eval(a.cast(d::bfloat16)), d::bfloat16, {5}, {0.10009765625, 0.333984375, 3, 256, 260}, 0));
}

TEST(EvalCast, ToFloat32RoundsOnlyAtTheCast) {
  Host h;
  UOp a = h.values(d::float64, {2}, {0.1, 1e40});
  EXPECT_TRUE(floats(h.eval(a.cast(d::float32)), d::float32, {2}, {0.100000001490116119384765625, kInf}, 0));
  UOp i = h.ints(d::int32, {2}, {16777217, -3});
  EXPECT_TRUE(floats(h.eval(i.cast(d::float32)), d::float32, {2}, {16777216, -3}, 0));
  UOp l = h.ints(d::int64, {1}, {(int64_t(1) << 53) + 1});
  EXPECT_TRUE(floats(h.eval(l.cast(d::float64)), d::float64, {1}, {9007199254740992.0}, 0));
  UOp u = h.ints(d::uint64, {1}, {-1});
  EXPECT_TRUE(floats(h.eval(u.cast(d::float32)), d::float32, {1}, {18446744073709551616.0}, 0));
}

TEST(EvalCast, FloatToIntTruncatesAndFlagsOutOfRange) {
  Host h;
  UOp a = h.values(d::float32, {6}, {2.75, -2.75, 1e10, kNan, -0.5, -kInf});
  HostArray r = h.eval(a.cast(d::int32));
  EXPECT_EQ(r.i, (std::vector<int64_t>{2, -2, 0, 0, 0, 0}));
  EXPECT_EQ(r.undefined, (std::vector<uint8_t>{0, 0, 1, 1, 0, 1}));
  UOp b = h.values(d::float32, {3}, {255.9, -1, 256});
  HostArray u = h.eval(b.cast(d::uint8));
  EXPECT_EQ(u.i[0], 255);
  EXPECT_EQ(u.undefined, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(EvalCast, IntegerCastsWrapAndBoolsAreNonZero) {
  Host h;
  UOp a = h.ints(d::int32, {4}, {300, -1, 128, 0});
  EXPECT_TRUE(ints(h.eval(a.cast(d::uint8)), d::uint8, {4}, {44, 255, 128, 0}));
  EXPECT_TRUE(ints(h.eval(a.cast(d::int8)), d::int8, {4}, {44, -1, -128, 0}));
  EXPECT_TRUE(ints(h.eval(a.cast(d::bool_)), d::bool_, {4}, {1, 1, 1, 0}));
  UOp f = h.values(d::float32, {4}, {0, -0.0, 0.5, kNan});
  EXPECT_TRUE(ints(h.eval(f.cast(d::bool_)), d::bool_, {4}, {0, 0, 1, 1}));
  UOp b = h.ints(d::bool_, {2}, {1, 0});
  EXPECT_TRUE(floats(h.eval(b.cast(d::float16)), d::float16, {2}, {1, 0}));
  EXPECT_TRUE(ints(h.eval(h.ints(d::uint8, {1}, {200}).cast(d::int64)), d::int64, {1}, {200}));
}

TEST(EvalCast, BitcastUsesTheBitsOfTheRoundedValue) {
  Host h;
  UOp f = h.values(d::float32, {2}, {1, -2});
  EXPECT_TRUE(ints(h.eval(f.bitcast(d::int32)), d::int32, {2}, {0x3F800000, int32_t(0xC0000000)}));
  EXPECT_TRUE(ints(h.eval(f.bitcast(d::uint32)), d::uint32, {2}, {0x3F800000, 0xC0000000}));
  UOp i = h.ints(d::int32, {2}, {0x40490FDB, -1});
  EXPECT_TRUE(floats(h.eval(i.bitcast(d::float32)), d::float32, {2}, {3.1415927410125732, kNan}, 0));
  EXPECT_TRUE(ints(h.eval(h.values(d::float16, {1}, {1}).bitcast(d::int16)), d::int16, {1}, {0x3C00}));
  EXPECT_TRUE(floats(h.eval(h.ints(d::uint16, {1}, {0x7C00}).bitcast(d::float16)), d::float16, {1}, {kInf}));
  EXPECT_TRUE(floats(h.eval(h.ints(d::int16, {1}, {0x3F80}).bitcast(d::bfloat16)), d::bfloat16, {1}, {1}));
  // 1/3 in double is not a float32; its bits are those of the float32 it rounds to.
  UOp third = h.values(d::float32, {1}, {1}) / h.values(d::float32, {1}, {3});
  EXPECT_TRUE(ints(h.eval(third.bitcast(d::int32)), d::int32, {1}, {0x3EAAAAAB}));
  UOp l = h.ints(d::int64, {1}, {0x3FF0000000000000});
  EXPECT_TRUE(floats(h.eval(l.bitcast(d::float64)), d::float64, {1}, {1}, 0));
  EXPECT_THROW(h.eval(h.ints(d::int8, {1}, {1}).bitcast(d::bool_)), DTypeError);
}

// ---------------------------------------------------------------- movement

TEST(EvalMovement, ReshapeKeepsRowMajorOrder) {
  Host h;
  UOp a = h.iota(d::int32, {2, 3});
  EXPECT_TRUE(ints(h.eval(a.reshape({3, 2})), d::int32, {3, 2}, {0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(ints(h.eval(a.reshape({6, 1, 1})), d::int32, {6, 1, 1}, {0, 1, 2, 3, 4, 5}));
}

TEST(EvalMovement, Permute) {
  Host h;
  UOp a = h.iota(d::int32, {2, 3, 4});  // a[i][j][k] = 12i + 4j + k
  // out[k][i][j] = a[i][j][k]
  EXPECT_TRUE(ints(h.eval(a.permute({2, 0, 1})), d::int32, {4, 2, 3},
                   {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}));
  EXPECT_TRUE(ints(h.eval(h.iota(d::int32, {2, 3}).permute({1, 0})), d::int32, {3, 2}, {0, 3, 1, 4, 2, 5}));
}

TEST(EvalMovement, ExpandBroadcastsSizeOneAxes) {
  Host h;
  UOp col = h.values(d::float32, {3, 1}, {1, 2, 3}), row = h.values(d::float32, {1, 3}, {1, 2, 3});
  EXPECT_TRUE(floats(h.eval(col.expand({3, 2})), d::float32, {3, 2}, {1, 1, 2, 2, 3, 3}));
  EXPECT_TRUE(floats(h.eval(row.expand({2, 3})), d::float32, {2, 3}, {1, 2, 3, 1, 2, 3}));
  // Outer product by broadcasting both sides.
  EXPECT_TRUE(floats(h.eval(col.expand({3, 3}) * row.expand({3, 3})), d::float32, {3, 3},
                     {1, 2, 3, 2, 4, 6, 3, 6, 9}));
  UOp c = UOp::const_on("CPU", d::int32, 7).reshape({1, 1}).expand({2, 3});
  EXPECT_TRUE(ints(h.eval(c), d::int32, {2, 3}, {7, 7, 7, 7, 7, 7}));
}

TEST(EvalMovement, PadFillsZeroOrFalse) {
  Host h;
  UOp a = h.values(d::float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(floats(h.eval(a.pad({{1, 0}, {0, 2}})), d::float32, {3, 5},
                     {0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0}));
  UOp b = h.ints(d::bool_, {2}, {1, 1});
  EXPECT_TRUE(ints(h.eval(b.pad({{2, 1}})), d::bool_, {5}, {0, 0, 1, 1, 0}));
}

TEST(EvalMovement, ShrinkAndFlip) {
  Host h;
  UOp a = h.iota(d::int32, {2, 3, 4});
  EXPECT_TRUE(
      ints(h.eval(a.shrink({{1, 2}, {0, 3}, {1, 3}})), d::int32, {1, 3, 2}, {13, 14, 17, 18, 21, 22}));
  UOp b = h.values(d::float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(floats(h.eval(b.flip({1})), d::float32, {2, 3}, {3, 2, 1, 6, 5, 4}));
  EXPECT_TRUE(floats(h.eval(b.flip({0})), d::float32, {2, 3}, {4, 5, 6, 1, 2, 3}));
  EXPECT_TRUE(floats(h.eval(b.flip({0, 1})), d::float32, {2, 3}, {6, 5, 4, 3, 2, 1}));
}

TEST(EvalMovement, Compositions) {
  Host h;
  UOp a = h.values(d::float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  // pad -> [[0 1 2 3 0] [0 4 5 6 0] [0 0 0 0 0]], shrink -> [[0 4 5 6] [0 0 0 0]],
  // flip -> [[6 5 4 0] [0 0 0 0]], permute -> its transpose.
  UOp r = a.pad({{0, 1}, {1, 1}}).shrink({{1, 3}, {0, 4}}).flip({1}).permute({1, 0});
  EXPECT_TRUE(floats(h.eval(r), d::float32, {4, 2}, {6, 0, 5, 0, 4, 0, 0, 0}));
  // A transpose, reshaped (the reshape reads the transposed order), then expanded.
  UOp t = a.permute({1, 0}).reshape({1, 6}).expand({2, 6});
  EXPECT_TRUE(floats(h.eval(t), d::float32, {2, 6}, {1, 4, 2, 5, 3, 6, 1, 4, 2, 5, 3, 6}));
  // Shrinking into the padding only.
  EXPECT_TRUE(
      floats(h.eval(a.pad({{0, 0}, {0, 3}}).shrink({{0, 2}, {4, 6}})), d::float32, {2, 2}, {0, 0, 0, 0}));
}

// ---------------------------------------------------------------- reductions

TEST(EvalReduce, SumOverAxesKeepsSizeOneAxes) {
  Host h;
  UOp a = h.iota(d::float32, {2, 3, 4});  // a[i][j][k] = 12i + 4j + k
  EXPECT_TRUE(
      floats(h.eval(a.reduce(Op::Add, {1})), d::float32, {2, 1, 4}, {12, 15, 18, 21, 48, 51, 54, 57}));
  EXPECT_TRUE(floats(h.eval(a.reduce(Op::Add, {0, 2})), d::float32, {1, 3, 1}, {60, 92, 124}));
  EXPECT_TRUE(floats(h.eval(a.reduce(Op::Add, {0, 1, 2})), d::float32, {1, 1, 1}, {276}));
  EXPECT_TRUE(floats(h.eval(a.reduce(Op::Add, {2})), d::float32, {2, 3, 1}, {6, 22, 38, 54, 70, 86}));
  UOp col = h.values(d::float32, {2, 1}, {3, 4});
  EXPECT_TRUE(floats(h.eval(col.reduce(Op::Add, {1})), d::float32, {2, 1}, {3, 4}));
}

TEST(EvalReduce, ProductAndMax) {
  Host h;
  UOp a = h.values(d::float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(floats(h.eval(a.reduce(Op::Mul, {1})), d::float32, {2, 1}, {6, 120}));
  EXPECT_TRUE(floats(h.eval(a.reduce(Op::Mul, {0})), d::float32, {1, 3}, {4, 10, 18}));
  UOp m = h.values(d::float32, {2, 3}, {1, -5, kNan, -2, 7, 3});
  EXPECT_TRUE(floats(h.eval(m.reduce(Op::Max, {0})), d::float32, {1, 3}, {1, 7, kNan}));  // NaN propagates
  EXPECT_TRUE(floats(h.eval(m.reduce(Op::Max, {1})), d::float32, {2, 1}, {kNan, 7}));
  UOp n = h.values(d::float32, {3}, {-kInf, -kInf, -kInf});
  EXPECT_TRUE(floats(h.eval(n.reduce(Op::Max, {0})), d::float32, {1}, {-kInf}));
}

TEST(EvalReduce, SumsInDouble) {
  Host h;
  // In float32, 2^24 + 1 + 1 + ... stays 2^24; the oracle keeps every 1.
  UOp a = h.values(d::float32, {5}, {16777216, 1, 1, 1, 1});
  EXPECT_TRUE(floats(h.eval(a.reduce(Op::Add, {0})), d::float32, {1}, {16777220}, 0));
}

TEST(EvalReduce, IntegersWrapAndBoolsAreAnyAndAll) {
  Host h;
  EXPECT_TRUE(ints(h.eval(h.ints(d::int8, {3}, {100, 100, 100}).reduce(Op::Add, {0})), d::int8, {1}, {44}));
  EXPECT_TRUE(
      ints(h.eval(h.ints(d::uint8, {2}, {16, 17}).reduce(Op::Mul, {0})), d::uint8, {1}, {16}));  // 272
  EXPECT_TRUE(ints(h.eval(h.ints(d::int32, {3}, {-5, -9, -2}).reduce(Op::Max, {0})), d::int32, {1}, {-2}));
  EXPECT_TRUE(ints(h.eval(h.ints(d::uint32, {2}, {1, 0xFFFFFFFF}).reduce(Op::Max, {0})), d::uint32, {1},
                   {0xFFFFFFFF}));
  UOp b = h.ints(d::bool_, {2, 2}, {0, 1, 0, 0});
  EXPECT_TRUE(ints(h.eval(b.reduce(Op::Add, {1})), d::bool_, {2, 1}, {1, 0}));
  EXPECT_TRUE(ints(h.eval(b.reduce(Op::Max, {1})), d::bool_, {2, 1}, {1, 0}));
  EXPECT_TRUE(ints(h.eval(b.reduce(Op::Mul, {0})), d::bool_, {1, 2}, {0, 0}));
}

TEST(EvalReduce, EmptyAxesGiveTheIdentity) {
  Host h;
  UOp e = h.values(d::float32, {0, 3}, {});
  EXPECT_TRUE(floats(h.eval(e.reduce(Op::Add, {0})), d::float32, {1, 3}, {0, 0, 0}));
  EXPECT_TRUE(floats(h.eval(e.reduce(Op::Mul, {0})), d::float32, {1, 3}, {1, 1, 1}));
  EXPECT_TRUE(floats(h.eval(e.reduce(Op::Max, {0})), d::float32, {1, 3}, {-kInf, -kInf, -kInf}));
  EXPECT_TRUE(floats(h.eval(e.reduce(Op::Add, {1})), d::float32, {0, 1}, {}));
  UOp ei = h.ints(d::int32, {3, 0}, {});
  EXPECT_TRUE(
      ints(h.eval(ei.reduce(Op::Max, {1})), d::int32, {3, 1}, {-2147483648, -2147483648, -2147483648}));
  EXPECT_TRUE(ints(h.eval(h.ints(d::uint8, {0}, {}).reduce(Op::Max, {0})), d::uint8, {1}, {0}));
}

TEST(EvalReduce, EmptyTensorsThroughEveryKindOfOp) {
  Host h;
  UOp e = h.values(d::float32, {2, 0}, {});
  EXPECT_TRUE(floats(h.eval((e + e).permute({1, 0}).flip({0})), d::float32, {0, 2}, {}));
  EXPECT_TRUE(floats(h.eval(e.pad({{0, 0}, {1, 1}})), d::float32, {2, 2}, {0, 0, 0, 0}));
  EXPECT_TRUE(
      floats(h.eval(e.reshape({2, 0, 1}).expand({2, 0, 4}).cast(d::float16)), d::float16, {2, 0, 4}, {}));
}

// ---------------------------------------------------------------- graphs

TEST(EvalGraph, ScalarConstantsBroadcast) {
  Host h;
  UOp a = h.values(d::float32, {2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(floats(h.eval(a * 2.0 + 1.0), d::float32, {2, 2}, {3, 5, 7, 9}));
  EXPECT_TRUE(floats(h.eval(UOp::const_(d::float32, 0.5)), d::float32, {}, {0.5}));
  EXPECT_TRUE(ints(h.eval(UOp::const_int_on("CPU", d::int8, 300)), d::int8, {}, {44}));
  EXPECT_TRUE(ints(h.eval(UOp::const_bool(true)), d::bool_, {}, {1}));
  // Shapes that do not match (and are not a scalar) are a malformed graph.
  UOp b = h.values(d::float32, {4}, {1, 2, 3, 4});
  EXPECT_THROW(h.eval(a + b), ShapeError);
}

TEST(EvalGraph, RealizePointsPassValuesAndAssignIsTheValue) {
  Host h;
  UOp a = h.values(d::float32, {3}, {1, 2, 3});
  EXPECT_TRUE(floats(h.eval((a + a).contiguous().detach().copy_to("NULL")), d::float32, {3}, {2, 4, 6}));
  // The target is never read: this one has no data at all.
  UOp target = UOp::new_buffer("CPU", d::float32, 3);
  EXPECT_TRUE(floats(h.eval(target.assign(a * a)), d::float32, {3}, {1, 4, 9}));
}

TEST(EvalGraph, SharedSubtreesAreComputedOnce) {
  Host h;
  UOp a = h.values(d::float32, {2}, {1, 2}), b = h.values(d::float32, {2}, {3, 4});
  UOp x = a + b, y = x * x, z = (y + x).reduce(Op::Add, {0}) + y.reduce(Op::Max, {0});
  EXPECT_TRUE(floats(h.eval(z), d::float32, {1}, {(16 + 4) + (36 + 6) + 36}));
  EXPECT_EQ(h.reads, 2);  // each buffer once
}

TEST(EvalGraph, LongChainsDoNotRecurse) {
  Host h;
  UOp a = h.values(d::float32, {3}, {1, 2, -1}), x = a;
  for (int k = 0; k < 20000; k++) x = x + a;
  EXPECT_TRUE(floats(h.eval(x), d::float32, {3}, {20001, 40002, -20001}));
  UOp n = h.ints(d::int32, {2}, {5, -6});
  for (int k = 0; k < 20000; k++) n = -n;
  EXPECT_TRUE(ints(h.eval(n), d::int32, {2}, {5, -6}));
}

TEST(EvalGraph, BadReadersAndNonTensorOpsThrow) {
  UOp b = UOp::new_buffer("CPU", d::float32, 3);
  auto wrong_size = [](const UOp&) { return HostArray::from_values(d::float32, {2}, {1, 2}); };
  EXPECT_THROW(eval::evaluate(b, wrong_size), ValueError);
  auto wrong_dtype = [](const UOp&) { return HostArray::from_values(d::float64, {3}, {1, 2, 3}); };
  EXPECT_THROW(eval::evaluate(b, wrong_dtype), ValueError);
  auto fine = [](const UOp&) { return HostArray::from_values(d::float32, {3}, {1, 2, 3}); };
  try {
    eval::evaluate(b + UOp::variable("n", 0, 4).cast(d::float32), fine);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "[evaluate] cannot evaluate DEFINE_VAR: not a tensor-level op");
  }
}

// ---------------------------------------------------------------- HostArray

TEST(EvalHostArray, BytesRoundTripInStorageLayout) {
  HostArray h = HostArray::from_values(d::float16, {3}, {1, -2, 0.1});
  std::vector<std::byte> bytes = h.to_bytes();
  ASSERT_EQ(bytes.size(), 6u);
  EXPECT_EQ(bytes[0], std::byte{0x00});
  EXPECT_EQ(bytes[1], std::byte{0x3C});  // 1.0 = 0x3C00
  EXPECT_EQ(bytes[3], std::byte{0xC0});  // -2.0 = 0xC000
  HostArray back = HostArray::from_bytes(d::float16, {3}, bytes);
  EXPECT_TRUE(floats(back, d::float16, {3}, {1, -2, 0.0999755859375}, 0));

  HostArray i8 =
      HostArray::from_bytes(d::int8, {2}, std::vector<std::byte>{std::byte{0xFF}, std::byte{0x7F}});
  EXPECT_TRUE(ints(i8, d::int8, {2}, {-1, 127}));
  HostArray b = HostArray::from_bytes(d::bool_, {2}, std::vector<std::byte>{std::byte{0}, std::byte{1}});
  EXPECT_TRUE(ints(b, d::bool_, {2}, {0, 1}));
  HostArray u = HostArray::from_ints(d::uint64, {1}, {-1});
  EXPECT_TRUE(ints(HostArray::from_bytes(d::uint64, {1}, u.to_bytes()), d::uint64, {1}, {-1}));
  HostArray f = HostArray::from_values(d::float32, {1}, {0.1});  // from_values rounds to the dtype
  float x;
  std::memcpy(&x, f.to_bytes().data(), 4);
  EXPECT_EQ(x, 0.1f);
  EXPECT_THROW(HostArray::from_bytes(d::int32, {2}, std::vector<std::byte>(7)), ValueError);
  EXPECT_THROW(HostArray::from_values(d::int32, {2}, {1}), ValueError);
}

TEST(EvalHostArray, ConversionsAndPrinting) {
  EXPECT_TRUE(ints(HostArray::from_values(d::int8, {2}, {2.9, 200}), d::int8, {2}, {2, -56}));
  EXPECT_TRUE(floats(HostArray::from_ints(d::float32, {1}, {16777217}), d::float32, {1}, {16777216}, 0));
  EXPECT_EQ(HostArray::from_values(d::float32, {2, 1}, {1.5, kNan}).str(), "float (2, 1) [1.5, nan]");
  EXPECT_EQ(HostArray::from_ints(d::uint64, {}, {-1}).str(), "ulong () [18446744073709551615]");
  EXPECT_EQ(HostArray::from_ints(d::uint64, {}, {-1}).value(0), 18446744073709551615.0);
}
