#include <gtest/gtest.h>

#include <functional>

#include "base/error.h"
#include "core/ir/uop.h"
#include "tests/unit/error_message.h"

using namespace sluice;
namespace d = sluice::dtypes;
using testing_errors::shape_error;

TEST(TensorGraph, BuffersAreDistinctAndNameTheirDevice) {
  UOp a = UOp::new_buffer("CPU", d::float32, 6), b = UOp::new_buffer("CPU", d::float32, 6);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.shape(), Shape{6});
  EXPECT_EQ(a.device(), "CPU");
  EXPECT_NE(a.buffer_identity().id(), b.buffer_identity().id());
  EXPECT_EQ(a.src(0), UOp::device_node("CPU"));  // devices intern: one node per name
}

TEST(TensorGraph, PayloadLivesWithTheBuffer) {
  std::weak_ptr<int> seen;
  {
    UOp a = UOp::new_buffer("CPU", d::int32, 4);
    auto p = std::make_shared<int>(7);
    seen = p;
    a.buffer_identity().set_payload(p);
    UOp user = (a.reshape({2, 2}) + a.reshape({2, 2}));
    EXPECT_FALSE(seen.expired());
  }
  EXPECT_TRUE(seen.expired());  // the last graph holding the buffer is gone, and so is its memory
}

TEST(TensorGraph, ShapesOfMovementOps) {
  UOp a = UOp::new_buffer("CPU", d::float32, 24).reshape({2, 3, 4});
  EXPECT_EQ(a.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(a.permute({2, 0, 1}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(a.pad({{1, 0}, {0, 2}, {1, 1}}).shape(), (Shape{3, 5, 6}));
  EXPECT_EQ(a.shrink({{0, 1}, {1, 3}, {0, 4}}).shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(a.flip({0, 2}).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(a.reshape({2, 3, 1, 4}).expand({2, 3, 5, 4}).shape(), (Shape{2, 3, 5, 4}));
  EXPECT_EQ(a.reduce(Op::Add, {1}).shape(), (Shape{2, 1, 4}));
  EXPECT_EQ((a + a).cast(d::int32).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(a.contiguous().copy_to("NULL").shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(a.numel(), 24);
  EXPECT_EQ(UOp::const_on("CPU", d::float32, 1).shape(), Shape{});
}

TEST(TensorGraph, NoOpMovementsReturnTheSameNode) {
  UOp a = UOp::new_buffer("CPU", d::float32, 6).reshape({2, 3});
  EXPECT_EQ(a.reshape({2, 3}), a);
  EXPECT_EQ(a.permute({0, 1}), a);
  EXPECT_EQ(a.expand({2, 3}), a);
  EXPECT_EQ(a.pad({{0, 0}, {0, 0}}), a);
  EXPECT_EQ(a.shrink({{0, 2}, {0, 3}}), a);
  EXPECT_EQ(a.flip({}), a);
}

TEST(TensorGraph, BadMovementArgumentsNameTheOpAndValues) {
  UOp a = UOp::new_buffer("CPU", d::float32, 6).reshape({2, 3});
  EXPECT_EQ(shape_error([&] { a.reshape({4}); }), "[reshape] cannot reshape (2, 3) to (4,)");
  EXPECT_EQ(shape_error([&] {
              a.permute({0, 0});
            }),
            "[permute] (0, 0) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(shape_error([&] { a.expand({4, 3}); }), "[expand] cannot expand (2, 3) to (4, 3)");
  EXPECT_EQ(shape_error([&] {
              a.pad({{-1, 0}, {0, 0}});
            }),
            "[pad] negative padding ((-1, 0), (0, 0)) for (2, 3)");
  EXPECT_EQ(shape_error([&] {
              a.shrink({{0, 3}, {0, 3}});
            }),
            "[shrink] cannot shrink (2, 3) to ((0, 3), (0, 3)): axis 0 needs 0 <= begin <= end <= 2");
  EXPECT_EQ(shape_error([&] { a.flip({2}); }), "[flip] axis 2 is out of range for (2, 3)");
  EXPECT_EQ(shape_error([&] { a.reduce(Op::Add, {0, 0}); }), "[reduce] bad axes (0, 0) for shape (2, 3)");
  EXPECT_THROW(a.reduce(Op::Sub, {0}), ValueError);
  EXPECT_THROW(UOp::new_buffer("CPU", d::float32, -1), ShapeError);
  EXPECT_THROW(UOp::make(Op::Range, d::int32, {UOp::const_int(d::int32, 4)}).shape(),
               ShapeError);  // kernel-level
}

TEST(TensorGraph, AssignChecksShapeAndDtype) {
  UOp a = UOp::new_buffer("CPU", d::float32, 4);
  EXPECT_EQ(a.assign(a + a).op(), Op::Assign);
  EXPECT_THROW(a.assign(UOp::new_buffer("CPU", d::float32, 5)), ShapeError);
  EXPECT_THROW(a.assign(UOp::new_buffer("CPU", d::int32, 4)), DTypeError);
}

TEST(TensorGraph, ShapeOfAMillionOpChainDoesNotRecurse) {
  UOp a = UOp::new_buffer("CPU", d::float32, 4);
  for (int i = 0; i < 1000000; i++) a = a.alu(Op::Neg);
  EXPECT_EQ(a.shape(), Shape{4});
}

TEST(TensorGraph, FirstTagWins) {
  UOp a = UOp::new_buffer("CPU", d::float32, 4);
  UOp r = (a + a).tagged("add").tagged("relu");
  EXPECT_STREQ(r.tag(), "add");
  EXPECT_STREQ((a + a).tag(), "add");  // the same node
  EXPECT_EQ(a.tag(), nullptr);
}
