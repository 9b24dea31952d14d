#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>

#include "base/error.h"
#include "core/ir/shape_tracker.h"
#include "tests/unit/error_message.h"

using namespace sluice;
using testing_errors::shape_error;

namespace {

std::vector<UOp> index_vars(const Shape& shape) {
  std::vector<UOp> v;
  for (size_t a = 0; a < shape.size(); a++)
    v.push_back(UOp::variable("i" + std::to_string(a), 0, std::max<int64_t>(shape[a] - 1, 0)));
  return v;
}

Shape unravel(int64_t flat, const Shape& shape) {
  Shape out(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    out[a] = flat % shape[a];
    flat /= shape[a];
  }
  return out;
}

// Evaluates (index, valid) of a tracker at every position, by walking the UOp graph with C semantics.
// Index arithmetic is dtypes::index (int32): an intermediate outside int32 is an error too.
class Evaluator {
 public:
  Evaluator(const UOp& idx, const UOp& valid, std::span<const UOp> vars) {
    std::vector<UOp> nodes = UOp::sink({idx, valid}).toposort();
    nodes.pop_back();  // the sink
    std::unordered_map<const UOpNode*, int> slot;
    for (const UOp& u : nodes) {
      Node n{u.op(), u.dtype(), {}, 0, -1};
      for (const UOp& s : u.src()) n.src.push_back(slot.at(s.get()));
      if (u.op() == Op::Const) n.value = u.const_int_value();
      for (size_t a = 0; a < vars.size(); a++)
        if (u == vars[a]) n.var = int(a);
      slot[u.get()] = int(nodes_.size());
      nodes_.push_back(n);
    }
    idx_ = slot.at(idx.get());
    valid_ = slot.at(valid.get());
    vals_.resize(nodes_.size());
  }

  // {index, valid} at `pos`, or an error message.
  std::pair<int64_t, bool> operator()(const Shape& pos, std::string& error) {
    for (size_t i = 0; i < nodes_.size(); i++) {
      const Node& n = nodes_[i];
      auto s = [&](int k) { return vals_[size_t(n.src[size_t(k)])]; };
      int64_t v = 0;
      switch (n.op) {
        case Op::Const: v = n.value; break;
        case Op::DefineVar:
          if (n.var < 0) error = "unknown variable";
          v = n.var < 0 ? 0 : pos[size_t(n.var)];
          break;
        case Op::Add: v = s(0) + s(1); break;
        case Op::Sub: v = s(0) - s(1); break;
        case Op::Mul: v = s(0) * s(1); break;
        case Op::IDiv:
        case Op::Mod:
          if (s(1) == 0) {
            error = "division by zero";
            break;
          }
          v = n.op == Op::IDiv ? s(0) / s(1) : s(0) % s(1);
          break;
        case Op::Max: v = std::max(s(0), s(1)); break;
        case Op::Neg: v = -s(0); break;
        case Op::CmpLT: v = s(0) < s(1); break;
        case Op::CmpNE: v = s(0) != s(1); break;
        case Op::And: v = s(0) & s(1); break;
        case Op::Or: v = s(0) | s(1); break;
        case Op::Xor: v = s(0) ^ s(1); break;
        case Op::Where: v = s(0) ? s(1) : s(2); break;
        case Op::Cast: v = n.dtype.is_bool() ? s(0) != 0 : s(0); break;
        default: error = "cannot evaluate " + std::string(op_name(n.op));
      }
      if (n.dtype == dtypes::int32 && (v < INT32_MIN || v > INT32_MAX)) error = "int32 overflow";
      vals_[i] = v;
    }
    return {vals_[size_t(idx_)], vals_[size_t(valid_)] != 0};
  }

 private:
  struct Node {
    Op op;
    DType dtype;
    std::vector<int> src;
    int64_t value;
    int var;
  };
  std::vector<Node> nodes_;
  std::vector<int64_t> vals_;
  int idx_ = 0, valid_ = 0;
};

// ---------------------------------------------------------------- brute-force reference

// The flat buffer position each element reads, -1 for padding.
struct Ref {
  Shape shape;
  std::vector<int64_t> data;
};

Ref ref_from_shape(const Shape& shape) {
  Ref r{shape, std::vector<int64_t>(size_t(prod(shape)))};
  std::iota(r.data.begin(), r.data.end(), 0);
  return r;
}

// out[pos] = in[map(pos)], or -1 where map says the position is padding.
Ref gather(const Ref& in, const Shape& out_shape, const std::function<bool(const Shape&, Shape&)>& map) {
  Ref out{out_shape, {}};
  Shape src(in.shape.size());
  for (int64_t o = 0; o < prod(out_shape); o++) {
    if (!map(unravel(o, out_shape), src)) {
      out.data.push_back(-1);
      continue;
    }
    int64_t flat = 0;
    for (size_t a = 0; a < src.size(); a++) flat = flat * in.shape[a] + src[a];
    out.data.push_back(in.data[size_t(flat)]);
  }
  return out;
}

enum class Mv { Reshape, Permute, Expand, Pad, Shrink, Flip };
struct Move {
  Mv kind;
  Shape arg;     // new shape, axes
  Bounds pairs;  // pads, shrink bounds
  std::string str() const {
    const char* names[] = {"reshape", "permute", "expand", "pad", "shrink", "flip"};
    return std::string(names[int(kind)]) +
           (pairs.empty() && kind != Mv::Pad && kind != Mv::Shrink ? tuple_str(arg) : tuple_str(pairs));
  }
};

ShapeTracker apply(const ShapeTracker& st, const Move& m) {
  switch (m.kind) {
    case Mv::Reshape: return st.reshape(m.arg);
    case Mv::Permute: return st.permute(m.arg);
    case Mv::Expand: return st.expand(m.arg);
    case Mv::Pad: return st.pad(m.pairs);
    case Mv::Shrink: return st.shrink(m.pairs);
    case Mv::Flip: return st.flip(m.arg);
  }
  return st;
}

Ref apply(const Ref& r, const Move& m) {
  const Shape& in = r.shape;
  switch (m.kind) {
    case Mv::Reshape: return Ref{m.arg, r.data};
    case Mv::Permute: {
      Shape out;
      for (int64_t a : m.arg) out.push_back(in[size_t(a)]);
      return gather(r, out, [&](const Shape& o, Shape& s) {
        for (size_t a = 0; a < o.size(); a++) s[size_t(m.arg[a])] = o[a];
        return true;
      });
    }
    case Mv::Expand:
      return gather(r, m.arg, [&](const Shape& o, Shape& s) {
        for (size_t a = 0; a < o.size(); a++) s[a] = in[a] == 1 ? 0 : o[a];
        return true;
      });
    case Mv::Pad: {
      Shape out;
      for (size_t a = 0; a < in.size(); a++) out.push_back(in[a] + m.pairs[a].first + m.pairs[a].second);
      return gather(r, out, [&](const Shape& o, Shape& s) {
        for (size_t a = 0; a < o.size(); a++) {
          s[a] = o[a] - m.pairs[a].first;
          if (s[a] < 0 || s[a] >= in[a]) return false;
        }
        return true;
      });
    }
    case Mv::Shrink: {
      Shape out;
      for (auto [b, e] : m.pairs) out.push_back(e - b);
      return gather(r, out, [&](const Shape& o, Shape& s) {
        for (size_t a = 0; a < o.size(); a++) s[a] = o[a] + m.pairs[a].first;
        return true;
      });
    }
    case Mv::Flip:
      return gather(r, in, [&](const Shape& o, Shape& s) {
        for (size_t a = 0; a < o.size(); a++) {
          bool f = std::find(m.arg.begin(), m.arg.end(), int64_t(a)) != m.arg.end();
          s[a] = f ? in[a] - 1 - o[a] : o[a];
        }
        return true;
      });
  }
  return r;
}

// ---------------------------------------------------------------- random chains

constexpr int64_t kMaxSize = 256;

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

Shape random_reshape(std::mt19937& rng, const Shape& shape) {
  int64_t total = prod(shape);
  if (total == 0) {  // any shape with a 0
    Shape out(size_t(pick(rng, 1, 3)));
    for (auto& s : out) s = pick(rng, 0, 3);
    out[size_t(pick(rng, 0, int64_t(out.size()) - 1))] = 0;
    return out;
  }
  Shape out = shape;
  switch (pick(rng, 0, 3)) {
    case 0:  // merge two adjacent axes
      if (out.size() >= 2) {
        size_t a = size_t(pick(rng, 0, int64_t(out.size()) - 2));
        out[a] *= out[a + 1];
        out.erase(out.begin() + ptrdiff_t(a) + 1);
        return out;
      }
      [[fallthrough]];
    case 1: {  // split an axis
      if (out.empty()) return {1};
      size_t a = size_t(pick(rng, 0, int64_t(out.size()) - 1));
      std::vector<int64_t> divisors;
      for (int64_t d = 1; d <= out[a]; d++)
        if (out[a] % d == 0) divisors.push_back(d);
      int64_t d = divisors[size_t(pick(rng, 0, int64_t(divisors.size()) - 1))];
      out[a] /= d;
      out.insert(out.begin() + ptrdiff_t(a), d);
      return out;
    }
    case 2: {  // any factorization into 1 to 4 axes
      Shape primes;
      for (int64_t n = total, p = 2; n > 1;) {
        if (n % p == 0) {
          primes.push_back(p);
          n /= p;
        } else {
          p++;
        }
      }
      out.assign(size_t(pick(rng, 1, 4)), 1);
      for (int64_t p : primes) out[size_t(pick(rng, 0, int64_t(out.size()) - 1))] *= p;
      return out;
    }
    default: {  // insert or drop a size-1 axis
      auto one = std::find(out.begin(), out.end(), 1);
      if (one != out.end() && pick(rng, 0, 1))
        out.erase(one);
      else
        out.insert(out.begin() + ptrdiff_t(pick(rng, 0, int64_t(out.size()))), 1);
      return out;
    }
  }
}

Move random_move(std::mt19937& rng, const Shape& shape) {
  int64_t total = prod(shape), n = int64_t(shape.size());
  int64_t kind = pick(rng, 0, 7);  // reshapes three times as often: they are what stacks views
  Move m{kind > 5 ? Mv::Reshape : Mv(kind), {}, {}};
  switch (m.kind) {
    case Mv::Reshape: m.arg = random_reshape(rng, shape); break;
    case Mv::Permute:
      m.arg.resize(shape.size());
      std::iota(m.arg.begin(), m.arg.end(), 0);
      std::shuffle(m.arg.begin(), m.arg.end(), rng);
      break;
    case Mv::Expand:
      if (std::find(shape.begin(), shape.end(), 1) == shape.end())
        return {Mv::Reshape, random_reshape(rng, shape), {}};
      m.arg = shape;
      for (auto& s : m.arg) {
        int64_t to = pick(rng, 1, 4);
        if (s == 1 && prod(m.arg) * to <= kMaxSize) s = to;
      }
      break;
    case Mv::Pad: {
      Shape out = shape;
      for (int64_t a = 0; a < n; a++) {
        std::pair<int64_t, int64_t> p{0, 0};
        if (pick(rng, 0, 1)) p = {pick(rng, 0, 2), pick(rng, 0, 2)};
        out[size_t(a)] += p.first + p.second;
        if (prod(out) > kMaxSize || total == 0) out[size_t(a)] -= p.first + p.second, p = {0, 0};
        m.pairs.push_back(p);
      }
      break;
    }
    case Mv::Shrink: {
      int64_t empty_axis = pick(rng, 0, 49) == 0 ? pick(rng, 0, n) : -1;  // rarely shrink to nothing
      for (int64_t a = 0; a < n; a++) {
        int64_t s = shape[size_t(a)];
        if (s == 0 || a == empty_axis) {
          int64_t b = pick(rng, 0, s);
          m.pairs.push_back({b, b});
          continue;
        }
        int64_t b = pick(rng, 0, s - 1);
        m.pairs.push_back({b, pick(rng, b + 1, s)});
      }
      break;
    }
    case Mv::Flip:
      for (int64_t a = 0; a < n; a++)
        if (pick(rng, 0, 1)) m.arg.push_back(a);
      std::shuffle(m.arg.begin(), m.arg.end(), rng);
      break;
  }
  return m;
}

// "" if st indexes exactly what ref holds, else the first difference.
std::string compare(const ShapeTracker& st, const Ref& ref) {
  if (st.shape() != ref.shape) return "shape " + tuple_str(st.shape()) + " != " + tuple_str(ref.shape);
  std::vector<UOp> vars = index_vars(ref.shape);
  auto [idx, valid] = st.to_indexed(vars);
  if (idx.dtype() != dtypes::index || valid.dtype() != dtypes::bool_) return "wrong dtypes";
  Evaluator eval(idx, valid, vars);
  for (int64_t o = 0; o < prod(ref.shape); o++) {
    std::string error;
    Shape pos = unravel(o, ref.shape);
    auto [i, ok] = eval(pos, error);
    int64_t want = ref.data[size_t(o)];
    if (!error.empty() || ok != (want >= 0) || (ok && i != want))
      return "at " + tuple_str(pos) + ": got (" + std::to_string(i) + ", " + (ok ? "valid" : "invalid") +
             "), want " + std::to_string(want) + (error.empty() ? "" : " (" + error + ")") + "\nidx:\n" +
             idx.str() + "\nvalid:\n" + valid.str();
  }
  return "";
}

size_t nodes(const UOp& u) { return u.toposort().size(); }

}  // namespace

// ---------------------------------------------------------------- movement ops

TEST(ShapeTracker, FromShapeIsContiguous) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3, 4});
  EXPECT_EQ(st.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(st.size(), 24);
  EXPECT_TRUE(st.contiguous());
  EXPECT_TRUE(st.consecutive());
  EXPECT_EQ(st.views.size(), 1u);
  EXPECT_TRUE(ShapeTracker::from_shape({}).contiguous());
  EXPECT_EQ(ShapeTracker::from_shape({}).size(), 1);
  EXPECT_EQ(shape_error([] { ShapeTracker::from_shape({2, -1}); }), "[from_shape] negative size in (2, -1)");
}

TEST(ShapeTracker, MovementOpsChangeTheLastView) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3});
  EXPECT_EQ(st.permute({1, 0}).views.back(), View::create({3, 2}, {1, 3}));
  EXPECT_EQ(st.reshape({3, 2, 1}).views.back(), View::create({3, 2, 1}));
  EXPECT_EQ(st.reshape({1, 2, 3}).expand({4, 2, 3}).views.back(), View::create({4, 2, 3}, {0, 3, 1}));
  EXPECT_EQ(st.pad({{1, 0}, {0, 1}}).views.back(), View::create({3, 4}, {3, 1}, -3, Bounds{{1, 3}, {0, 3}}));
  EXPECT_EQ(st.shrink({{1, 2}, {1, 3}}).views.back(), View::create({1, 2}, {3, 1}, 4));
  EXPECT_EQ(st.flip({0}).views.back(), View::create({2, 3}, {-3, 1}, 3));
  EXPECT_FALSE(st.flip({0}).consecutive());
  ShapeTracker shifted = st.shrink({{1, 2}, {0, 3}});
  EXPECT_TRUE(shifted.consecutive());
  EXPECT_FALSE(shifted.contiguous());
}

TEST(ShapeTracker, BadArgumentsThrowShapeError) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3});
  EXPECT_EQ(shape_error([&] { st.reshape({4}); }), "[reshape] cannot reshape (2, 3) to (4,)");
  EXPECT_EQ(shape_error([&] { st.reshape({-1, -6}); }), "[reshape] negative size in (-1, -6)");
  EXPECT_EQ(shape_error([&] { st.permute({1}); }),
            "[permute] (1,) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(shape_error([&] {
              st.permute({1, 1});
            }),
            "[permute] (1, 1) is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(shape_error([&] { st.expand({2, 6}); }), "[expand] cannot expand (2, 3) to (2, 6)");
  EXPECT_EQ(shape_error([&] {
              st.pad({{0, -1}, {0, 0}});
            }),
            "[pad] negative padding ((0, -1), (0, 0)) for (2, 3)");
  EXPECT_EQ(shape_error([&] { st.pad({}); }), "[pad] expected 2 (begin, end) pairs for (2, 3), got ()");
  EXPECT_EQ(shape_error([&] {
              st.shrink({{0, 2}, {2, 4}});
            }),
            "[shrink] cannot shrink (2, 3) to ((0, 2), (2, 4)): axis 1 needs 0 <= begin <= end <= 3");
  EXPECT_EQ(shape_error([&] { st.flip({3}); }), "[flip] axis 3 is out of range for (2, 3)");
  std::vector<UOp> one{UOp::variable("i0", 0, 1)};
  EXPECT_EQ(shape_error([&] { st.to_indexed(one); }), "[to_indexed] expected 2 indices for (2, 3), got 1");
  // A two-view tracker checks against its own shape.
  ShapeTracker two = st.permute({1, 0}).reshape({6});
  EXPECT_EQ(shape_error([&] { two.reshape({7}); }), "[reshape] cannot reshape (6,) to (7,)");
}

// ---------------------------------------------------------------- merging

TEST(ShapeTracker, ReshapeOfContiguousStaysOneView) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3, 4}).reshape({6, 4}).reshape({24}).reshape({4, 3, 2});
  EXPECT_EQ(st.views.size(), 1u);
  EXPECT_TRUE(st.contiguous());
}

TEST(ShapeTracker, PermuteThenReshapeThatSplitsMerges) {
  ShapeTracker st = ShapeTracker::from_shape({6, 4}).permute({1, 0}).reshape({4, 2, 3});
  ASSERT_EQ(st.views.size(), 1u);
  EXPECT_EQ(st.views[0], View::create({4, 2, 3}, {1, 12, 4}));
}

TEST(ShapeTracker, FlattenOfPermutedNeedsTwoViews) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).permute({1, 0}).reshape({6});
  ASSERT_EQ(st.views.size(), 2u);
  EXPECT_EQ(st.views[0], View::create({3, 2}, {1, 3}));
  EXPECT_EQ(st.views[1], View::create({6}));
  // Reshaping back to the permuted shape makes the top view redundant.
  ShapeTracker back = st.reshape({3, 2});
  ASSERT_EQ(back.views.size(), 1u);
  EXPECT_EQ(back.views[0], View::create({3, 2}, {1, 3}));
}

TEST(ShapeTracker, PadThenShrinkBackIsTheOriginal) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).pad({{1, 1}, {2, 0}}).shrink({{1, 3}, {2, 5}});
  EXPECT_EQ(st, ShapeTracker::from_shape({2, 3}));
}

TEST(ShapeTracker, PadThenReshapeOfUntouchedAxesStaysOneView) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3, 4}).pad({{1, 1}, {0, 0}, {0, 0}}).reshape({4, 12});
  ASSERT_EQ(st.views.size(), 1u);
  EXPECT_EQ(st.views[0], View::create({4, 12}, {12, 1}, -12, Bounds{{1, 3}, {0, 12}}));
  // Splitting the padded axis across its valid rows cannot be one view.
  EXPECT_EQ(ShapeTracker::from_shape({2}).pad({{1, 1}}).reshape({2, 2}).views.size(), 2u);
}

TEST(ShapeTracker, ExpandThenReshape) {
  ShapeTracker e = ShapeTracker::from_shape({3, 1}).expand({3, 4});
  ShapeTracker split = e.reshape({3, 2, 2});
  ASSERT_EQ(split.views.size(), 1u);
  EXPECT_EQ(split.views[0], View::create({3, 2, 2}, {1, 0, 0}));
  ShapeTracker flat = e.reshape({12});  // i // 4: not a stride
  ASSERT_EQ(flat.views.size(), 2u);
  EXPECT_EQ(flat.real_strides(), (std::vector<std::optional<int64_t>>{std::nullopt}));
}

TEST(ShapeTracker, ShrinkIntoValidRegionMergesAway) {
  // Flattening a padded row needs two views; shrinking back to the data merges them again.
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).pad({{0, 0}, {1, 1}}).reshape({10});
  ASSERT_EQ(st.views.size(), 2u);
  ShapeTracker inner = st.reshape({2, 5}).shrink({{0, 2}, {1, 4}});
  EXPECT_EQ(inner, ShapeTracker::from_shape({2, 3}));
}

TEST(ShapeTracker, SimplifyMergesBelowTheTop) {
  View permuted = View::create({2, 3}).permute({1, 0});
  ShapeTracker st({View::create({6}), permuted, View::create({6})});
  ShapeTracker s = st.simplify();
  ASSERT_EQ(s.views.size(), 2u);
  EXPECT_EQ(s.views[0], permuted);
  EXPECT_EQ(ShapeTracker({View::create({6}), View::create({2, 3})}).simplify(),
            ShapeTracker::from_shape({2, 3}));
}

TEST(ShapeTracker, AddComposesTrackers) {
  ShapeTracker a = ShapeTracker::from_shape({4, 6}).permute({1, 0});
  ShapeTracker b = ShapeTracker::from_shape({6, 4}).shrink({{1, 3}, {0, 4}});
  ShapeTracker ab = a + b;
  ASSERT_EQ(ab.views.size(), 1u);
  EXPECT_EQ(ab.views[0], View::create({2, 4}, {1, 6}, 1));
  ShapeTracker flat = a + ShapeTracker::from_shape({6, 4}).reshape({24});
  EXPECT_EQ(flat.views.size(), 2u);
  EXPECT_EQ(ShapeTracker::from_shape({6, 4}) + b, b);
}

// ---------------------------------------------------------------- index expressions

TEST(ShapeTracker, ToIndexedContiguous) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3});
  auto vars = index_vars({2, 3});
  auto [idx, valid] = st.to_indexed(vars);
  EXPECT_EQ(idx, vars[0] * 3 + vars[1]) << idx;
  EXPECT_EQ(valid, UOp::const_bool(true));
  auto [idx2, valid2] = st.to_indexed();  // default variables idx0, idx1
  EXPECT_EQ(idx2, UOp::variable("idx0", 0, 1) * 3 + UOp::variable("idx1", 0, 2)) << idx2;
}

TEST(ShapeTracker, ToIndexedPaddingIsInvalid) {
  ShapeTracker st = ShapeTracker::from_shape({4}).pad({{2, 1}});
  auto vars = index_vars({7});
  auto [idx, valid] = st.to_indexed(vars);
  Evaluator eval(idx, valid, vars);
  std::string error;
  for (int64_t i = 0; i < 7; i++) {
    auto [at, ok] = eval({i}, error);
    EXPECT_EQ(ok, i >= 2 && i < 6) << i;
    if (ok) { EXPECT_EQ(at, i - 2); }
  }
  EXPECT_EQ(error, "");
}

TEST(ShapeTracker, ToIndexedOfScalar) {
  auto [idx, valid] = ShapeTracker::from_shape({}).to_indexed();
  EXPECT_EQ(idx, UOp::const_int(dtypes::index, 0));
  EXPECT_EQ(valid, UOp::const_bool(true));
  auto [idx1, valid1] = ShapeTracker::from_shape({1}).expand({5}).to_indexed();
  EXPECT_EQ(idx1, UOp::const_int(dtypes::index, 0));
}

// Index expressions of common chains stay as small as the arithmetic they need (nodes of the UOp graph,
// variables and constants included).
TEST(ShapeTracker, IndexExpressionsAreSmall) {
  // reshape -> permute -> reshape: two views; idx0*4 + (idx1//4)*12 + idx1%4.
  ShapeTracker rpr = ShapeTracker::from_shape({6, 4}).reshape({2, 3, 4}).permute({1, 0, 2}).reshape({3, 8});
  ASSERT_EQ(rpr.views.size(), 2u);
  auto [idx, valid] = rpr.to_indexed();
  EXPECT_LE(nodes(idx), 10u) << idx;
  EXPECT_EQ(valid, UOp::const_bool(true));
  // permute -> flatten: idx0//2 + (idx0%2)*3.
  auto [idx1, valid1] = ShapeTracker::from_shape({2, 3}).permute({1, 0}).reshape({6}).to_indexed();
  EXPECT_LE(nodes(idx1), 7u) << idx1;
  // pad -> shrink inside the data: one view, no validity; idx0*4 + idx1 + 1.
  auto [idx2, valid2] =
      ShapeTracker::from_shape({4, 4}).pad({{1, 1}, {1, 1}}).shrink({{1, 4}, {2, 5}}).to_indexed();
  EXPECT_LE(nodes(idx2), 7u) << idx2;
  EXPECT_EQ(valid2, UOp::const_bool(true));
  // pad -> shrink that keeps one padded edge: one bound, !(idx0 < 1).
  auto [idx3, valid3] =
      ShapeTracker::from_shape({4, 4}).pad({{1, 1}, {0, 0}}).shrink({{0, 3}, {0, 4}}).to_indexed();
  EXPECT_LE(nodes(idx3), 7u) << idx3;
  EXPECT_LE(nodes(valid3), 5u) << valid3;
  // expand -> reshape: idx0//4.
  auto [idx4, valid4] = ShapeTracker::from_shape({3, 1}).expand({3, 4}).reshape({12}).to_indexed();
  EXPECT_LE(nodes(idx4), 3u) << idx4;
  EXPECT_EQ(valid4, UOp::const_bool(true));
  // pad -> flatten: two views; (idx0//5)*3 + idx0%5 - 1, valid where 1 <= idx0%5 < 4.
  auto [idx5, valid5] = ShapeTracker::from_shape({2, 3}).pad({{0, 0}, {1, 1}}).reshape({10}).to_indexed();
  EXPECT_LE(nodes(idx5), 9u) << idx5;
  EXPECT_LE(nodes(valid5), 10u) << valid5;
}

TEST(ShapeTracker, RealStrides) {
  using Strides = std::vector<std::optional<int64_t>>;
  ShapeTracker st = ShapeTracker::from_shape({4, 6});
  EXPECT_EQ(st.real_strides(), (Strides{6, 1}));
  EXPECT_EQ(st.permute({1, 0}).real_strides(), (Strides{1, 6}));
  ShapeTracker padded = st.pad({{1, 1}, {0, 0}});
  EXPECT_EQ(padded.real_strides(), (Strides{std::nullopt, 1}));
  EXPECT_EQ(padded.real_strides(/*ignore_valid=*/true), (Strides{6, 1}));
  EXPECT_EQ(padded.unit_stride_axes(), (std::vector<int64_t>{1}));
  // Two views: (3, 8) over a permuted (3, 2, 4); axis 1 goes through i1//4 and i1%4.
  ShapeTracker rpr = ShapeTracker::from_shape({6, 4}).reshape({2, 3, 4}).permute({1, 0, 2}).reshape({3, 8});
  EXPECT_EQ(rpr.real_strides(), (Strides{4, std::nullopt}));
  EXPECT_EQ(rpr.unit_stride_axes(), std::vector<int64_t>{});
  // Broadcast axes have stride 0.
  EXPECT_EQ(ShapeTracker::from_shape({3, 1}).expand({3, 4}).real_strides(), (Strides{1, 0}));
}

TEST(ShapeTracker, IsAUOpArg) {
  ShapeTracker st = ShapeTracker::from_shape({2, 3}).permute({1, 0});
  UOp a = UOp::make(Op::View, dtypes::void_, {}, std::make_shared<const ShapeTracker>(st));
  UOp b = UOp::make(Op::View, dtypes::void_, {}, std::make_shared<const ShapeTracker>(st));
  UOp c = UOp::make(Op::View, dtypes::void_, {},
                    std::make_shared<const ShapeTracker>(ShapeTracker::from_shape({3, 2})));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(
      st.str(),
      "ShapeTracker(views=(View(shape=(3, 2), strides=(1, 3), offset=0, mask=None, contiguous=False),))");
  EXPECT_EQ(arg_str(a.arg()), st.str());
}

// ---------------------------------------------------------------- property test

// Thousands of random movement chains, each checked element by element against the brute-force
// reference: as built, simplified, and composed from two trackers with `+`.
TEST(ShapeTracker, RandomChainsMatchBruteForce) {
  std::mt19937 rng(20240601);
  int multi_view = 0, masked = 0, failures = 0;
  for (int chain = 0; chain < 3000 && failures < 5; chain++) {
    Shape base;
    do {
      base.assign(size_t(pick(rng, 1, 4)), 0);
      for (auto& s : base) s = pick(rng, 1, 5);
    } while (prod(base) > 128);
    std::vector<Move> moves;
    Ref ref = ref_from_shape(base);
    ShapeTracker st = ShapeTracker::from_shape(base);
    int n = int(pick(rng, 1, 6)), split = int(pick(rng, 0, n));
    ShapeTracker first = st, second = st;  // moves [0, split) and [split, n)
    for (int i = 0; i < n; i++) {
      if (i == split) first = st, second = ShapeTracker::from_shape(st.shape());
      moves.push_back(random_move(rng, ref.shape));
      ref = apply(ref, moves.back());
      st = apply(st, moves.back());
      second = apply(second, moves.back());
    }
    if (split == n) first = st, second = ShapeTracker::from_shape(st.shape());
    multi_view += st.views.size() > 1;
    masked += std::any_of(st.views.begin(), st.views.end(), [](const View& v) { return v.mask.has_value(); });

    std::string chain_str = tuple_str(base);
    for (const Move& m : moves) chain_str += "." + m.str();
    for (auto& [what, t] : {std::pair<const char*, ShapeTracker>{"built", st},
                            {"simplified", st.simplify()},
                            {"composed", first + second}}) {
      std::string diff = compare(t, ref);
      if (diff.empty()) continue;
      ADD_FAILURE() << "chain " << chain << " " << chain_str << " (" << what << ", " << t.str() << "):\n"
                    << diff;
      failures++;
    }
  }
  // The chains must reach the interesting cases.
  EXPECT_GT(multi_view, 250);
  EXPECT_GT(masked, 600);
}
