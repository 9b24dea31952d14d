// Neural-network building blocks that are not convolutions: resizing, normalization, attention.
#include <cmath>
#include <limits>

#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

// Each resized axis gathers its source positions (two neighbours blended by lerp for Linear).
Tensor Tensor::interpolate(const Shape& size, InterpolateMode mode, bool align_corners) const {
  OpScope scope("interpolate");
  SLUICE_CHECK_IN(ValueError, "interpolate",
                  !size.empty() && int64_t(size.size()) <= ndim() &&
                      std::all_of(size.begin(), size.end(), [](int64_t s) { return s > 0; }))
      << "size " << tuple_str(size) << " does not fit " << tuple_str(shape());
  SLUICE_CHECK_IN(ValueError, "interpolate", !align_corners || mode == InterpolateMode::Linear)
      << "align_corners needs linear mode";
  Tensor x = *this;
  Shape expand = shape();
  // Source positions in float32 (half would lose integers past 2048), float64 for float64 tensors.
  DType pos = dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  for (int64_t i = -1; i >= -int64_t(size.size()); i--) {
    auto a = size_t(ndim() + i);
    int64_t out = size[size.size() + size_t(i)], ac = align_corners;
    double scale = out - ac == 0 ? 0 : double(shape()[a] - ac) / double(out - ac);
    Tensor arr = detail::index_ramp({out}, 0, dtypes::int32, device_).cast(pos);
    Shape view(size_t(ndim()), 1);
    view[a] = expand[a] = out;
    if (mode == InterpolateMode::Linear) {
      Tensor index = (align_corners ? arr * scale : (arr + 0.5) * scale - 0.5).clip(0, shape()[a] - 1);
      Tensor lo = index.floor(), hi = index.ceil();
      auto spread = [&](const Tensor& t) { return t.reshape(view).expand(expand); };
      x = x.gather(int64_t(a), spread(lo.cast(dtypes::int32)))
              .lerp(x.gather(int64_t(a), spread(hi.cast(dtypes::int32))), spread(index - lo));
    } else {
      Tensor index = mode == InterpolateMode::NearestExact ? (arr + 0.5) * scale : arr * scale;
      x = x.gather(int64_t(a),
                   index.cast(dtypes::int32).clip(std::nullopt, shape()[a] - 1).reshape(view).expand(expand));
    }
  }
  return x.cast(dtype());
}

Tensor Tensor::layernorm(int64_t axis, double eps) const {
  OpScope scope("layernorm");
  Tensor y = *this - mean({axis}, true);
  return y * ((y * y).mean({axis}, true) + eps).rsqrt();
}

Tensor Tensor::rmsnorm(int64_t axis, double eps) const {
  OpScope scope("rmsnorm");
  return *this * (square().mean({axis}, true) + eps).rsqrt();
}

Tensor Tensor::batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                         const Tensor& mean, const Tensor& invstd, int64_t axis) const {
  OpScope scope("batchnorm");
  auto a = size_t(detail::resolve_axis("batchnorm", axis, ndim()));
  Shape view(size_t(ndim()), 1);
  view[a] = shape()[a];
  auto channel = [&](const Tensor& t, const char* what) {
    SLUICE_CHECK_IN(ShapeError, "batchnorm", t.numel() == shape()[a])
        << what << " " << tuple_str(t.shape()) << " does not match " << shape()[a] << " channels of "
        << tuple_str(shape());
    return t.reshape(view);
  };
  Tensor x = *this - channel(mean, "mean");
  if (weight) x = x * channel(*weight, "weight");
  x = x * channel(invstd, "invstd");
  return bias ? x + channel(*bias, "bias") : x;
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                            const std::optional<Tensor>& attn_mask, bool is_causal) const {
  OpScope scope("scaled_dot_product_attention");
  SLUICE_CHECK_IN(ValueError, "scaled_dot_product_attention", !(is_causal && attn_mask))
      << "takes a mask or is_causal, not both";
  SLUICE_CHECK_IN(ShapeError, "scaled_dot_product_attention", ndim() >= 2 && key.ndim() >= 2)
      << "query " << tuple_str(shape()) << " and key " << tuple_str(key.shape())
      << " need at least 2 dimensions";
  std::optional<Tensor> mask = attn_mask;
  if (is_causal) mask = ones({shape(-2), key.shape(-2)}, dtypes::bool_, device_).tril();
  if (mask && mask->dtype().is_bool()) mask = mask->where(0.0, -std::numeric_limits<double>::infinity());
  DType acc = least_upper_dtype({dtype(), key.dtype(), dtypes::float32});
  Tensor qk = matmul(key.transpose(-2, -1), acc) / std::sqrt(double(shape(-1)));
  return (mask ? qk + *mask : qk).softmax(-1).cast(dtype()).matmul(value);
}

}  // namespace sluice
