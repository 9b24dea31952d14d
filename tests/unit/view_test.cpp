#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "base/error.h"
#include "core/ir/view.h"
#include "tests/unit/error_message.h"

using namespace sluice;
using testing_errors::shape_error;

namespace {

void expect_view(const View& v, const Shape& shape, const Shape& strides, int64_t offset,
                 const std::optional<Bounds>& mask = std::nullopt) {
  EXPECT_EQ(v.shape, shape) << v.str();
  EXPECT_EQ(v.strides, strides) << v.str();
  EXPECT_EQ(v.offset, offset) << v.str();
  EXPECT_EQ(v.mask, mask) << v.str();
}

}  // namespace

TEST(View, StridesForShapeAreRowMajorWithZeroOnSizeOne) {
  EXPECT_EQ(strides_for_shape({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(strides_for_shape({2, 1, 3}), (Shape{3, 0, 1}));
  EXPECT_EQ(strides_for_shape({}), Shape{});
}

TEST(View, TupleStrIsPythonStyle) {
  EXPECT_EQ(tuple_str(Shape{2, 3}), "(2, 3)");
  EXPECT_EQ(tuple_str(Shape{4}), "(4,)");
  EXPECT_EQ(tuple_str(Shape{}), "()");
  EXPECT_EQ(tuple_str(Bounds{{0, 1}}), "((0, 1),)");
  EXPECT_EQ(tuple_str(Bounds{{0, 1}, {2, 3}}), "((0, 1), (2, 3))");
}

TEST(View, CreateCanonicalizes) {
  View v = View::create({2, 1, 3});
  expect_view(v, {2, 1, 3}, {3, 0, 1}, 0);
  EXPECT_TRUE(v.contiguous);
  EXPECT_EQ(View::create({2, 1, 3}, {3, 7, 1}), v);  // size-1 axes get stride 0
  EXPECT_EQ(View::create({2, 3}, {}, 0, Bounds{{0, 2}, {0, 3}}).mask, std::nullopt);  // full mask dropped
  EXPECT_TRUE(View::create({2, 3}, {}, 0, Bounds{{0, 2}, {0, 3}}).contiguous);
  // Nothing valid: all such views are the same.
  expect_view(View::create({2, 3}, {3, 1}, 4, Bounds{{0, 2}, {1, 1}}), {2, 3}, {0, 0}, 0,
              Bounds{{0, 0}, {0, 0}});
  // One valid element on an axis: the axis never moves the index.
  expect_view(View::create({4, 3}, {3, 1}, 5, Bounds{{2, 3}, {0, 2}}), {4, 3}, {0, 1}, 11,
              Bounds{{2, 3}, {0, 2}});
  // A size-0 view is contiguous whatever it was built from.
  View z = View::create({2, 0, 3}, {5, 5, 5}, 7);
  expect_view(z, {2, 0, 3}, {0, 0, 0}, 0);
  EXPECT_TRUE(z.contiguous);
  EXPECT_FALSE(View::create({2, 3}, {1, 2}).contiguous);
  EXPECT_FALSE(View::create({2, 3}, {}, 1).contiguous);
  EXPECT_EQ(shape_error([] { View::create({2, -1}); }), "[create] negative size in (2, -1)");
}

TEST(View, ReshapeContiguousStaysContiguous) {
  auto v = View::create({2, 3, 4}).reshape({6, 4});
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, View::create({6, 4}));
  EXPECT_EQ(View::create({0, 3}).reshape({3, 0}), View::create({3, 0}));
}

TEST(View, ReshapePermutedSplitsButDoesNotMerge) {
  View p = View::create({6, 4}).permute({1, 0});  // (4, 6) strides (1, 4)
  auto split = p.reshape({4, 2, 3});
  ASSERT_TRUE(split);
  expect_view(*split, {4, 2, 3}, {1, 12, 4}, 0);
  auto ones = View::create({2, 3}).permute({1, 0}).reshape({1, 3, 2, 1});
  ASSERT_TRUE(ones);
  expect_view(*ones, {1, 3, 2, 1}, {0, 1, 3, 0}, 0);
  EXPECT_FALSE(p.reshape({24}));  // flattening across the permuted axes needs a second view
  EXPECT_FALSE(p.reshape({8, 3}));
}

TEST(View, ReshapeExpandedSplitsTheBroadcastAxis) {
  View e = View::create({3, 1}).expand({3, 4});
  auto v = e.reshape({3, 2, 2});
  ASSERT_TRUE(v);
  expect_view(*v, {3, 2, 2}, {1, 0, 0}, 0);
  EXPECT_FALSE(e.reshape({12}));
}

TEST(View, ReshapeMaskedKeepsUntouchedAxes) {
  View p = View::create({2, 3, 4}).pad({{1, 1}, {0, 0}, {0, 0}});  // (4, 3, 4)
  auto v = p.reshape({4, 12});
  ASSERT_TRUE(v);
  expect_view(*v, {4, 12}, {12, 1}, -12, Bounds{{1, 3}, {0, 12}});
  EXPECT_FALSE(p.reshape({2, 2, 3, 4}));  // rows 1 and 2 of 4 are not a box in (2, 2)
  // Rows 2 and 3 of 4 are: the outer half.
  auto w = View::create({2, 3, 4}).pad({{2, 0}, {0, 0}, {0, 0}}).reshape({2, 2, 3, 4});
  ASSERT_TRUE(w);
  expect_view(*w, {2, 2, 3, 4}, {0, 12, 4, 1}, 0, Bounds{{1, 2}, {0, 2}, {0, 3}, {0, 4}});
  // Masked down to nothing: any shape of nothing, but a 0-d view has no axis to carry the mask.
  View none = View::create({2}).pad({{2, 2}}).shrink({{0, 2}});
  EXPECT_EQ(none.reshape({1, 2}), View::create({1, 2}, {}, 0, Bounds{{0, 0}, {0, 0}}));
  EXPECT_FALSE(View::create({1}).pad({{1, 0}}).shrink({{0, 1}}).reshape({}));
}

TEST(View, ReshapeRejectsBadShapes) {
  EXPECT_EQ(shape_error([] {
              View::create({2, 3}).reshape({4});
            }),
            "[reshape] cannot reshape (2, 3) to (4,)");
  EXPECT_EQ(shape_error([] { View::create({6}).reshape({-2, -3}); }), "[reshape] negative size in (-2, -3)");
}

TEST(View, Permute) {
  View v = View::create({2, 3, 4}).permute({2, 0, 1});
  expect_view(v, {4, 2, 3}, {1, 12, 4}, 0);
  EXPECT_FALSE(v.contiguous);
  View m = View::create({2, 3}).pad({{1, 0}, {0, 2}}).permute({1, 0});
  expect_view(m, {5, 3}, {1, 3}, -3, Bounds{{0, 3}, {1, 3}});
  EXPECT_EQ(View::create({2, 3}).permute({0, 1}), View::create({2, 3}));
}

TEST(View, PermuteRejectsNonPermutations) {
  View v = View::create({2, 3});
  EXPECT_EQ(shape_error([&] { v.permute({0}); }),
            "[permute] (0,) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(shape_error([&] {
              v.permute({0, 0});
            }),
            "[permute] (0, 0) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(shape_error([&] {
              v.permute({0, 2});
            }),
            "[permute] (0, 2) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(shape_error([&] {
              v.permute({-1, 0});
            }),
            "[permute] (-1, 0) is not a permutation of the axes of (2, 3)");
}

TEST(View, Expand) {
  expect_view(View::create({3, 1}).expand({3, 4}), {3, 4}, {1, 0}, 0);
  // A masked size-1 axis broadcasts its validity.
  View m = View::create({1, 3}).pad({{0, 0}, {1, 0}}).expand({5, 4});
  expect_view(m, {5, 4}, {0, 1}, -1, Bounds{{0, 5}, {1, 4}});
  EXPECT_EQ(View::create({1, 2}).expand({0, 2}), View::create({0, 2}));
}

TEST(View, ExpandRejectsNonBroadcasts) {
  View v = View::create({3, 1});
  EXPECT_EQ(shape_error([&] { v.expand({4, 4}); }), "[expand] cannot expand (3, 1) to (4, 4)");
  EXPECT_EQ(shape_error([&] { v.expand({3}); }), "[expand] cannot expand (3, 1) to (3,)");
  EXPECT_EQ(shape_error([&] { v.expand({3, -1}); }), "[expand] cannot expand (3, 1) to (3, -1)");
}

TEST(View, Pad) {
  expect_view(View::create({2, 3}).pad({{1, 0}, {0, 2}}), {3, 5}, {3, 1}, -3, Bounds{{1, 3}, {0, 3}});
  EXPECT_EQ(View::create({2, 3}).pad({{0, 0}, {0, 0}}), View::create({2, 3}));
}

TEST(View, PadRejectsBadPairs) {
  View v = View::create({2, 3});
  EXPECT_EQ(shape_error([&] {
              v.pad({{-1, 0}, {0, 0}});
            }),
            "[pad] negative padding ((-1, 0), (0, 0)) for (2, 3)");
  EXPECT_EQ(shape_error([&] {
              v.pad({{1, 1}});
            }),
            "[pad] expected 2 (begin, end) pairs for (2, 3), got ((1, 1),)");
}

TEST(View, Shrink) {
  expect_view(View::create({4, 5}).shrink({{1, 3}, {2, 5}}), {2, 3}, {5, 1}, 7);
  // Shrinking a padded view keeps only the part of the mask inside.
  View p = View::create({2, 3}).pad({{1, 1}, {0, 0}});
  expect_view(p.shrink({{0, 2}, {0, 3}}), {2, 3}, {0, 1}, 0, Bounds{{1, 2}, {0, 3}});
  EXPECT_EQ(p.shrink({{1, 3}, {0, 3}}), View::create({2, 3}));
  expect_view(p.shrink({{3, 4}, {0, 3}}), {1, 3}, {0, 0}, 0, Bounds{{0, 0}, {0, 0}});  // padding only
  EXPECT_EQ(View::create({4}).shrink({{2, 2}}), View::create({0}));
}

TEST(View, ShrinkRejectsOutOfRange) {
  View v = View::create({4, 5});
  EXPECT_EQ(shape_error([&] {
              v.shrink({{0, 5}, {0, 5}});
            }),
            "[shrink] cannot shrink (4, 5) to ((0, 5), (0, 5)): axis 0 needs 0 <= begin <= end <= 4");
  EXPECT_EQ(shape_error([&] {
              v.shrink({{0, 4}, {3, 2}});
            }),
            "[shrink] cannot shrink (4, 5) to ((0, 4), (3, 2)): axis 1 needs 0 <= begin <= end <= 5");
  EXPECT_EQ(shape_error([&] {
              v.shrink({{-1, 4}, {0, 5}});
            }),
            "[shrink] cannot shrink (4, 5) to ((-1, 4), (0, 5)): axis 0 needs 0 <= begin <= end <= 4");
  EXPECT_EQ(shape_error([&] {
              v.shrink({{0, 4}});
            }),
            "[shrink] expected 2 (begin, end) pairs for (4, 5), got ((0, 4),)");
}

TEST(View, Flip) {
  expect_view(View::create({2, 3}).flip({1}), {2, 3}, {3, -1}, 2);
  expect_view(View::create({2, 3}).flip({1, 0}), {2, 3}, {-3, -1}, 5);
  expect_view(View::create({2, 3}).pad({{1, 0}, {0, 0}}).flip({0}), {3, 3}, {-3, 1}, 3,
              Bounds{{0, 2}, {0, 3}});
  EXPECT_EQ(View::create({2, 3}).flip({0}).flip({0}), View::create({2, 3}));
}

TEST(View, FlipRejectsBadAxes) {
  View v = View::create({2, 3});
  EXPECT_EQ(shape_error([&] { v.flip({2}); }), "[flip] axis 2 is out of range for (2, 3)");
  EXPECT_EQ(shape_error([&] { v.flip({-1}); }), "[flip] axis -1 is out of range for (2, 3)");
  EXPECT_EQ(shape_error([&] { v.flip({0, 0}); }), "[flip] axis 0 appears twice in (0, 0)");
}

TEST(View, MinifyMergesStridedAxes) {
  expect_view(View::create({2, 3, 4}).minify(), {24}, {1}, 0);
  expect_view(View::create({2, 3, 4}).permute({1, 0, 2}).minify(), {3, 2, 4}, {4, 12, 1}, 0);
  expect_view(View::create({3, 1}).expand({3, 4}).reshape({3, 2, 2})->minify(), {3, 4}, {1, 0}, 0);
}

TEST(View, MergeOverContiguousIsTheTop) {
  View top = View::create({2, 3}).permute({1, 0});
  EXPECT_EQ(View::create({6}) + top, top);
  View bottom = View::create({2, 3}).flip({1});
  EXPECT_EQ(bottom + View::create({2, 3}), bottom);
}

TEST(View, MergeProjectsStrides) {
  // (6, 4) transposed, then rows 1..2 of it: one strided view.
  View bottom = View::create({4, 6}).permute({1, 0});
  View top = View::create({6, 4}).shrink({{1, 3}, {0, 4}});
  auto m = bottom + top;
  ASSERT_TRUE(m);
  expect_view(*m, {2, 4}, {1, 6}, 1);
}

TEST(View, MergeThroughMasks) {
  // Padding below, shrunk away on top: the original view.
  View padded = View::create({2, 3}).pad({{1, 1}, {0, 0}});
  auto back = padded + View::create({4, 3}).shrink({{1, 3}, {0, 3}});
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, View::create({2, 3}));
  // Padding on top of a transposed view: the padding carries over.
  View t = View::create({3, 2}).permute({1, 0});
  auto m = t + View::create({2, 3}).pad({{0, 0}, {1, 1}});
  ASSERT_TRUE(m);
  expect_view(*m, {2, 5}, {1, 2}, -2, Bounds{{0, 2}, {1, 4}});
}

TEST(View, MergeFailsWhereTwoViewsAreNeeded) {
  View t = View::create({2, 3}).permute({1, 0});  // (3, 2) strides (1, 3)
  EXPECT_FALSE(t + View::create({6}));
  View padded = View::create({2}).pad({{1, 1}});  // (4,) valid on [1, 3)
  EXPECT_FALSE(padded + View::create({2, 2}));
}

TEST(View, StrPrintsEveryField) {
  EXPECT_EQ(View::create({2, 3}).str(),
            "View(shape=(2, 3), strides=(3, 1), offset=0, mask=None, contiguous=True)");
  EXPECT_EQ(View::create({2}).pad({{1, 0}}).str(),
            "View(shape=(3,), strides=(1,), offset=-1, mask=((1, 3),), contiguous=False)");
  EXPECT_EQ(View::create({2, 3}).hash(), View::create({2, 3}).hash());
  EXPECT_NE(View::create({2, 3}).hash(), View::create({3, 2}).hash());
}
