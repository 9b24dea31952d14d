// ONNX ops: constants, shapes, reshaping, joining and splitting, slicing, padding, and the other ops that
// move elements without computing them (op.h). Shapes, axes, pads and starts are small host values; the
// ops that produce shapes (Shape, Size, Range over host scalars) give host-backed tensors, so shape
// arithmetic downstream (Shape -> Gather -> Concat -> Reshape) folds on the host and never becomes a kernel.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// axis in [-rank, rank) as a non-negative axis.
int64_t norm_axis(const OpContext& c, int64_t axis, int64_t rank) {
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -rank && axis < rank)
      << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

// Element k of a host array as a Number of its kind, so a tensor op keeps it exact in the tensor's dtype.
Number number_at(const eval::HostArray& a, int64_t k) {
  if (a.dtype.is_float()) return a.f[size_t(k)];
  if (a.dtype.is_bool()) return a.i[size_t(k)] != 0;
  return a.i[size_t(k)];
}

// ---------------------------------------------------------------- constants and shapes

Values x_constant(OpContext& c) {
  if (c.has_attr("value")) return {c.attr_tensor("value")};
  if (c.has_attr("value_int")) return {c.tensor_of({c.attr_int("value_int")}, {})};
  if (c.has_attr("value_ints")) return {c.tensor_of(c.attr_ints("value_ints"))};
  if (c.has_attr("value_float"))
    return {c.tensor_of(eval::HostArray::from_values(dtypes::float32, {}, {c.attr_float("value_float")}))};
  if (c.has_attr("value_floats")) {
    std::vector<double> v = c.attr_floats("value_floats");
    return {c.tensor_of(eval::HostArray::from_values(dtypes::float32, {int64_t(v.size())}, v))};
  }
  SLUICE_CHECK_IN(ValueError, c.op(), false)
      << (c.has_attr("sparse_value") ? "sparse_value is not supported"
          : c.has_attr("value_string") || c.has_attr("value_strings")
              ? "string tensors are not supported"
              : "needs one of the attributes value, value_float(s), value_int(s)");
  return {};
}

Values x_constant_of_shape(OpContext& c) {
  const Shape shape = c.ints(0);
  for (int64_t s : shape)
    SLUICE_CHECK_IN(ShapeError, c.op(), s >= 0) << "negative size in " << tuple_str(shape);
  if (!c.has_attr("value")) return {Tensor::zeros(shape, dtypes::float32, c.device())};
  const Tensor value = c.attr_tensor("value");
  SLUICE_CHECK_IN(ValueError, c.op(), value.numel() == 1)
      << "value must hold one element, got shape " << tuple_str(value.shape());
  // A constant (not the attribute's buffer broadcast), so kernels that read it fold it in.
  return {Tensor::full(shape, number_at(c.host(value), 0), value.dtype(), c.device())};
}

Values x_shape(OpContext& c) {  // opset 15: the dims in [start, end), both clamped to [0, rank]
  const Shape& s = c.in(0).shape();
  const auto rank = int64_t(s.size());
  auto clamped = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamped(c.attr_int("start", 0)),
                end = std::max(start, clamped(c.attr_int("end", rank)));
  return {c.tensor_of(Shape(s.begin() + start, s.begin() + end))};
}

// Range(start, limit, delta) of host scalars, computed on the host as a shape would be: ints exactly.
Values x_range(OpContext& c) {
  eval::HostArray start = c.host(0), limit = c.host(1), delta = c.host(2);
  for (const eval::HostArray* a : {&start, &limit, &delta})
    SLUICE_CHECK_IN(ShapeError, c.op(), a->numel() == 1) << "start, limit and delta must be scalars";
  const DType dt = c.in(0).dtype();
  SLUICE_CHECK_IN(DTypeError, c.op(), c.in(1).dtype() == dt && c.in(2).dtype() == dt)
      << "start, limit and delta must have one dtype, got " << dt.name() << ", " << c.in(1).dtype().name()
      << ", " << c.in(2).dtype().name();
  // The values are computed on the host, as a shape is: a range too long for that is an error.
  constexpr int64_t kMaxRange = int64_t(1) << 28;
  if (dt.is_float()) {
    const double s = start.f[0], d = delta.f[0], count = std::ceil((limit.f[0] - s) / d);
    SLUICE_CHECK_IN(ValueError, c.op(), d != 0) << "delta must not be 0";
    SLUICE_CHECK_IN(ValueError, c.op(), !std::isnan(count) && count <= double(kMaxRange))
        << "Range(" << s << ", " << limit.f[0] << ", " << d << ") has " << count << " elements, over "
        << kMaxRange;
    const int64_t n = count > 0 ? int64_t(count) : 0;
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = s + double(i) * d;
    return {c.tensor_of(eval::HostArray::from_values(dt, {n}, v))};
  }
  const int64_t s = start.i[0], d = delta.i[0];
  SLUICE_CHECK_IN(ValueError, c.op(), d != 0) << "delta must not be 0";
  int64_t span = 0;
  SLUICE_CHECK_IN(ValueError, c.op(),
                  !__builtin_sub_overflow(limit.i[0], s, &span) && !(span == INT64_MIN && d == -1))
      << "Range(" << s << ", " << limit.i[0] << ", " << d << ") overflows int64";
  // ceil(span / d): the truncated quotient, plus one when a remainder is left and the quotient is positive
  const int64_t n = std::max<int64_t>(0, span / d + (span % d != 0 && (span < 0) == (d < 0)));
  SLUICE_CHECK_IN(ValueError, c.op(), n <= kMaxRange)
      << "Range(" << s << ", " << limit.i[0] << ", " << d << ") has " << n << " elements, over " << kMaxRange;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = s + i * d;
  return {c.tensor_of(eval::HostArray::from_ints(dt, {n}, v))};
}

// ---------------------------------------------------------------- reshaping

// A 0 copies the input's dim (unless allowzero), one -1 takes what is left.
Values x_reshape(OpContext& c) {
  const Tensor& x = c.in(0);
  const Shape want = c.opset() < 5 ? c.attr_ints("shape") : c.ints(1);
  const bool allowzero = c.attr_int("allowzero", 0) != 0;
  Shape out = want;
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == -1) {
      SLUICE_CHECK_IN(ShapeError, c.op(), !infer) << "shape " << tuple_str(want) << " has more than one -1";
      infer = i;
      continue;
    }
    SLUICE_CHECK_IN(ShapeError, c.op(), want[i] >= 0) << "invalid size in shape " << tuple_str(want);
    if (want[i] == 0 && !allowzero) {
      SLUICE_CHECK_IN(ShapeError, c.op(), int64_t(i) < x.ndim())
          << "shape " << tuple_str(want) << " copies dim " << i << " that " << tuple_str(x.shape())
          << " lacks";
      out[i] = x.shape(int64_t(i));
    }
    known *= out[i];
  }
  if (infer) {
    SLUICE_CHECK_IN(ShapeError, c.op(), known != 0 && x.numel() % known == 0)
        << "cannot reshape " << tuple_str(x.shape()) << " to " << tuple_str(want);
    out[*infer] = x.numel() / known;
  }
  SLUICE_CHECK_IN(ShapeError, c.op(), prod(out) == x.numel())
      << "cannot reshape " << tuple_str(x.shape()) << " to " << tuple_str(want);
  return {x.reshape(out)};
}

Values x_flatten(OpContext& c) {  // 2-D: the dims before axis, the dims from it on
  const Tensor& x = c.in(0);
  int64_t axis = c.attr_int("axis", 1);
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -x.ndim() && axis <= x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  if (axis < 0) axis += x.ndim();
  const Shape& s = x.shape();
  return {x.reshape({prod(Shape(s.begin(), s.begin() + axis)), prod(Shape(s.begin() + axis, s.end()))})};
}

Values x_transpose(OpContext& c) {  // no perm: the axes reversed
  const Tensor& x = c.in(0);
  Shape reversed(size_t(x.ndim()));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  const Shape perm = c.attr_ints("perm", reversed);
  SLUICE_CHECK_IN(ShapeError, c.op(), int64_t(perm.size()) == x.ndim())
      << "perm " << tuple_str(perm) << " does not fit rank " << x.ndim();
  return {x.permute(perm)};
}

Values x_squeeze(OpContext& c) {  // axes: an attribute before opset 13, then input 1; none: every size-1 axis
  const Tensor& x = c.in(0);
  const Shape axes = c.opset() < 13 ? c.attr_ints("axes", {}) : c.has(1) ? c.ints(1) : Shape{};
  if (axes.empty()) return {x.squeeze()};
  std::vector<bool> drop(size_t(x.ndim()));
  for (int64_t a : axes) {
    const int64_t d = norm_axis(c, a, x.ndim());
    SLUICE_CHECK_IN(ShapeError, c.op(), x.shape(d) == 1)
        << "axis " << a << " of " << tuple_str(x.shape()) << " does not have size 1";
    drop[size_t(d)] = true;
  }
  Shape out;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!drop[size_t(d)]) out.push_back(x.shape(d));
  return {x.reshape(out)};
}

Values x_unsqueeze(OpContext& c) {  // axes (as for Squeeze, but required) index the output's dims
  const Tensor& x = c.in(0);
  const Shape axes = c.opset() < 13 ? c.attr_ints("axes") : c.ints(1);
  const int64_t rank = x.ndim() + int64_t(axes.size());
  std::vector<bool> added(static_cast<size_t>(rank));
  for (int64_t a : axes) {
    const int64_t d = norm_axis(c, a, rank);
    SLUICE_CHECK_IN(ShapeError, c.op(), !added[size_t(d)])
        << "axis " << a << " repeats in " << tuple_str(axes);
    added[size_t(d)] = true;
  }
  Shape out;
  for (int64_t d = 0, k = 0; d < rank; ++d) out.push_back(added[size_t(d)] ? 1 : x.shape(k++));
  return {x.reshape(out)};
}

Values x_depth_to_space(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t b = c.attr_int("blocksize");
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() == 4 && b > 0 && x.shape(1) % (b * b) == 0)
      << "needs (N, C, H, W) with C divisible by blocksize^2 = " << b * b << ", got " << tuple_str(x.shape());
  const int64_t n = x.shape(0), ch = x.shape(1) / (b * b), h = x.shape(2), w = x.shape(3);
  const std::string mode = c.attr_str("mode", "DCR");
  SLUICE_CHECK_IN(ValueError, c.op(), mode == "DCR" || mode == "CRD")
      << "mode must be DCR or CRD, got " << mode;
  // DCR: channels are (block row, block col, C); CRD: (C, block row, block col)
  Tensor t = mode == "DCR" ? x.reshape({n, b, b, ch, h, w}).permute({0, 3, 4, 1, 5, 2})
                           : x.reshape({n, ch, b, b, h, w}).permute({0, 1, 4, 2, 5, 3});
  return {t.reshape({n, ch, h * b, w * b})};
}

Values x_space_to_depth(OpContext& c) {  // the inverse of DepthToSpace in DCR mode
  const Tensor& x = c.in(0);
  const int64_t b = c.attr_int("blocksize");
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() == 4 && b > 0 && x.shape(2) % b == 0 && x.shape(3) % b == 0)
      << "needs (N, C, H, W) with H and W divisible by blocksize " << b << ", got " << tuple_str(x.shape());
  const int64_t n = x.shape(0), ch = x.shape(1), h = x.shape(2) / b, w = x.shape(3) / b;
  return {x.reshape({n, ch, h, b, w, b}).permute({0, 3, 5, 1, 2, 4}).reshape({n, ch * b * b, h, w})};
}

// ---------------------------------------------------------------- joining and splitting

Values x_concat(OpContext& c) {
  SLUICE_CHECK_IN(ValueError, c.op(), c.size() > 0) << "needs at least one input";
  // axis was optional, default 1, before opset 4
  const int64_t axis =
      norm_axis(c, c.opset() < 4 ? c.attr_int("axis", 1) : c.attr_int("axis"), c.in(0).ndim());
  // Empty inputs add nothing; left out, no kernel reads their (empty) buffers, which OpenCL rejects. When
  // all are empty, so is the result, and no kernel runs.
  std::vector<Tensor> all, parts;
  for (size_t i = 0; i < c.size(); ++i) {
    all.push_back(c.in(i));
    if (all.back().numel() > 0) parts.push_back(all.back());
  }
  return {bounded_cat(parts.empty() ? all : parts, axis)};
}

// Sizes from the `split` attribute (before opset 13) or input; else num_outputs (opset 18) or one piece
// per output, of equal size but for a smaller last one.
Values x_split(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = norm_axis(c, c.attr_int("axis", 0), x.ndim()), n = x.shape(axis);
  const auto outputs = int64_t(c.node().outputs.size());
  Shape sizes = c.has_attr("split") ? c.attr_ints("split") : c.has(1) ? c.ints(1) : Shape{};
  if (sizes.empty()) {
    const int64_t parts = c.attr_int("num_outputs", outputs);
    SLUICE_CHECK_IN(ValueError, c.op(), parts > 0) << "needs at least one output";
    const int64_t piece = (n + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::clamp<int64_t>(n - k * piece, 0, piece));
  }
  SLUICE_CHECK_IN(ValueError, c.op(), int64_t(sizes.size()) == outputs)
      << sizes.size() << " split sizes for " << outputs << " outputs";
  std::vector<Tensor> pieces = x.split(sizes, axis);
  return Values(pieces.begin(), pieces.end());
}

// starts, ends, axes as attributes before opset 10, then as inputs with steps. Out-of-range starts and
// ends (INT64_MAX for "to the end") clamp as Python's slices do.
Values x_slice(OpContext& c) {
  const Tensor& x = c.in(0);
  const bool attrs = c.opset() < 10;
  const Shape starts = attrs ? c.attr_ints("starts") : c.ints(1),
              ends = attrs ? c.attr_ints("ends") : c.ints(2);
  Shape axes = attrs ? c.attr_ints("axes", {}) : c.has(3) ? c.ints(3) : Shape{};
  Shape steps = !attrs && c.has(4) ? c.ints(4) : Shape(starts.size(), 1);
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  SLUICE_CHECK_IN(
      ValueError, c.op(),
      ends.size() == starts.size() && axes.size() == starts.size() && steps.size() == starts.size())
      << "starts " << tuple_str(starts) << ", ends " << tuple_str(ends) << ", axes " << tuple_str(axes)
      << " and steps " << tuple_str(steps) << " differ in length";
  std::vector<Slice> slices(size_t(x.ndim()));
  std::vector<bool> seen(size_t(x.ndim()));
  for (size_t k = 0; k < axes.size(); ++k) {
    const auto a = size_t(norm_axis(c, axes[k], x.ndim()));
    SLUICE_CHECK_IN(ValueError, c.op(), !seen[a] && steps[k] != 0)
        << "axes " << tuple_str(axes) << " repeat or steps " << tuple_str(steps) << " hold 0";
    seen[a] = true;
    slices[a] = Slice{starts[k], ends[k], steps[k]};
  }
  return {x.slice(slices)};
}

// Bidirectional broadcast: the result has the broadcast of x's shape and the given one.
Values x_expand(OpContext& c) {
  const Tensor& x = c.in(0);
  const Shape want = c.ints(1);
  const size_t rank = std::max(want.size(), size_t(x.ndim()));
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i + x.ndim() < rank ? 1 : x.shape()[i + x.ndim() - rank];
    const int64_t b = i + want.size() < rank ? 1 : want[i + want.size() - rank];
    SLUICE_CHECK_IN(ShapeError, c.op(), b >= 0 && (a == b || a == 1 || b == 1))
        << "cannot expand " << tuple_str(x.shape()) << " to " << tuple_str(want);
    out[i] = a == 1 ? b : a;
  }
  return {x.expand(out)};
}

Values x_tile(OpContext& c) {
  const Tensor& x = c.in(0);
  const Shape repeats = c.ints(1);
  SLUICE_CHECK_IN(ShapeError, c.op(), int64_t(repeats.size()) == x.ndim())
      << "repeats " << tuple_str(repeats) << " do not fit rank " << x.ndim();
  return {x.repeat(repeats)};
}

// ---------------------------------------------------------------- padding

PadMode pad_mode(const OpContext& c, const std::string& mode) {
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Replicate;
  SLUICE_CHECK_IN(ValueError, c.op(), mode == "wrap")
      << "mode must be constant, reflect, edge or wrap, got " << mode;
  return PadMode::Circular;
}

// pads are (begins..., ends...) per axis: the attribute `paddings` (opset 1), `pads` (opsets 2-10), then
// input 1 with the fill value as input 2 and, from opset 18, the axes they apply to as input 3. Negative
// pads crop.
Values x_pad(OpContext& c) {
  const Tensor& x = c.in(0);
  const bool attrs = c.opset() < 11;
  const Shape pads = attrs ? c.attr_ints(c.opset() < 2 ? "paddings" : "pads") : c.ints(1);
  Number value = attrs ? Number(c.attr_float("value", 0.0)) : c.has(2) ? number_at(c.host(2), 0) : Number(0);
  Shape axes = !attrs && c.has(3) ? c.ints(3) : Shape{};
  if (axes.empty()) {
    axes.resize(size_t(x.ndim()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  SLUICE_CHECK_IN(ValueError, c.op(), pads.size() == 2 * axes.size())
      << "pads " << tuple_str(pads) << " need two values for each of the " << axes.size() << " axes";
  Bounds grow(size_t(x.ndim()), {0, 0}), keep;
  for (size_t k = 0; k < axes.size(); ++k)
    grow[size_t(norm_axis(c, axes[k], x.ndim()))] = {pads[k], pads[k + axes.size()]};
  const PadMode mode = pad_mode(c, c.attr_str("mode", "constant"));
  if (mode == PadMode::Constant) return {x.pad(grow, value)};
  // The other modes take the crop first, then pad what is left.
  for (int64_t d = 0; d < x.ndim(); ++d) {
    auto& [before, after] = grow[size_t(d)];
    keep.push_back({std::max<int64_t>(0, -before), x.shape(d) - std::max<int64_t>(0, -after)});
    SLUICE_CHECK_IN(ShapeError, c.op(), keep.back().first <= keep.back().second)
        << "pads " << tuple_str(pads) << " crop more than all of " << tuple_str(x.shape());
    before = std::max<int64_t>(0, before), after = std::max<int64_t>(0, after);
  }
  return {x.shrink(keep).pad(grow, 0, mode)};
}

// ---------------------------------------------------------------- matrices and sequences

Values x_eye_like(OpContext& c) {  // ones on the diagonal k (above the main one when k > 0)
  const Tensor& x = c.in(0);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() == 2) << "needs a 2-D input, got " << tuple_str(x.shape());
  const int64_t r = x.shape(0), cols = x.shape(1), k = c.attr_int("k", 0);
  const Tensor eye = Tensor::eye(r, cols, c.attr_dtype("dtype", x.dtype()), c.device());
  // Shifting the columns right by k: pad on the left and keep the first `cols`, or the reverse for k < 0.
  if (k >= 0) return {eye.pad({{0, 0}, {std::min(k, cols), 0}}).shrink({{0, r}, {0, cols}})};
  const int64_t shift = std::min(-k, cols);
  return {eye.pad({{0, 0}, {0, shift}}).shrink({{0, r}, {shift, cols + shift}})};
}

Values x_trilu(OpContext& c) {
  const Tensor& x = c.in(0);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 2) << "needs at least 2 dims, got " << tuple_str(x.shape());
  const Shape k = c.has(1) ? c.ints(1) : Shape{0};
  SLUICE_CHECK_IN(ValueError, c.op(), k.size() == 1) << "k must be one value, got " << tuple_str(k);
  return {c.attr_int("upper", 1) ? x.triu(k[0]) : x.tril(k[0])};
}

// Each batch entry b reverses its first sequence_lens[b] steps along the time axis: step t reads step
// len - 1 - t there, itself after. A gather along the time axis with that index.
Values x_reverse_sequence(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t time = norm_axis(c, c.attr_int("time_axis", 0), x.ndim()),
                batch = norm_axis(c, c.attr_int("batch_axis", 1), x.ndim());
  SLUICE_CHECK_IN(ValueError, c.op(), time != batch) << "time_axis and batch_axis are both " << time;
  const Tensor& lens = c.in(1);
  SLUICE_CHECK_IN(ShapeError, c.op(), lens.ndim() == 1 && lens.numel() == x.shape(batch))
      << "sequence_lens " << tuple_str(lens.shape()) << " must hold one length per batch entry of "
      << tuple_str(x.shape());
  Shape time_view(size_t(x.ndim()), 1), batch_view(size_t(x.ndim()), 1);
  time_view[size_t(time)] = x.shape(time);
  batch_view[size_t(batch)] = x.shape(batch);
  Tensor t = Tensor::arange(0, x.shape(time), 1, dtypes::int64, c.device()).reshape(time_view);
  Tensor len = lens.cast(dtypes::int64).reshape(batch_view);
  return {x.gather(time, t.lt(len).where(len - 1 - t, t).expand(x.shape()))};
}

const OpDef kOps[] = {
    {"Constant", 1, x_constant},
    {"ConstantOfShape", 9, x_constant_of_shape},
    {"Shape", 1, x_shape},
    {"Size", 1, [](OpContext& c) -> Values { return {c.tensor_of({c.in(0).numel()}, {})}; }},
    {"Range", 11, x_range},
    {"Reshape", 1, x_reshape},
    {"Flatten", 1, x_flatten},
    {"Transpose", 1, x_transpose},
    {"Squeeze", 1, x_squeeze},
    {"Unsqueeze", 1, x_unsqueeze},
    {"DepthToSpace", 1, x_depth_to_space},
    {"SpaceToDepth", 1, x_space_to_depth},
    {"Concat", 1, x_concat},
    {"Split", 1, x_split},
    {"Slice", 1, x_slice},
    {"Expand", 8, x_expand},
    {"Tile", 6, x_tile},
    {"Pad", 1, x_pad},
    {"EyeLike", 9, x_eye_like},
    {"Trilu", 14, x_trilu},
    {"ReverseSequence", 10, x_reverse_sequence},
};

}  // namespace

std::span<const OpDef> movement_ops() { return kOps; }

}  // namespace sluice::onnx
