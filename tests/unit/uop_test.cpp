#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "base/error.h"
#include "core/ir/uop.h"

using namespace sluice;
namespace d = sluice::dtypes;

TEST(UOp, HashConsingGivesPointerEquality) {
  UOp x = UOp::variable("x", 0, 10);
  UOp a = x + 1, b = x + 1;
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE((x + 2).get(), a.get());
  EXPECT_EQ(a.hash(), b.hash());
}

TEST(UOp, FieldsAndConstants) {
  UOp c = UOp::const_(d::float32, 0.1);
  EXPECT_EQ(c.op(), Op::Const);
  EXPECT_EQ(c.const_value(), double(0.1f));                                           // rounded to the dtype
  EXPECT_EQ(UOp::const_int(d::uint8, 300).const_int_value(), 44);                     // wraps
  EXPECT_EQ(UOp::const_(d::int32, -2.7).const_int_value(), -2);                       // C cast truncates
  EXPECT_EQ(UOp::const_(d::float32, NAN).get(), UOp::const_(d::float32, NAN).get());  // NaN interns
  EXPECT_NE(UOp::const_(d::float32, 0.0).get(), UOp::const_(d::float32, -0.0).get());
  EXPECT_EQ(c.const_like(2).dtype(), d::float32);
  EXPECT_THROW(UOp::const_(d::int32, INFINITY), ValueError);
}

TEST(UOp, AluDtypes) {
  UOp x = UOp::variable("x", 0, 10);
  EXPECT_EQ(x.lt(3).dtype(), d::bool_);
  EXPECT_EQ((x / 2).op(), Op::IDiv);
  UOp f = UOp::const_(d::float32, 1.0);
  EXPECT_EQ((f / f).op(), Op::FDiv);
  EXPECT_EQ(x.lt(3).where(f, f).dtype(), d::float32);
}

TEST(UOp, InvalidDtypeCombinationsThrow) {
  UOp i = UOp::variable("i", 0, 10);
  UOp f = UOp::const_(d::float32, 1.0);
  EXPECT_THROW(i + f, DTypeError);
  EXPECT_THROW(f & f, DTypeError);
  EXPECT_THROW(f % f, DTypeError);
  EXPECT_THROW(i.alu(Op::Sqrt), DTypeError);
  EXPECT_THROW(i.where(f, f), DTypeError);
  EXPECT_THROW(f.bitcast(d::int64), DTypeError);
  try {
    (void)(i + f);
  } catch (const DTypeError& e) {
    EXPECT_STREQ(e.what(), "[check_alu] dtype mismatch: ADD of int and float");
  }
}

TEST(UOp, ToposortPutsSourcesFirst) {
  UOp x = UOp::variable("x", 0, 10);
  UOp a = x * 2, b = a + a, c = b + x;
  auto order = c.toposort();
  ASSERT_EQ(order.size(), 5u);  // x, 2, a, b, c
  auto pos = [&](const UOp& u) { return std::find(order.begin(), order.end(), u) - order.begin(); };
  EXPECT_LT(pos(x), pos(a));
  EXPECT_LT(pos(a), pos(b));
  EXPECT_LT(pos(b), pos(c));
  EXPECT_EQ(order.back(), c);
}

TEST(UOp, SubstituteAndReplace) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 10);
  UOp e = (x + 1) * x;
  EXPECT_EQ(e.substitute({{x, y}}), (y + 1) * y);
  EXPECT_EQ(e.with_src({x, x}), x * x);
  EXPECT_EQ(x.with_arg(VarArg{"z", 0, 3}), UOp::variable("z", 0, 3));
}

TEST(UOp, PrintsSharedSubtreesByName) {
  UOp x = UOp::variable("x", 0, 10);
  UOp s = x + 1;
  std::string out = (s * s).str();
  EXPECT_NE(out.find("x1:=UOp(Ops.ADD, dtypes.int"), std::string::npos) << out;
  EXPECT_NE(out.find("  x1,\n"), std::string::npos) << out;
  EXPECT_NE(out.find("UOp(Ops.DEFINE_VAR, dtypes.int, arg=('x', 0, 10), src=())"), std::string::npos) << out;
}

TEST(UOp, TableFreesNodesNobodyHolds) {
  size_t before = UOp::table_size();
  for (int g = 0; g < 1000; g++) {  // 1000 graphs of 1000 nodes: a million nodes built and dropped
    UOp x = UOp::variable("t" + std::to_string(g), 0, 100);
    for (int i = 0; i < 999; i++) x = x + i;
  }
  EXPECT_EQ(UOp::table_size(), before);
}

TEST(UOp, DeepChainDropsWithoutRecursion) {
  size_t before = UOp::table_size();
  {
    UOp x = UOp::variable("deep", 0, 1);
    for (int i = 0; i < 1000000; i++) x = x.alu(Op::Neg);
  }
  EXPECT_EQ(UOp::table_size(), before);
}

TEST(UOp, ConcurrentBuildingInternsOnce) {
  std::vector<std::thread> ts;
  size_t before = UOp::table_size();
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&, t] {
      for (int r = 0; r < 200; r++) {
        UOp x = UOp::variable("c", 0, 9);
        for (int i = 0; i < 50; i++) x = x * 3 + i;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(UOp::table_size(), before);
  UOp keep = UOp::variable("c", 0, 9) + 1;
  EXPECT_EQ(keep.get(), (UOp::variable("c", 0, 9) + 1).get());
}

TEST(UOp, RangeAnalysis) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", -3, 4);
  EXPECT_EQ((x + y).vmin(), -3);
  EXPECT_EQ((x + y).vmax(), 14);
  EXPECT_EQ((x * y).vmin(), -30);
  EXPECT_EQ((x * y).vmax(), 40);
  EXPECT_EQ((x / 3).vmax(), 3);
  EXPECT_EQ((x % 4).vmax(), 3);
  EXPECT_EQ((x % 4).vmin(), 0);
  EXPECT_EQ((y % 2).vmin(), -1);
  EXPECT_EQ(x.lt(11).vmin(), 1);  // always true
  EXPECT_EQ(x.lt(0).vmax(), 0);   // always false
  EXPECT_EQ(x.max(y).vmin(), 0);
  EXPECT_EQ((-y).vmax(), 3);
  EXPECT_EQ(x.cast(d::uint8).vmax(), 10);
  EXPECT_EQ((x * 1000000000).cast(d::int8).vmin(), -128);  // may wrap
  UOp big = UOp::variable("big", 0, INT32_MAX);
  EXPECT_EQ((big + big).vmax(), INT32_MAX);  // overflow: dtype limits
  EXPECT_EQ((big + big).vmin(), INT32_MIN);
}
