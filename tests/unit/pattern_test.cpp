#include <gtest/gtest.h>

#include "base/error.h"
#include "core/ir/pattern.h"

using namespace sluice;
namespace d = sluice::dtypes;

namespace {
UOp X() { return UOp::variable("x", 0, 10); }
UOp Y() { return UOp::variable("y", 0, 10); }
bool matches(const UPat& p, const UOp& u) {
  Match m;
  return p.match(u, m);
}
}  // namespace

TEST(Pattern, OpAndOpSet) {
  EXPECT_TRUE(matches(UPat(Op::Add), X() + 1));
  EXPECT_FALSE(matches(UPat(Op::Mul), X() + 1));
  EXPECT_TRUE(matches(UPat({Op::Mul, Op::Add}), X() + 1));
  EXPECT_TRUE(matches(UPat(), X()));
}

TEST(Pattern, DtypeMatchesScalarOfVectorsToo) {
  UOp f = UOp::const_(d::float32, 1);
  EXPECT_TRUE(matches(UPat().dtype(d::float32), f));
  EXPECT_FALSE(matches(UPat().dtype(d::int32), f));
  EXPECT_TRUE(matches(UPat().dtypes({d::int32, d::float32}), f));
  UOp v = UOp::make(Op::Vectorize, d::float32.vec(2), {f, f});
  EXPECT_TRUE(matches(UPat().dtype(d::float32), v));
}

TEST(Pattern, SourcesInOrder) {
  UPat p = UPat(Op::Sub).src({var("a"), cvar("c")});
  EXPECT_TRUE(matches(p, X() - 1));
  EXPECT_FALSE(matches(p, 1 - X()));
  EXPECT_FALSE(matches(UPat(Op::Sub).src({var("a")}), X() - 1));                 // wrong count
  EXPECT_TRUE(matches(UPat(Op::Sub).src({var("a")}).allow_any_len(), X() - 1));  // prefix
}

TEST(Pattern, CommutativeSourcesMatchEitherOrder) {
  UPat p = var("x") + cvar("c");
  Match m;
  UOp u = UOp::const_int(d::int32, 3) + X();  // captures point into u: keep it alive
  ASSERT_TRUE(p.match(u, m));
  EXPECT_EQ(m["x"], X());
  EXPECT_EQ(m["c"].const_int_value(), 3);
}

TEST(Pattern, RepeatedSources) {
  UPat p = UPat(Op::Sink).src_repeat(UPat(Op::Const));
  EXPECT_TRUE(matches(p, UOp::sink({UOp::const_bool(true), UOp::const_bool(false)})));
  EXPECT_FALSE(matches(p, UOp::sink({UOp::const_bool(true), X()})));
}

TEST(Pattern, ArgAndConstValue) {
  EXPECT_TRUE(matches(UPat(Op::DefineVar).arg(VarArg{"x", 0, 10}), X()));
  EXPECT_FALSE(matches(UPat(Op::DefineVar).arg(VarArg{"x", 0, 11}), X()));
  EXPECT_TRUE(matches(cnst(2), UOp::const_int(d::int32, 2)));
  EXPECT_TRUE(matches(cnst(2), UOp::const_(d::float32, 2)));
  EXPECT_FALSE(matches(cnst(2), UOp::const_int(d::int32, 3)));
}

TEST(Pattern, RepeatedNameBindsOneNode) {
  UPat p = var("x") - var("x");
  EXPECT_TRUE(matches(p, X() - X()));
  EXPECT_FALSE(matches(p, X() - Y()));
}

TEST(Pattern, FailedBranchLeavesNoCaptures) {
  // x + y*c against (X*2) + Y: the first order binds x to X*2 and then fails; the second must start clean.
  UPat p = var("x") + var("y") * cvar("c");
  Match m;
  UOp u = X() * 2 + Y();
  ASSERT_TRUE(p.match(u, m));
  EXPECT_EQ(m.count, 3);
  EXPECT_EQ(m["x"], Y());
  EXPECT_EQ(m["y"], X());
}

TEST(Pattern, AnyOfAlternatives) {
  UPat p = UPat::any_of({UPat(Op::Add), UPat(Op::Mul)}).named("u");
  Match m;
  UOp u = X() * 2;
  EXPECT_TRUE(p.match(u, m));
  EXPECT_EQ(m["u"], u);
  EXPECT_FALSE(matches(p, X() / 2));
}

TEST(Pattern, MissingCaptureThrows) {
  Match m;
  EXPECT_THROW(m["nope"], Error);
}

TEST(PatternMatcher, FirstFiringRuleWinsAndTablesCombine) {
  PatternMatcher a{{{var("x") + 0, [](Match& m) { return m["x"]; }}}};
  PatternMatcher b{{{var("x") + cvar("c"), [](Match& m) { return m["x"]; }}}};
  EXPECT_EQ(a.rewrite(X() + 0), X());
  EXPECT_FALSE(a.rewrite(X() + 1));
  EXPECT_EQ((a + b).size(), 2u);
  EXPECT_EQ((a + b).rewrite(X() + 1), X());
}

TEST(PatternMatcher, RuleReturningNullOrSelfDoesNotFire) {
  PatternMatcher pm{{
      {var("x") + 0, [](Match&) { return UOp(); }},
      {UPat(Op::Add).named("a"), [](Match& m) { return m["a"]; }},
  }};
  EXPECT_FALSE(pm.rewrite(X() + 0));
}

TEST(GraphRewrite, BottomUpReachesFixedPoint) {
  // x+0 -> x applied inside a larger graph, and the rewritten parent is rewritten again.
  PatternMatcher pm{{{var("x") + 0, [](Match& m) { return m["x"]; }}}};
  UOp zero = UOp::const_int(d::int32, 0);
  UOp e = ((X() + zero) + zero) * ((X() + zero) + zero);
  EXPECT_EQ(graph_rewrite(e, pm), X() * X());
}

TEST(GraphRewrite, ContextReachesRules) {
  int fired = 0;
  PatternMatcher pm{{{UPat(Op::DefineVar).named("v"), [](Match& m) {
                        m.context<int>()++;
                        return UOp();
                      }}}};
  graph_rewrite(X() + X() * 2, pm, &fired);
  EXPECT_EQ(fired, 1);  // memoized: the shared variable is visited once
}

TEST(GraphRewrite, TopDownRewritesParentsFirst) {
  // Top-down sees (x+1)*2 before its sources change: the MUL rule fires on the original node.
  std::vector<Op> order;
  PatternMatcher pm{{{UPat({Op::Add, Op::Mul}).named("u"), [&](Match& m) {
                        order.push_back(m["u"].op());
                        return UOp();
                      }}}};
  graph_rewrite((X() + 1) * 2, pm, nullptr, /*top_down=*/true);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], Op::Mul);
  order.clear();
  graph_rewrite((X() + 1) * 2, pm);
  EXPECT_EQ(order[0], Op::Add);
}

TEST(GraphRewrite, DeepChainDoesNotOverflowTheStack) {
  UOp e = X();
  for (int i = 0; i < 200000; i++) e = e + 0;
  PatternMatcher pm{{{var("x") + 0, [](Match& m) { return m["x"]; }}}};
  EXPECT_EQ(graph_rewrite(e, pm), X());
}
