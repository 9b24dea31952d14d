// The scheduler's rules on small tensor graphs built from UOp builders (core/schedule/schedule.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "core/ir/shape_tracker.h"
#include "core/schedule/fold.h"
#include "core/schedule/schedule.h"
#include "core/schedule/views.h"
#include "tests/unit/schedule_check.h"

using namespace sluice;
using sluice::testing::expect_well_formed;
using sluice::testing::st;
namespace d = sluice::dtypes;

namespace {

UOp buf(const Shape& s, DType dt = d::float32) { return UOp::new_buffer("CPU", dt, prod(s)).reshape(s); }
// A tensor constant as the Tensor API builds it: CONST(DEVICE) reshaped to 1s and expanded.
UOp cst(double v, const Shape& s, DType dt = d::float32) {
  return UOp::const_on("CPU", dt, v).reshape(Shape(s.size(), 1)).expand(s);
}
UOp base_buffer(const UOp& u) {  // the BUFFER under a reshape
  return u.op() == Op::Buffer ? u : base_buffer(u.src(0));
}

std::vector<UOp> nodes_of(const UOp& ast, Op op) {
  std::vector<UOp> out;
  for (const UOp& u : ast.toposort())
    if (u.op() == op) out.push_back(u);
  return out;
}
size_t count(const UOp& ast, Op op) { return nodes_of(ast, op).size(); }
int64_t global_index(const UOp& load_or_store) { return load_or_store.src(0).arg_as<int64_t>(); }

Schedule checked(const std::vector<UOp>& outs) {
  Schedule s = schedule(outs);
  for (const ScheduleItem& si : s.items) expect_well_formed(si);
  return s;
}

}  // namespace

// ---------------------------------------------------------------- fusion

TEST(Schedule, FusedMulAddIsOneKernelWithThreeLoads) {
  UOp a = buf({4, 4}), b = buf({4, 4}), c = buf({4, 4});
  UOp out = a * b + c;
  Schedule s = checked({out});
  ASSERT_EQ(s.items.size(), 1u);
  const ScheduleItem& si = s.items[0];
  ASSERT_EQ(si.ast.op(), Op::Sink);
  ASSERT_EQ(si.ast.num_src(), 1u);
  const UOp& store = si.ast.src(0);
  EXPECT_EQ(store.op(), Op::Store);
  EXPECT_EQ(global_index(store), 0);
  EXPECT_EQ(st(store.src(1)).shape(), (Shape{4, 4}));
  EXPECT_TRUE(st(store.src(1)).contiguous());
  auto loads = nodes_of(si.ast, Op::Load);
  ASSERT_EQ(loads.size(), 3u);
  // Inputs are numbered in the order the kernel first reads them; outputs come first.
  ASSERT_EQ(si.bufs.size(), 4u);
  EXPECT_EQ(si.bufs[1], base_buffer(a));
  EXPECT_EQ(si.bufs[2], base_buffer(b));
  EXPECT_EQ(si.bufs[3], base_buffer(c));
  for (const UOp& l : loads) {
    EXPECT_EQ(st(l.src(1)).shape(), (Shape{4, 4}));
    EXPECT_EQ(l.dtype(), d::float32);
  }
  EXPECT_EQ(store.src(2).op(), Op::Add);
  EXPECT_EQ(store.src(2).src(0).op(), Op::Mul);
  EXPECT_EQ(global_index(store.src(2).src(1)), 3);
  EXPECT_EQ(si.bufs[0].op(), Op::Buffer);
  EXPECT_EQ(si.bufs[0].arg_as<int64_t>(), 16);
  // The output becomes its new buffer, in the output's shape.
  ASSERT_EQ(s.becomes.size(), 1u);
  EXPECT_EQ(s.becomes[0].first, out);
  EXPECT_EQ(s.becomes[0].second, si.bufs[0].reshape({4, 4}));
}

TEST(Schedule, ElementwiseChainFusesIntoItsConsumer) {
  UOp x = buf({64, 64});
  for (int i = 0; i < 10; i++) x = (x * cst(2, {64, 64}) + cst(1, {64, 64})).max(cst(0, {64, 64}));
  Schedule s = checked({x});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count(s.items[0].ast, Op::Load), 1u);  // the input, read once: the chain is one expression
  EXPECT_EQ(count(s.items[0].ast, Op::Max), 10u);
}

TEST(Schedule, MovementOpsFoldIntoLoadViews) {
  UOp a = buf({16, 32}), b = buf({32, 16});
  Schedule s = checked({a.permute({1, 0}) + b});
  ASSERT_EQ(s.items.size(), 1u);
  auto loads = nodes_of(s.items[0].ast, Op::Load);
  ASSERT_EQ(loads.size(), 2u);
  const ShapeTracker& pa = st(loads[0].src(1));
  EXPECT_EQ(pa.shape(), (Shape{32, 16}));
  EXPECT_EQ(pa.views.back().strides, (Shape{1, 32}));  // the transpose, read in place
}

TEST(Schedule, PadOfSafeOpsFusesAndUnsafeOpsRealize) {
  UOp a = buf({4, 4}), b = buf({6, 6});
  Schedule safe = checked({(a * cst(2, {4, 4})).pad({{1, 1}, {1, 1}}) + b});
  ASSERT_EQ(safe.items.size(), 1u);
  // The mask of the pad is on every leaf of the padded expression: the load and the constant.
  for (const UOp& v : nodes_of(safe.items[0].ast, Op::View))
    if (st(v).views.back().mask) SUCCEED();
  EXPECT_TRUE(st(nodes_of(safe.items[0].ast, Op::Const)[0].src(0)).views.back().mask.has_value());
  // exp2(0) is 1: the padding would not be zero, so the exp2 is stored first.
  Schedule unsafe = checked({a.alu(Op::Exp2).pad({{1, 1}, {1, 1}}) + b});
  EXPECT_EQ(unsafe.items.size(), 2u);
}

TEST(Schedule, ExpandOfComputedValueRealizesIt) {
  UOp a = buf({32, 1}), b = buf({32, 64});
  EXPECT_EQ(checked({(a + a).expand({32, 64}) * b}).items.size(), 2u);  // a+a is computed once
  EXPECT_EQ(checked({a.expand({32, 64}) * b}).items.size(), 1u);        // a buffer is read in place
}

TEST(Schedule, ExpandOfConstantArithmeticIsRecomputed) {
  // [0, 1] + [0, 2]: elementwise on padded constants (how an arange is built) reads no memory, so an
  // expanded read recomputes it rather than storing it.
  auto digit = [](int64_t v) { return UOp::const_int_on("CPU", d::int32, v).reshape({1}).pad({{1, 0}}); };
  UOp ramp = digit(1).reshape({2, 1}).expand({2, 2}) + digit(2).reshape({1, 2}).expand({2, 2});
  UOp b = buf({4, 8}, d::int32);
  Schedule s = checked({ramp.reshape({4, 1}).expand({4, 8}) * b});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count(s.items[0].ast, Op::Load), 1u);
  // The same arithmetic on a buffer is stored before the expand.
  UOp a = buf({4, 1}, d::int32);
  EXPECT_EQ(checked({(a + a).expand({4, 8}) * b}).items.size(), 2u);
}

// ---------------------------------------------------------------- reductions

TEST(Schedule, ReduceFusesWithElementwiseConsumer) {
  UOp a = buf({32, 64}), b = buf({32, 1});
  Schedule s = checked({a.reduce(Op::Add, {1}) + b});
  ASSERT_EQ(s.items.size(), 1u);
  const UOp& ast = s.items[0].ast;
  auto red = nodes_of(ast, Op::ReduceAxis);
  ASSERT_EQ(red.size(), 1u);
  EXPECT_EQ(red[0].arg_as<ReduceArg>(), (ReduceArg{Op::Add, {1}}));
  // Below the reduce: the full shape; above it and at the store: the reduced axes are 1.
  EXPECT_EQ(st(red[0].src(0).src(1)).shape(), (Shape{32, 64}));
  EXPECT_EQ(st(ast.src(0).src(1)).shape(), (Shape{32, 1}));
  auto loads = nodes_of(ast, Op::Load);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(st(loads[1].src(1)).shape(), (Shape{32, 1}));
}

TEST(Schedule, ReshapedReduceResultStaysInTheReduceKernel) {
  UOp a = buf({32, 64}), b = buf({32});
  Schedule s = checked({a.reduce(Op::Add, {1}).reshape({32}) + b});
  ASSERT_EQ(s.items.size(), 1u);
  // The kernel works in the reduce's shape: the (32,) input and output are viewed as (32, 1).
  for (const UOp& v : nodes_of(s.items[0].ast, Op::View)) EXPECT_EQ(st(v).shape().size(), 2u);
}

TEST(Schedule, ReduceBroadcastOntoItsInputRealizesTheReduce) {
  UOp a = buf({32, 64});
  Schedule s = checked({a.reduce(Op::Add, {1}).expand({32, 64}) + a});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(count(s.items[0].ast, Op::ReduceAxis), 1u);
  EXPECT_EQ(count(s.items[1].ast, Op::ReduceAxis), 0u);
  // The second kernel reads the first's output, broadcast.
  EXPECT_EQ(s.items[1].bufs[1], s.items[0].bufs[0]);
}

TEST(Schedule, ReduceOfReduceRealizesTheInnerOneUnlessTheyMerge) {
  UOp a = buf({8, 16, 32});
  EXPECT_EQ(checked({a.reduce(Op::Add, {2}).reduce(Op::Max, {1})}).items.size(), 2u);
  Schedule merged =
      checked({a.reduce(Op::Add, {2}).reduce(Op::Add, {1})});  // sum(sum(x, 2), 1) = sum(x, (1, 2))
  ASSERT_EQ(merged.items.size(), 1u);
  EXPECT_EQ(nodes_of(merged.items[0].ast, Op::ReduceAxis)[0].arg_as<ReduceArg>(),
            (ReduceArg{Op::Add, {1, 2}}));
}

TEST(Schedule, TwoReduceShapesAreTwoKernels) {
  UOp a = buf({32, 64});
  EXPECT_EQ(checked({a.reduce(Op::Add, {0}), a.reduce(Op::Add, {1})}).items.size(), 2u);
}

TEST(Schedule, ConsumersOfOneReduceShareAMultiOutputKernel) {
  UOp a = buf({32, 64});
  UOp r = a.reduce(Op::Add, {1});
  Schedule s = checked({r + cst(1, {32, 1}), r * cst(2, {32, 1})});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].ast.num_src(), 2u);  // two STOREs
  EXPECT_EQ(global_index(s.items[0].ast.src(0)), 0);
  EXPECT_EQ(global_index(s.items[0].ast.src(1)), 1);
  EXPECT_EQ(s.items[0].bufs.size(), 3u);  // two outputs, then the input
  EXPECT_EQ(count(s.items[0].ast, Op::ReduceAxis), 1u);
}

TEST(Schedule, ElementwiseChainBelowAStoredReduceIsStoredInstead) {
  UOp a = buf({32, 64});
  UOp r = a.reduce(Op::Add, {1});
  // The reduce must be stored (it is read by another reduce); the sqrt below it is stored in its place.
  UOp s1 = r.alu(Op::Sqrt);
  Schedule s = checked({s1.reduce(Op::Add, {0}), (s1 + cst(1, {32, 1})).reduce(Op::Max, {0})});
  EXPECT_EQ(s.items.size(), 3u);
  EXPECT_EQ(count(s.items[0].ast, Op::Sqrt), 1u);
  EXPECT_EQ(count(s.items[1].ast, Op::Sqrt), 0u);
}

TEST(Schedule, ReducesOfOneShapeShareTheKernelOfTheirOneOutput) {
  UOp a = buf({64}), b = buf({64});
  Schedule s = checked({a.reduce(Op::Add, {0}) / b.reduce(Op::Max, {0})});
  ASSERT_EQ(s.items.size(), 1u);  // one loop over 64 computes both
  auto red = nodes_of(s.items[0].ast, Op::ReduceAxis);
  ASSERT_EQ(red.size(), 2u);
  for (const UOp& r : red) EXPECT_EQ(st(r.src(0).src(1)).shape(), (Shape{64}));
  // Different input shapes are different loops: one kernel each, as the reference design.
  UOp c = buf({8, 16}), e = buf({8, 32});
  EXPECT_EQ(checked({c.reduce(Op::Add, {1}) + e.reduce(Op::Add, {1})}).items.size(), 2u);
}

// ---------------------------------------------------------------- realize points

TEST(Schedule, ContiguousIsARealizePoint) {
  UOp a = buf({16, 32});
  Schedule s = checked({a.permute({1, 0}).contiguous() + cst(1, {32, 16})});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(count(s.items[0].ast, Op::Add), 0u);  // a copy with the transpose in its load
  EXPECT_EQ(count(s.items[1].ast, Op::Add), 1u);
}

TEST(Schedule, OutputsThatAreBuffersOrViewsOfBuffersNeedNoKernel) {
  UOp a = buf({4, 8});
  Schedule s = checked({a, a.permute({1, 0}), a.contiguous()});
  EXPECT_TRUE(s.items.empty());
  ASSERT_EQ(s.becomes.size(), 1u);  // contiguous of a dense buffer is the buffer
  EXPECT_EQ(s.becomes[0].second, a);
}

TEST(Schedule, OutputViewOfAComputedNodeIsThatViewOfItsBuffer) {
  UOp a = buf({4, 8}), b = buf({4, 8});
  UOp out = (a + b).permute({1, 0});
  Schedule s = checked({out});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(st(s.items[0].ast.src(0).src(1)).shape(), (Shape{4, 8}));  // stored as computed
  ASSERT_EQ(s.becomes.size(), 1u);
  EXPECT_EQ(s.becomes[0].second, s.items[0].bufs[0].reshape({4, 8}).permute({1, 0}));
}

TEST(Schedule, ConstantOutputIsStoredByAKernel) {
  Schedule s = checked({cst(3, {4, 4})});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count(s.items[0].ast, Op::Load), 0u);
  EXPECT_EQ(count(s.items[0].ast, Op::Const), 1u);
}

TEST(Schedule, CopyIsItsOwnItemWithDestinationFirst) {
  UOp a = buf({4, 4});
  UOp out = (a + a).copy_to("NULL");
  Schedule s = checked({out});
  ASSERT_EQ(s.items.size(), 2u);  // a+a is stored, then copied
  const ScheduleItem& cp = s.items[1];
  ASSERT_EQ(cp.ast.op(), Op::Copy);
  EXPECT_EQ(cp.ast.arg_as<int64_t>(), 64);
  ASSERT_EQ(cp.bufs.size(), 2u);
  EXPECT_EQ(cp.bufs[0].device(), "NULL");
  EXPECT_EQ(cp.bufs[1], s.items[0].bufs[0]);
  EXPECT_EQ(global_index(cp.ast), 0);
  EXPECT_EQ(cp.ast.src(1).arg_as<int64_t>(), 1);
  // A view that is more than a reshape is made contiguous on the source device first.
  EXPECT_EQ(checked({a.permute({1, 0}).copy_to("NULL")}).items.size(), 2u);
  EXPECT_EQ(checked({a.copy_to("NULL")}).items.size(), 1u);
}

// ---------------------------------------------------------------- constant folding and dead code

TEST(Schedule, IdentitiesAndConstantsFoldAway) {
  UOp a = buf({8});
  Schedule s = checked({(a * cst(1, {8}) + cst(0, {8})) * (cst(2, {8}) * cst(3, {8}))});
  ASSERT_EQ(s.items.size(), 1u);
  const UOp& value = s.items[0].ast.src(0).src(2);
  ASSERT_EQ(value.op(), Op::Mul);  // a * 6
  EXPECT_EQ(value.src(0).op(), Op::Load);
  ASSERT_EQ(value.src(1).op(), Op::Const);
  EXPECT_EQ(value.src(1).const_value(), 6.0);
  EXPECT_EQ(count(s.items[0].ast, Op::Add), 0u);
}

TEST(Schedule, FloatTimesZeroDoesNotFoldButIntegerDoes) {
  UOp f = buf({8}), i = buf({8}, d::int32);
  EXPECT_EQ(count(checked({f * cst(0, {8})}).items[0].ast, Op::Mul), 1u);  // nan*0 is nan
  Schedule s = checked({i * cst(0, {8}, d::int32)});
  ASSERT_EQ(s.items.size(), 1u);  // stored as the constant 0: the int input is not read at all
  EXPECT_EQ(count(s.items[0].ast, Op::Load), 0u);
  EXPECT_EQ(s.items[0].bufs.size(), 1u);
}

TEST(Schedule, ReduceOfConstantFolds) {
  Schedule s = checked({cst(2, {4, 8}).reduce(Op::Add, {1}) + buf({4, 1})});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count(s.items[0].ast, Op::ReduceAxis), 0u);
  EXPECT_EQ(nodes_of(s.items[0].ast, Op::Const)[0].const_value(), 16.0);
}

TEST(Schedule, DeadBranchesAreNotScheduled) {
  UOp a = buf({8}, d::int32);
  UOp dead = (a + a).contiguous();  // would be a kernel of its own, but * 0 drops it
  Schedule s = checked({(a + cst(1, {8}, d::int32)) + dead * cst(0, {8}, d::int32)});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].bufs.size(), 2u);
}

TEST(Schedule, DetachIsTransparent) {
  UOp a = buf({8});
  EXPECT_EQ(checked({(a + a).detach() * a}).items.size(), 1u);
}

// ---------------------------------------------------------------- in-place writes

TEST(Schedule, AssignWritesItsTargetInPlace) {
  UOp a = buf({16});
  UOp out = a.assign(a + cst(1, {16}));
  Schedule s = checked({out});
  ASSERT_EQ(s.items.size(), 1u);
  ASSERT_EQ(s.items[0].bufs.size(), 1u);  // reads and writes one buffer
  EXPECT_EQ(s.items[0].bufs[0], base_buffer(a));
  auto loads = nodes_of(s.items[0].ast, Op::Load);
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_EQ(global_index(loads[0]), 0);
  ASSERT_EQ(s.becomes.size(), 1u);  // the output is its target's buffer, as it was
  EXPECT_EQ(s.becomes[0].second, a);
}

TEST(Schedule, ReadsOfABufferComeBeforeItsInPlaceWrite) {
  UOp a = buf({16}), b = buf({16});
  UOp reader = (a * b).contiguous();
  UOp write = a.assign(b + cst(1, {16}));
  // Listed write-first, but the reader of the old value of a must run first.
  Schedule s = checked({write, reader});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(count(s.items[0].ast, Op::Mul), 1u);
  EXPECT_EQ(s.items[1].bufs[0], base_buffer(a));
  // A reader of the new value runs after it.
  Schedule after = checked({write.reshape({16}) * b});
  ASSERT_EQ(after.items.size(), 2u);
  EXPECT_EQ(after.items[0].bufs[0], base_buffer(a));
}

TEST(Schedule, AssignThroughAViewStoresThroughIt) {
  UOp a = buf({4, 4});
  UOp part = a.shrink({{0, 2}, {0, 4}});
  Schedule s = checked({part.assign(part * cst(2, {2, 4}))});
  ASSERT_EQ(s.items.size(), 1u);
  const UOp& store = s.items[0].ast.src(0);
  EXPECT_EQ(st(store.src(1)).shape(), (Shape{2, 4}));
  EXPECT_EQ(st(nodes_of(s.items[0].ast, Op::Load)[0].src(1)), st(store.src(1)));
}

TEST(Schedule, AssignReadingOtherElementsOfItsTargetThrows) {
  UOp a = buf({4, 4});
  EXPECT_THROW(schedule({a.assign(a.permute({1, 0}) + cst(1, {4, 4}))}), Error);
  EXPECT_EQ(schedule({a.assign(a.permute({1, 0}).contiguous() + cst(1, {4, 4}))}).items.size(), 2u);
}

TEST(Schedule, ChainedAssignsRunInOrder) {
  UOp a = buf({8});
  UOp first = a.assign(a + cst(1, {8}));
  UOp second = first.assign(first * cst(2, {8}));
  Schedule s = checked({second});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(count(s.items[0].ast, Op::Add), 1u);
  EXPECT_EQ(count(s.items[1].ast, Op::Mul), 1u);
}

// ---------------------------------------------------------------- metadata, kernelize, determinism

TEST(Schedule, MetadataNamesTheFusedOpsOnce) {
  UOp a = buf({8}), b = buf({8});
  UOp m = (a * b).tagged("mul_tag");
  UOp out = (m + m).tagged("add_tag").alu(Op::Neg).tagged("neg_tag");
  Schedule s = checked({out});
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].metadata, (std::vector<std::string>{"mul_tag", "add_tag", "neg_tag"}));
}

TEST(Schedule, KernelizeMakesKernelsExplicit) {
  UOp a = buf({4, 4}), b = buf({4, 4});
  UOp out = (a * b).reduce(Op::Add, {1});
  std::vector<UOp> k = kernelize({out});
  ASSERT_EQ(k.size(), 1u);
  // ASSIGN(BUFFER, KERNEL(out buffer, a, b)) reshaped to the output's shape.
  ASSERT_EQ(k[0].op(), Op::Reshape);
  EXPECT_EQ(k[0].shape(), (Shape{4, 1}));
  const UOp& assign = k[0].src(0);
  ASSERT_EQ(assign.op(), Op::Assign);
  const UOp& kernel = assign.src(1);
  ASSERT_EQ(kernel.op(), Op::Kernel);
  EXPECT_EQ(kernel.src(0), assign.src(0));
  EXPECT_EQ(kernel.src(1), base_buffer(a));
  EXPECT_EQ(kernel.src(2), base_buffer(b));
  auto& info = static_cast<const KernelInfo&>(*kernel.arg_as<std::shared_ptr<const ArgObject>>());
  EXPECT_EQ(info.num_bufs, 3u);
  EXPECT_EQ(count(info.ast, Op::ReduceAxis), 1u);
  EXPECT_EQ(info.str().rfind("<Kernel ", 0), 0u);
  EXPECT_NE(info.str().find("SINK(STORE, )"), std::string::npos);
  // Scheduling the kernelized graph (and a consumer of it) runs that kernel first, then the consumer.
  Schedule s = checked({k[0] + cst(1, {4, 1})});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].ast, info.ast);
  EXPECT_EQ(s.items[1].bufs[1], assign.src(0));
}

TEST(Schedule, KernelizeChainsKernelsThroughAssigns) {
  UOp a = buf({32, 64});
  std::vector<UOp> k = kernelize({a.reduce(Op::Max, {1}).expand({32, 64}) + a});
  ASSERT_EQ(k[0].op(), Op::Reshape);
  const UOp& kernel = k[0].src(0).src(1);
  ASSERT_EQ(kernel.num_src(), 3u);  // output, the max kernel's result, a
  EXPECT_EQ(kernel.src(1).op(), Op::Assign);
  EXPECT_EQ(kernel.src(1).src(1).op(), Op::Kernel);
}

TEST(Schedule, KernelizedGraphsScheduleAsTheOriginal) {
  UOp a = buf({32, 64}), b = buf({32, 1});
  UOp out = (a.reduce(Op::Max, {1}).expand({32, 64}) - a).reduce(Op::Add, {1}) + b;
  Schedule direct = schedule({out});
  std::vector<UOp> k = kernelize({out});
  Schedule via = checked(k);
  ASSERT_EQ(via.items.size(), direct.items.size());
  for (size_t i = 0; i < via.items.size(); i++) EXPECT_EQ(via.items[i].ast, direct.items[i].ast);
  EXPECT_TRUE(via.becomes.empty() || via.becomes[0].second.op() == Op::Reshape);
  // Kernelizing again makes no new kernels: the KERNELs are already there.
  std::vector<UOp> again = kernelize(k);
  EXPECT_EQ(again, k);
}

TEST(Schedule, SchedulingIsDeterministic) {
  auto build = [] {
    UOp a = buf({8, 128}), w = buf({128, 32});
    UOp mm = (a.reshape({8, 1, 128}).expand({8, 32, 128}) *
              w.permute({1, 0}).reshape({1, 32, 128}).expand({8, 32, 128}))
                 .reduce(Op::Add, {2});
    UOp m = mm.reduce(Op::Max, {1});
    return std::vector<UOp>{(mm - m.expand({8, 32, 1})).alu(Op::Exp2)};
  };
  Schedule s1 = schedule(build()), s2 = schedule(build());
  ASSERT_EQ(s1.items.size(), s2.items.size());
  for (size_t i = 0; i < s1.items.size(); i++) {
    EXPECT_EQ(s1.items[i].ast, s2.items[i].ast);  // interned: equal ASTs are one node
    EXPECT_EQ(ast_str(s1.items[i]), ast_str(s2.items[i]));
  }
}

TEST(Schedule, AstStrPrintsTheTree) {
  UOp a = buf({4});
  Schedule s = schedule({a + a});
  std::string str = ast_str(s.items[0]);
  EXPECT_NE(str.find("UOp(Ops.SINK"), std::string::npos);
  EXPECT_NE(str.find("Ops.LOAD"), std::string::npos);
  EXPECT_NE(str.find("ShapeTracker(views="), std::string::npos);
}

TEST(Schedule, NonTensorOpsAreRejected) { EXPECT_THROW(schedule({UOp::variable("n", 0, 4)}), Error); }

// ---------------------------------------------------------------- the folding rules, one by one

namespace {
UOp folded(const UOp& u) {
  static const PatternMatcher all = sched::fold_const_rules + sched::fold_rules + sched::fold_empty_rules;
  return graph_rewrite(u, all);
}
double const_of(const UOp& u) { return sched::const_leaf(u).const_value(); }
}  // namespace

TEST(ScheduleFold, IdentitiesOnConstantsFold) {
  UOp x = buf({4, 4}), i = buf({4, 4}, d::int32);
  EXPECT_EQ(folded(x + cst(0, {4, 4})), x);                         // x+0 -> x
  EXPECT_EQ(folded(cst(0, {4, 4}) + x), x);                         // 0+x -> x
  EXPECT_EQ(folded(x - cst(0, {4, 4})), x);                         // x-0 -> x
  EXPECT_EQ(folded(x * cst(1, {4, 4})), x);                         // x*1 -> x
  EXPECT_EQ(folded(x.alu(Op::FDiv, cst(1, {4, 4}))), x);            // x/1 -> x
  EXPECT_EQ(folded(i.alu(Op::IDiv, cst(1, {4, 4}, d::int32))), i);  // x//1 -> x
  EXPECT_EQ(const_of(folded(i * cst(0, {4, 4}, d::int32))), 0.0);   // x*0 -> 0 (ints)
  EXPECT_EQ(folded(x * cst(0, {4, 4})).op(), Op::Mul);              // not for floats
  UOp c = UOp::const_on("CPU", d::bool_, 1).reshape({1, 1}).expand({4, 4});
  EXPECT_EQ(folded(c.where(x, x + x)), x);  // where(1,t,f) -> t
  UOp m = buf({4, 4}, d::bool_);
  EXPECT_EQ(folded(m.where(x, x)), x);  // where(c,x,x) -> x
}

TEST(ScheduleFold, OpsOnConstantsFoldToOneConstant) {
  UOp r = folded((cst(2, {4, 4}) * cst(3, {4, 4})).cast(d::int32));  // op(c1,c2) -> c
  EXPECT_EQ(r, UOp::const_int_on("CPU", d::int32, 6).reshape({1, 1}).expand({4, 4}));
  // A view of a constant is the constant, in the canonical form, unless it pads.
  UOp v = cst(5, {4, 4}).permute({1, 0}).shrink({{0, 2}, {0, 4}});
  EXPECT_EQ(folded(v), cst(5, {2, 4}));
  UOp padded = UOp::const_on("CPU", d::float32, 5).reshape({1}).pad({{1, 0}});
  EXPECT_EQ(folded(padded), padded);
}

TEST(ScheduleFold, ReducesOfConstantsFold) {
  EXPECT_EQ(const_of(folded(cst(2, {4, 8}).reduce(Op::Add, {1}))), 16.0);   // sum(c) -> c*n
  EXPECT_EQ(const_of(folded(cst(2, {4, 8}).reduce(Op::Mul, {1}))), 256.0);  // prod(c) -> c**n
  EXPECT_EQ(const_of(folded(cst(2, {4, 8}).reduce(Op::Max, {1}))), 2.0);    // max(c) -> c
  EXPECT_EQ(folded(cst(2, {4, 8}).reduce(Op::Add, {1})).shape(), (Shape{4, 1}));
  EXPECT_EQ(const_of(folded(cst(3, {4, 8}, d::int8).reduce(Op::Add, {0, 1}))), 96.0);  // wraps as int8
}

TEST(ScheduleFold, ReduceRules) {
  UOp x = buf({4, 8, 1});
  EXPECT_EQ(folded(x.reduce(Op::Add, {1}).reduce(Op::Add, {0})), x.reduce(Op::Add, {0, 1}));  // r(r(x,a),b)
  EXPECT_EQ(folded(x.reduce(Op::Add, {1}).reduce(Op::Max, {0})).src(0).op(),
            Op::ReduceAxis);                     // other op: kept
  EXPECT_EQ(folded(x.reduce(Op::Add, {2})), x);  // size-1 axes
  EXPECT_EQ(folded(x.reduce(Op::Add, {1, 2})), x.reduce(Op::Add, {1}));
}

TEST(ScheduleFold, RealizePointRules) {
  UOp x = buf({4, 4});
  EXPECT_EQ(folded((x + x).detach()), x + x);                                  // detach(x) -> x
  EXPECT_EQ(folded((x + x).contiguous().contiguous()), (x + x).contiguous());  // contiguous twice -> once
  EXPECT_EQ(folded(x.contiguous()), x);                                        // contiguous(buffer) -> buffer
  EXPECT_EQ(folded(x.permute({1, 0}).contiguous()).op(), Op::Contiguous);      // a transpose is not dense
  EXPECT_EQ(folded(x.permute({1, 0}).copy_to("NULL")).src(0).op(), Op::Contiguous);  // copy(view)
  EXPECT_EQ(folded(x.reshape({16}).copy_to("NULL")).src(0).op(), Op::Reshape);       // a reshape is dense
  UOp c = folded(cst(7, {4, 4}).copy_to("NULL"));                                    // copy(c) -> c there
  EXPECT_EQ(sched::const_leaf(c).src(0), UOp::device_node("NULL"));
  EXPECT_EQ(c.shape(), (Shape{4, 4}));
}

TEST(ScheduleFold, NodesWithoutElementsAreConstants) {
  UOp e = buf({0, 4});
  EXPECT_EQ(const_of(folded(e + e)), 0.0);                         // no elements -> 0
  EXPECT_EQ(const_of(folded(e.reduce(Op::Add, {0}))), 0.0);        // sum of nothing -> 0
  EXPECT_EQ(const_of(folded(e.reduce(Op::Mul, {0}))), 1.0);        // prod of nothing -> 1
  EXPECT_EQ(const_of(folded(e.reduce(Op::Max, {0}))), -INFINITY);  // max of nothing -> -inf
  EXPECT_EQ(folded(e.reduce(Op::Max, {0})).shape(), (Shape{1, 4}));
}

// ---------------------------------------------------------------- memoized views

TEST(ScheduleViews, MemoizedViewsEqualShapeTrackerOps) {
  UOp a = buf({4, 6});
  UOp m1 = a.permute({1, 0}), m2 = m1.reshape({2, 3, 4}), m3 = m2.shrink({{0, 2}, {1, 3}, {0, 4}});
  const UOp* chain[] = {&m1, &m2, &m3};
  ShapeTracker want =
      ShapeTracker::from_shape({4, 6}).permute({1, 0}).reshape({2, 3, 4}).shrink({{0, 2}, {1, 3}, {0, 4}});
  UOp v = sched::chain_view({4, 6}, chain);
  EXPECT_EQ(st(v), want);
  EXPECT_EQ(sched::chain_view({4, 6}, chain), v);  // the same node again
  // The same ops on another buffer of that shape are the same view.
  UOp b = buf({4, 6});
  UOp n1 = b.permute({1, 0}), n2 = n1.reshape({2, 3, 4}), n3 = n2.shrink({{0, 2}, {1, 3}, {0, 4}});
  const UOp* other[] = {&n1, &n2, &n3};
  EXPECT_EQ(sched::chain_view({4, 6}, other), v);
  UOp top = sched::identity_view({2, 2, 4});
  EXPECT_EQ(st(sched::compose(v, top)), want + ShapeTracker::from_shape({2, 2, 4}));
  EXPECT_EQ(sched::compose(v, UOp()), v);
  EXPECT_EQ(st(sched::broadcast_view({3, 5})).views.back().strides, (Shape{0, 0}));
}
