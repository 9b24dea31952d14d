// ONNX ops: linear quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
// and quantized matmul and convolution (op.h). real = (q - zero_point) * scale; quantizing rounds half to
// even and saturates to the integer type. Integer products accumulate in int32.
#include <algorithm>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// A scale or zero point against x: one value for the whole tensor, a 1-D tensor of one value per index of
// `axis`, or (blocked, opset 21) one value per block_size indices of `axis` in a tensor of x's rank.
Tensor per_axis(OpContext& c, const Tensor& t, const Tensor& x, int64_t axis, int64_t block = 0) {
  if (t.numel() == 1 && block == 0) return t.reshape({});
  SLUICE_CHECK_IN(ShapeError, c.op(), axis >= -x.ndim() && axis < x.ndim())
      << "axis " << axis << " is out of range for rank " << x.ndim();
  if (axis < 0) axis += x.ndim();
  const int64_t size = x.shape(axis);
  if (block > 0) {
    SLUICE_CHECK_IN(ShapeError, c.op(), t.ndim() == x.ndim() && t.shape(axis) == (size + block - 1) / block)
        << "blocked " << t.str() << " does not cover " << x.str() << " in blocks of " << block << " on axis "
        << axis;
    Shape wide = t.shape();
    wide.insert(wide.begin() + axis + 1, block);
    Shape flat = t.shape();
    flat[size_t(axis)] *= block;
    std::vector<Slice> cut(size_t(axis + 1));
    cut.back().stop = size;
    return t.unsqueeze(axis + 1).expand(wide).reshape(flat).slice(cut);
  }
  SLUICE_CHECK_IN(ShapeError, c.op(), t.ndim() == 1 && t.shape(0) == size)
      << "a per-axis " << t.str() << " needs one value per index of axis " << axis << " of " << x.str();
  Shape s(size_t(x.ndim()), 1);
  s[size_t(axis)] = size;
  return t.reshape(s);
}

// Real values rounded half to even and saturated into `dtype`.
Tensor saturate(const Tensor& q, DType dtype) { return q.round().clip(dtype.min(), dtype.max()).cast(dtype); }

Values x_quantize(OpContext& c) {
  const Tensor &x = c.in(0), &scale = c.in(1);
  std::optional<Tensor> zp = c.opt(2);
  const int64_t axis = c.attr_int("axis", 1), block = c.attr_int("block_size", 0);
  const DType out = zp ? zp->dtype() : c.attr_dtype("output_dtype", dtypes::uint8);
  SLUICE_CHECK_IN(DTypeError, c.op(), out.is_int())
      << "sluice quantizes to integer types, not " << out.name();
  Tensor q = (x.cast(dtypes::float32) / per_axis(c, scale, x, axis, block).cast(dtypes::float32)).round();
  if (zp) q = q + per_axis(c, *zp, x, axis, block).cast(dtypes::float32);
  return {saturate(q, out)};
}

Values x_dequantize(OpContext& c) {
  const Tensor &x = c.in(0), &scale = c.in(1);
  const int64_t axis = c.attr_int("axis", 1), block = c.attr_int("block_size", 0);
  Tensor v = x.cast(dtypes::int32);
  if (auto zp = c.opt(2)) v = v - per_axis(c, *zp, x, axis, block).cast(dtypes::int32);
  return {(v.cast(dtypes::float32) * per_axis(c, scale, x, axis, block).cast(dtypes::float32))
              .cast(scale.dtype())};
}

// uint8 over the range of x widened to hold 0: scale = (max - min) / 255, zero point where 0 lands.
Values x_dynamic_quantize(OpContext& c) {
  const Tensor x = c.in(0).cast(dtypes::float32);
  Tensor lo = x.min().minimum(0), hi = x.max().maximum(0);
  Tensor scale = (hi - lo) / 255;
  Tensor zp = saturate((0 - lo) / scale, dtypes::uint8);
  return {saturate((x / scale).round() + zp.cast(dtypes::float32), dtypes::uint8), scale, zp};
}

// q - zero_point in int32. A matmul's left zero point may hold one value per row (its second-to-last
// axis); any other shape broadcasts as it is.
Tensor centered(const Tensor& q, const std::optional<Tensor>& zp, bool rows = false) {
  Tensor v = q.cast(dtypes::int32);
  if (!zp) return v;
  Tensor z = zp->cast(dtypes::int32);
  if (z.numel() == 1)
    z = z.reshape({});
  else if (rows && z.ndim() == 1)
    z = z.unsqueeze(-1);
  return v - z;
}

Tensor int_matmul(const Tensor& a, const std::optional<Tensor>& a_zp, const Tensor& b,
                  const std::optional<Tensor>& b_zp) {
  return centered(a, a_zp, true).matmul(centered(b, b_zp), dtypes::int32);
}

// ConvInteger's and QLinearConv's geometry attributes as Tensor::conv2d options: ONNX pads are all
// begins then all ends; auto_pad SAME_* pads to ceil(in / stride) outputs, the odd pixel at the end
// (UPPER) or the start (LOWER).
ConvOptions conv_options(OpContext& c, const Tensor& x, const Tensor& w) {
  const size_t dims = size_t(w.ndim() - 2);
  ConvOptions o;
  o.groups = c.attr_int("group", 1);
  o.stride = c.attr_ints("strides", Shape(dims, 1));
  o.dilation = c.attr_ints("dilations", Shape(dims, 1));
  SLUICE_CHECK_IN(ValueError, c.op(), o.stride.size() == dims && o.dilation.size() == dims)
      << "strides and dilations need " << dims << " values";
  const std::string auto_pad = c.attr_str("auto_pad", "NOTSET");
  Shape pads = c.attr_ints("pads", Shape(2 * dims, 0));
  SLUICE_CHECK_IN(ValueError, c.op(), pads.size() == 2 * dims) << "pads needs " << 2 * dims << " values";
  SLUICE_CHECK_IN(
      ValueError, c.op(),
      auto_pad == "NOTSET" || auto_pad == "VALID" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
      << "auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, got '" << auto_pad << "'";
  if (auto_pad == "VALID") std::fill(pads.begin(), pads.end(), 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const bool upper = auto_pad == "SAME_UPPER";
    for (size_t d = 0; d < dims; ++d) {
      const int64_t in = x.shape(int64_t(2 + d)), s = o.stride[d];
      const int64_t span = (w.shape(int64_t(2 + d)) - 1) * o.dilation[d] + 1;
      const int64_t total = std::max<int64_t>(0, ((in + s - 1) / s - 1) * s + span - in);
      pads[d] = upper ? total / 2 : total - total / 2;
      pads[dims + d] = total - pads[d];
    }
  }
  o.padding.clear();
  for (size_t d = 0; d < dims; ++d) o.padding.push_back(pads[d]), o.padding.push_back(pads[dims + d]);
  return o;
}

// w - zero_point with one zero point per output channel (axis 0) or one for all.
Tensor centered_weight(OpContext& c, const Tensor& w, const std::optional<Tensor>& zp) {
  if (!zp || zp->numel() == 1) return centered(w, zp);
  return w.cast(dtypes::int32) - per_axis(c, *zp, w, 0).cast(dtypes::int32);
}

Tensor int_conv(OpContext& c, const Tensor& x, const std::optional<Tensor>& x_zp, const Tensor& w,
                const std::optional<Tensor>& w_zp) {
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() >= 3 && w.ndim() == x.ndim())
      << "needs x (N, C, ...) and w (M, C / group, ...) of one rank, got " << x.str() << " and " << w.str();
  return centered(x, x_zp).conv2d(centered_weight(c, w, w_zp), conv_options(c, x, w));
}

// An int32 accumulator back to the output's integer type: acc * (in_scale * w_scale / out_scale), rounded
// half to even, plus the output zero point.
Tensor requantize(const Tensor& acc, const Tensor& multiplier, const Tensor& zp) {
  Tensor q = acc.cast(dtypes::float32) * multiplier;
  return saturate(q.round() + zp.cast(dtypes::float32).reshape({}), zp.dtype());
}

Tensor as_float(const Tensor& t) { return t.cast(dtypes::float32); }

Values x_qlinear_matmul(OpContext& c) {
  const Tensor &a = c.in(0), &b = c.in(3), &y_zp = c.in(7);
  SLUICE_CHECK_IN(ShapeError, c.op(), a.ndim() >= 2 && b.ndim() >= 2)
      << "needs matrices, got " << a.str() << " and " << b.str();
  // a's scale may hold one value per row, b's one per column
  Tensor a_scale = as_float(c.in(1)), b_scale = as_float(c.in(4));
  a_scale = a_scale.numel() == 1 ? a_scale.reshape({}) : a_scale.reshape({-1, 1});
  b_scale = b_scale.numel() == 1 ? b_scale.reshape({}) : b_scale;
  Tensor multiplier = a_scale * b_scale / as_float(c.in(6)).reshape({});
  return {requantize(int_matmul(a, c.in(2), b, c.in(5)), multiplier, y_zp)};
}

Values x_qlinear_conv(OpContext& c) {
  const Tensor &x = c.in(0), &w = c.in(3), &y_zp = c.in(7);
  Tensor acc = int_conv(c, x, c.in(2), w, c.in(5));
  if (auto bias = c.opt(8)) acc = acc + per_axis(c, *bias, acc, 1).cast(dtypes::int32);
  Tensor w_scale = as_float(c.in(4));
  w_scale = w_scale.numel() == 1 ? w_scale.reshape({}) : per_axis(c, w_scale, acc, 1);
  Tensor multiplier = as_float(c.in(1)).reshape({}) * w_scale / as_float(c.in(6)).reshape({});
  return {requantize(acc, multiplier, y_zp)};
}

const OpDef kOps[] = {
    {"QuantizeLinear", 10, x_quantize},
    {"DequantizeLinear", 10, x_dequantize},
    {"DynamicQuantizeLinear", 11, x_dynamic_quantize},
    {"MatMulInteger", 10,
     [](OpContext& c) -> Values { return {int_matmul(c.in(0), c.opt(2), c.in(1), c.opt(3))}; }},
    {"ConvInteger", 10,
     [](OpContext& c) -> Values { return {int_conv(c, c.in(0), c.opt(2), c.in(1), c.opt(3))}; }},
    {"QLinearMatMul", 10, x_qlinear_matmul},
    {"QLinearConv", 10, x_qlinear_conv},
};

}  // namespace

std::span<const OpDef> quant_ops() { return kOps; }

}  // namespace sluice::onnx
