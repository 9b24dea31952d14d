#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <unordered_map>

#include "core/ir/alu.h"
#include "core/ir/symbolic.h"

using namespace sluice;
namespace d = sluice::dtypes;

namespace {
UOp X() { return UOp::variable("x", 0, 100); }
UOp Y() { return UOp::variable("y", 0, 3); }
UOp Z() { return UOp::variable("z", -8, 8); }
UOp I(int64_t v) { return UOp::const_int(d::int32, v); }
UOp F(double v) { return UOp::const_(d::float32, v); }
size_t nodes(const UOp& u) { return u.toposort().size(); }

// Evaluates an expression for given variable values with the exact ALU semantics; nullopt where undefined.
std::optional<Scalar64> eval(const UOp& root, const std::unordered_map<std::string, int64_t>& vars) {
  std::unordered_map<const UOpNode*, Scalar64> val;
  for (const UOp& u : root.toposort()) {
    std::optional<Scalar64> r;
    std::vector<Scalar64> in;
    for (const UOp& s : u.src()) in.push_back(val.at(s.get()));
    switch (u.op()) {
      case Op::Const:
        r = u.dtype().is_float() ? Scalar64::of_float(u.const_value())
                                 : Scalar64::of_int(u.const_int_value());
        break;
      case Op::DefineVar: r = Scalar64::of_int(vars.at(u.arg_as<VarArg>().name)); break;
      case Op::Cast: r = exec_cast(in[0], u.src(0).dtype(), u.dtype()); break;
      default: r = exec_alu(u.op(), u.op() == Op::Where ? u.src(1).dtype() : u.src(0).dtype(), in);
    }
    if (!r) return std::nullopt;
    val[u.get()] = *r;
  }
  return val.at(root.get());
}
}  // namespace

// ---- constant folding (expected values computed by hand)

TEST(FoldConstants, IntegerWrapAround) {
  EXPECT_EQ(simplify(UOp::const_int(d::int8, 100) + UOp::const_int(d::int8, 100)).const_int_value(), -56);
  EXPECT_EQ(simplify(UOp::const_int(d::uint8, 3) - UOp::const_int(d::uint8, 5)).const_int_value(), 254);
  EXPECT_EQ(simplify(UOp::const_int(d::int32, INT32_MAX) * I(2)).const_int_value(), -2);
}

TEST(FoldConstants, CDivisionAndModuloTowardZero) {
  EXPECT_EQ(simplify(I(-7) / I(2)).const_int_value(), -3);
  EXPECT_EQ(simplify(I(-7) % I(2)).const_int_value(), -1);
  EXPECT_EQ(simplify(I(7) % I(-2)).const_int_value(), 1);
  EXPECT_EQ(simplify(UOp::const_int(d::uint32, -7) / UOp::const_int(d::uint32, 2)).const_int_value(),
            2147483644);
}

TEST(FoldConstants, UndefinedOperationsStay) {
  UOp div0 = I(1) / I(0);
  EXPECT_EQ(simplify(div0), div0);
  UOp shift = I(1).alu(Op::Shl, I(32));
  EXPECT_EQ(simplify(shift), shift);
  UOp big = UOp::const_(d::float32, 1e20).cast(d::int32);
  EXPECT_EQ(simplify(big), big);
}

TEST(FoldConstants, FloatsFollowIEEE) {
  EXPECT_TRUE(std::isnan(simplify(F(0) / F(0)).const_value()));
  EXPECT_TRUE(std::isinf(simplify(F(1) / F(0)).const_value()));
  EXPECT_TRUE(std::isnan(simplify(F(NAN).max(F(1))).const_value()));
  EXPECT_EQ(simplify(F(2).alu(Op::Sqrt)).const_value(), double(std::sqrt(2.0f)));
  EXPECT_EQ(simplify(F(NAN).ne(F(NAN))).const_int_value(), 1);
  EXPECT_EQ(simplify(UOp::const_(d::float16, 60000) * UOp::const_(d::float16, 2)).const_value(), INFINITY);
}

TEST(FoldConstants, ComparisonsBitwiseShiftsCasts) {
  EXPECT_EQ(simplify(UOp::const_int(d::uint32, -1).lt(UOp::const_int(d::uint32, 1))).const_int_value(), 0);
  EXPECT_EQ(simplify(I(-1).lt(I(1))).const_int_value(), 1);
  EXPECT_EQ(simplify(I(12) & I(10)).const_int_value(), 8);
  EXPECT_EQ(simplify(I(12) ^ I(10)).const_int_value(), 6);
  EXPECT_EQ(simplify(I(-16).alu(Op::Shr, I(2))).const_int_value(), -4);
  EXPECT_EQ(
      simplify(UOp::const_int(d::uint8, 0xF0).alu(Op::Shr, UOp::const_int(d::uint8, 4))).const_int_value(),
      15);
  EXPECT_EQ(simplify(F(-2.7).cast(d::int32)).const_int_value(), -2);
  EXPECT_EQ(simplify(I(300).cast(d::uint8)).const_int_value(), 44);
  EXPECT_EQ(simplify(F(1).bitcast(d::int32)).const_int_value(), 0x3f800000);
  EXPECT_EQ(simplify(UOp::const_bool(true).where(I(1), I(2))).const_int_value(), 1);
}

// ---- identities

TEST(SymbolicSimple, Identities) {
  UOp x = X();
  EXPECT_EQ(simplify(x + 0), x);                            // x+0 -> x
  EXPECT_EQ(simplify(x - 0), x);                            // x-0 -> x
  EXPECT_EQ(simplify(x * 1), x);                            // x*1 -> x
  EXPECT_EQ(simplify(x / 1), x);                            // x//1 -> x
  EXPECT_EQ(simplify(x % 1), I(0));                         // x%1 -> 0
  EXPECT_EQ(simplify(x * 0), I(0));                         // x*0 -> 0
  EXPECT_EQ(simplify(x - x), I(0));                         // x-x -> 0
  EXPECT_EQ(simplify(x ^ x), I(0));                         // x^x -> 0
  EXPECT_EQ(simplify((x + 1) / (x + 1)), I(1));             // x//x -> 1 when x != 0
  EXPECT_EQ(simplify(x & x), x);                            // x&x -> x
  EXPECT_EQ(simplify(x | x), x);                            // x|x -> x
  EXPECT_EQ(simplify(x.max(x)), x);                         // max(x,x) -> x
  EXPECT_EQ(simplify(x.lt(x)), UOp::const_bool(false));     // x<x -> false
  EXPECT_EQ(simplify(x.ne(x)), UOp::const_bool(false));     // x!=x -> false
  EXPECT_EQ(simplify(Y().lt(2).where(x, x)), x);            // where(c,x,x) -> x
  EXPECT_EQ(simplify(x.cast(d::int64).cast(d::int32)), x);  // widening round trip
}

TEST(SymbolicSimple, IdentitiesThatDoNotHoldForFloatsStay) {
  UOp f = UOp::variable("i", 0, 4).cast(d::float32);  // a float of unknown value
  EXPECT_EQ(simplify(f * 0.0), f * 0.0);              // NaN*0 is NaN
  EXPECT_EQ(simplify(f - f), f - f);                  // inf-inf is NaN
  EXPECT_EQ(simplify(f.ne(f)), f.ne(f));              // NaN != NaN
  EXPECT_EQ(simplify(f * 1.0), f);                    // but x*1 holds
  EXPECT_EQ(simplify(f.alu(Op::FDiv, F(1))), f);      // and x/1
  EXPECT_EQ(simplify(f.cast(d::int32).cast(d::float32)), f.cast(d::int32).cast(d::float32));  // narrowing
}

TEST(SymbolicSimple, BoolLogic) {
  UOp c = X().lt(5);
  EXPECT_EQ(simplify(c & UOp::const_bool(true)), c);
  EXPECT_EQ(simplify(c & UOp::const_bool(false)), UOp::const_bool(false));
  EXPECT_EQ(simplify(c | UOp::const_bool(false)), c);
  EXPECT_EQ(simplify(c | UOp::const_bool(true)), UOp::const_bool(true));
  EXPECT_EQ(simplify(UOp::const_bool(false).where(X(), Y())), Y());
}

// ---- sums and products

TEST(Symbolic, CanonicalSums) {
  UOp x = X(), y = Y();
  EXPECT_EQ(simplify(2 + x), x + 2);                              // constants on the right
  EXPECT_EQ(simplify((x + 1) + 2), x + 3);                        // (x+c1)+c2 -> x+(c1+c2)
  EXPECT_EQ(simplify(x * 2 * 3), x * 6);                          // (x*c1)*c2 -> x*(c1*c2)
  EXPECT_EQ(simplify((x + 1) * 3), x * 3 + 3);                    // (x+c1)*c2 -> x*c2+c1*c2
  EXPECT_EQ(simplify((x + 1) + y), (x + y) + 1);                  // constants move out
  EXPECT_EQ(simplify(x + x), x * 2);                              // x+x -> x*2
  EXPECT_EQ(simplify(x * 2 + x * 3), x * 5);                      // x*c1+x*c2 -> x*(c1+c2)
  EXPECT_EQ(simplify(x * 2 + x), x * 3);                          // x*c+x -> x*(c+1)
  EXPECT_EQ(simplify((y + x * 2) + x * 3), y + x * 5);            // y+x*c1+x*c2 -> y+x*(c1+c2)
  EXPECT_EQ(simplify(x - y), x + y * -1);                         // x-y -> x+y*-1
  EXPECT_EQ(simplify((x + y) - y), x);                            // like terms cancel
  EXPECT_EQ(simplify(x * 2 + y + x * 3 + 3 + 4), x * 5 + y + 7);  // like terms meet, constants fold last
}

TEST(Symbolic, RangeAnalysisFoldsToConstants) {
  EXPECT_EQ(simplify(X().lt(101)), UOp::const_bool(true));
  EXPECT_EQ(simplify(X().lt(0)), UOp::const_bool(false));
  EXPECT_EQ(simplify(Y() / 4), I(0));
  EXPECT_EQ(simplify(Y() % 4), Y());
  EXPECT_EQ(simplify(X().max(Z())), X().max(Z()));   // overlapping: stays
  EXPECT_EQ(simplify((X() + 9).max(Z())), X() + 9);  // x+9 >= 9 > z
}

// ---- division and modulo

TEST(Symbolic, DivModFromRanges) {
  UOp x = X(), y = Y();
  EXPECT_EQ(simplify((x * 4 + y) / 4), x);                  // (x*4+y)//4 -> x
  EXPECT_EQ(simplify((x * 4 + y) % 4), y);                  // (x*4+y)%4 -> y
  EXPECT_EQ(simplify((x * 8 + y) / 4), x * 2);              // remainder term < 4 drops
  EXPECT_EQ(simplify((x * 8 + y * 2) / 4), y / 2 + x * 2);  // common factor 2 cancels: (2y)//4 -> y//2
  EXPECT_EQ(simplify((x * 6 + y * 3) / 3), x * 2 + y);      // split sums with common factors
  EXPECT_EQ(simplify((x * 4 + y + 4) / 4), x + 1);          // constant joins the quotient
  EXPECT_EQ(simplify((x * 4 + 5) % 4), I(1));
}

TEST(Symbolic, NestedDivMod) {
  UOp x = X(), z8 = UOp::variable("w", 0, 7);
  EXPECT_EQ(simplify(x / 2 / 3), x / 6);                // x//c1//c2 -> x//(c1*c2)
  EXPECT_EQ(simplify(x % 12 % 4), x % 4);               // x%(k*c)%c -> x%c
  EXPECT_EQ(simplify(x % 4 + (x / 4) * 4), x);          // x%c + (x//c)*c -> x
  EXPECT_EQ(simplify(((x * 8 + z8) / 4) % 2), z8 / 4);  // reshape-style chain
  EXPECT_EQ(simplify((x * 3) / 6), x / 2);              // (x*c1)//c2 -> x//(c2/c1)
}

TEST(Symbolic, ComparisonsMoveConstants) {
  UOp x = X();
  EXPECT_EQ(simplify((x + 3).lt(10)), x.lt(7));     // x+c0 < c1 -> x < c1-c0
  EXPECT_EQ(simplify((x * 4).lt(10)), x.lt(3));     // c0*x < c1 -> x < ceil(c1/c0)
  EXPECT_EQ(simplify((x / 4).lt(3)), x.lt(12));     // x//c0 < c1 -> x < c1*c0
  EXPECT_EQ(simplify(x.lt(5) & x.lt(3)), x.lt(3));  // x<a & x<b -> x<min(a,b)
}

TEST(Symbolic, NegativeDividendKeepsCSemantics) {
  // z may be negative: (z*4+y)//4 is not z (C division truncates toward zero).
  UOp e = (Z() * 4 + Y()) / 4;
  UOp s = simplify(e);
  for (int64_t z = -8; z <= 8; z++)
    for (int64_t y = 0; y <= 3; y++)
      ASSERT_EQ(eval(s, {{"z", z}, {"y", y}})->i, eval(e, {{"z", z}, {"y", y}})->i) << z << " " << y;
}

// ---- property test: simplified and original agree on random assignments

namespace {
// Random expressions over four variables a in [0, 15], b in [-4, 4], c in [0, 3], d in [1, 64].
struct Gen {
  std::mt19937 rng{1234};
  static constexpr const char* kNames[] = {"a", "b", "c", "d"};
  static constexpr std::pair<int64_t, int64_t> kBounds[] = {{0, 15}, {-4, 4}, {0, 3}, {1, 64}};
  std::vector<UOp> vars;
  Gen() {
    for (size_t v = 0; v < 4; v++)
      vars.push_back(UOp::variable(kNames[v], kBounds[v].first, kBounds[v].second));
  }
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  // Random values of the four variables, within their bounds.
  std::unordered_map<std::string, int64_t> assignment() {
    std::unordered_map<std::string, int64_t> vals;
    for (size_t v = 0; v < 4; v++) vals[kNames[v]] = pick(kBounds[v].first, kBounds[v].second);
    return vals;
  }
  UOp leaf() { return pick(0, 3) == 0 ? I(pick(-6, 12)) : vars[size_t(pick(0, int64_t(vars.size()) - 1))]; }
  UOp expr(int depth) {
    if (depth == 0) return leaf();
    UOp a = expr(depth - 1);
    switch (pick(0, 11)) {
      case 0: return a + expr(depth - 1);
      case 1: return a - expr(depth - 1);
      case 2: return a * I(pick(-3, 8));
      case 3: return a * expr(depth - 1);
      case 4: return a / I(pick(1, 9));
      case 5: return a % I(pick(1, 9));
      case 6: return a / I(pick(-4, -1));
      case 7: return a.max(expr(depth - 1));
      case 8: return -a;
      case 9: return a.lt(expr(depth - 1)).where(a, expr(depth - 1));
      case 10: return (a.lt(I(pick(-2, 9))) & a.ne(I(pick(0, 4)))).where(expr(depth - 1), a);
      default: return a + I(pick(-5, 5));
    }
  }
};
}  // namespace

TEST(Symbolic, PropertySimplifiedAgreesWithOriginal) {
  Gen g;
  int checked = 0;
  size_t before = 0, after = 0;
  for (int e = 0; e < 3000; e++) {
    UOp expr = g.expr(int(g.pick(1, 4)));
    UOp simple = simplify(expr);
    before += nodes(expr), after += nodes(simple);
    for (int s = 0; s < 20; s++) {
      const std::unordered_map<std::string, int64_t> vars = g.assignment();
      auto want = eval(expr, vars);
      if (!want) continue;  // undefined in C (e.g. division by zero): nothing to compare
      auto got = eval(simple, vars);
      ASSERT_TRUE(got.has_value()) << expr << "\n->\n" << simple;
      ASSERT_EQ(got->i, want->i) << expr << "\n->\n" << simple;
      checked++;
    }
    // Range analysis is sound: every value lies inside [vmin, vmax].
    for (int s = 0; s < 5; s++) {
      const std::unordered_map<std::string, int64_t> vars = g.assignment();
      if (auto got = eval(simple, vars)) {
        ASSERT_GE(double(got->i), simple.vmin()) << simple;
        ASSERT_LE(double(got->i), simple.vmax()) << simple;
      }
    }
  }
  EXPECT_GT(checked, 40000);
  EXPECT_LT(after, before);  // simplification shrinks graphs overall
}

// ---- simplify_given: an index simplified where its mask holds

TEST(SimplifyGiven, APaddedUpsampledIndexFoldsItsDivisions) {
  // A row of 194 read through a pad of 1 from a map upsampled 8x (det's FPN): where 1 <= i <= 192, the
  // index's ((i + 7) / 8 + 23) / 24 is 1 and the modulo drops.
  const UOp i = UOp::variable("i", 0, 193);
  const UOp q = (i + I(7)) / I(8) + I(23);
  const UOp idx = simplify((q / I(24)) * I(24) + q % I(24) + I(-24));
  const UOp valid = i.ge(I(1)) & i.lt(I(193));
  const UOp s = simplify_given(idx, valid);
  size_t divmods = 0;
  for (const UOp& u : s.toposort()) divmods += u.op() == Op::IDiv || u.op() == Op::Mod;
  EXPECT_EQ(divmods, 1u) << idx << "\n->\n" << s;
  for (int64_t v = 1; v <= 192; ++v) ASSERT_EQ(eval(s, {{"i", v}})->i, eval(idx, {{"i", v}})->i) << v;
  // No clause that narrows a bound, or an unsatisfiable one: the index as it was.
  EXPECT_EQ(simplify_given(idx, i.lt(I(500))), idx);
  EXPECT_EQ(simplify_given(idx, i.ge(I(9)) & i.lt(I(3))), idx);
}

TEST(SimplifyGiven, PropertyAgreesWhereTheMaskHolds) {
  Gen g;
  int checked = 0;
  for (int e = 0; e < 2000; e++) {
    const UOp expr = simplify(g.expr(int(g.pick(1, 4))));
    // Clauses on a variable or on a subexpression of expr, as a mask's are.
    std::vector<UOp> parts = expr.toposort();
    UOp valid;
    for (int k = 0; k < int(g.pick(1, 3)); ++k) {
      const UOp x =
          g.pick(0, 1) ? g.vars[size_t(g.pick(0, 3))] : parts[size_t(g.pick(0, int64_t(parts.size()) - 1))];
      if (!x.dtype().is_int()) continue;
      const int64_t c = g.pick(-3, 20), form = g.pick(0, 2);
      const UOp clause = form == 0 ? x.lt(I(c)) : form == 1 ? x.ge(I(c)) : I(c).lt(x);
      valid = valid ? (valid & clause) : clause;
    }
    if (!valid) continue;
    const UOp s = simplify_given(expr, valid);
    for (int t = 0; t < 30; t++) {
      const std::unordered_map<std::string, int64_t> vars = g.assignment();
      auto ok = eval(valid, vars);
      if (!ok || !ok->i) continue;  // only where the mask holds
      auto want = eval(expr, vars);
      if (!want) continue;
      auto got = eval(s, vars);
      ASSERT_TRUE(got.has_value()) << expr << "\n->\n" << s << "\ngiven " << valid;
      ASSERT_EQ(got->i, want->i) << expr << "\n->\n" << s << "\ngiven " << valid;
      checked++;
    }
  }
  EXPECT_GT(checked, 5000);
}
