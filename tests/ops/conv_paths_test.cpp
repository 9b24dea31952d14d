// The fast paths of the convolutions (runtime/tensor_conv.cpp) against plain loops on the host, on every
// device present: a large padded conv (it reads a copy of its padded input; a depthwise one, padded along
// its rows only, reads the rest of the padding through a test), strided convs (space-to-depth
// into a stride-1 conv), a depthwise strided conv, strided conv1ds (an STFT-shaped one copies its phases
// channels last) and transposed convs whose kernel equals their stride. The ONNX backend suite covers the
// general paths with its own outputs; its cases are too small to take these.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "host_values.h"
#include "runtime/device.h"
#include "runtime/tensor.h"
#include "test_devices.h"

namespace sluice {
namespace {

using testing_values::expect_close;
using testing_values::values;

struct Conv {  // a 2-d convolution's sizes; conv1d is H = 1
  int64_t bs, cin, h, w, cout, kh, kw, groups = 1, sh = 1, sw = 1, top = 0, left = 0, bottom = 0, right = 0;
};

// out[n, co, y, x] = bias[co] + sum over the group's channels and taps of in * weight, zero outside.
std::vector<double> naive_conv(const Conv& c, const std::vector<float>& in, const std::vector<float>& wt,
                               const std::vector<float>& bias, int64_t oh, int64_t ow) {
  const int64_t gin = c.cin / c.groups, gout = c.cout / c.groups;
  std::vector<double> out(size_t(c.bs * c.cout * oh * ow));
  for (int64_t n = 0; n < c.bs; ++n)
    for (int64_t co = 0; co < c.cout; ++co)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = bias[size_t(co)];
          for (int64_t ci = 0; ci < gin; ++ci)
            for (int64_t i = 0; i < c.kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t iy = y * c.sh + i - c.top, ix = x * c.sw + j - c.left,
                              ch = co / gout * gin + ci;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                acc += double(in[size_t(((n * c.cin + ch) * c.h + iy) * c.w + ix)]) *
                       wt[size_t(((co * gin + ci) * c.kh + i) * c.kw + j)];
              }
          out[size_t(((n * c.cout + co) * oh + y) * ow + x)] = acc;
        }
  return out;
}

class ConvPaths : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const DeviceInfo& d : list_devices())
      if (d.name == GetParam() && !d.available) GTEST_SKIP() << d.name << ": " << d.reason;
  }
  void check(const Conv& c, bool one_d = false) {
    const std::string& dev = GetParam();
    std::vector<float> in = values(c.bs * c.cin * c.h * c.w, 1),
                       wt = values(c.cout * c.cin / c.groups * c.kh * c.kw, 2), bias = values(c.cout, 3);
    const int64_t oh = (c.h + c.top + c.bottom - c.kh) / c.sh + 1,
                  ow = (c.w + c.left + c.right - c.kw) / c.sw + 1;
    Shape xs{c.bs, c.cin, c.h, c.w}, ws{c.cout, c.cin / c.groups, c.kh, c.kw};
    ConvOptions o{.bias = Tensor::from(bias, {c.cout}, dev),
                  .groups = c.groups,
                  .stride = {c.sh, c.sw},
                  .padding = {c.top, c.bottom, c.left, c.right}};
    if (one_d) {
      xs = {c.bs, c.cin, c.w}, ws = {c.cout, c.cin / c.groups, c.kw};
      o.stride = {c.sw}, o.padding = {c.left, c.right};
    }
    Tensor y = Tensor::from(in, xs, dev).conv2d(Tensor::from(wt, ws, dev), o);
    expect_close(y.to_vector<float>(), naive_conv(c, in, wt, bias, oh, ow), dev);
  }
  void transposed(int64_t pad, int64_t extra);
};

// One case per line.
// clang-format off
TEST_P(ConvPaths, LargePaddedConv) { check({.bs = 1, .cin = 16, .h = 48, .w = 40, .cout = 16, .kh = 3, .kw = 3, .top = 1, .left = 1, .bottom = 1, .right = 1}); }
TEST_P(ConvPaths, StridedConvWithUnevenKernelStrideAndPads) { check({.bs = 2, .cin = 6, .h = 67, .w = 53, .cout = 24, .kh = 5, .kw = 4, .sh = 2, .sw = 3, .top = 2, .left = 0, .bottom = 1, .right = 1}); }
TEST_P(ConvPaths, LargePaddedDepthwiseConvWithUnevenPads) { check({.bs = 2, .cin = 32, .h = 8, .w = 96, .cout = 32, .kh = 5, .kw = 5, .groups = 32, .top = 2, .left = 1, .bottom = 1, .right = 3}); }
TEST_P(ConvPaths, DepthwiseStridedConv) { check({.bs = 1, .cin = 64, .h = 100, .w = 80, .cout = 64, .kh = 3, .kw = 3, .groups = 64, .sh = 2, .sw = 2, .top = 1, .left = 1, .bottom = 1, .right = 1}); }
TEST_P(ConvPaths, StridedConv1d) { check({.bs = 2, .cin = 8, .h = 1, .w = 4001, .cout = 16, .kh = 1, .kw = 5, .sw = 3, .left = 2, .right = 2}, true); }
TEST_P(ConvPaths, StftShapedConv1d) { check({.bs = 1, .cin = 1, .h = 1, .w = 640, .cout = 258, .kh = 1, .kw = 256, .sw = 128, .left = 64, .right = 64}, true); }
// clang-format on

// A transposed conv with kernel = stride scatters each input pixel into its own output block:
// out[n, co, y * s + i - pad, x * s + j - pad] += in[n, ci, y, x] * w[ci, co, i, j].
TEST_P(ConvPaths, TransposedConvWithKernelEqualToStride) {
  for (auto [pad, extra] : {std::pair<int64_t, int64_t>{1, 1}, {0, 1}, {1, 0}}) transposed(pad, extra);
}

void ConvPaths::transposed(int64_t pad, int64_t extra) {
  const std::string& dev = GetParam();
  const int64_t bs = 2, cin = 6, h = 9, w = 11, cout = 4, s = 2;
  std::vector<float> in = values(bs * cin * h * w, 4), wt = values(cin * cout * s * s, 5),
                     bias = values(cout, 6);
  const int64_t oh = h * s - 2 * pad + extra, ow = w * s - 2 * pad + extra;
  std::vector<double> want(size_t(bs * cout * oh * ow));
  for (int64_t n = 0; n < bs; ++n)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = bias[size_t(co)];
          const int64_t iy = (y + pad) / s, ix = (x + pad) / s, i = (y + pad) % s, j = (x + pad) % s;
          if (iy < h && ix < w)
            for (int64_t ci = 0; ci < cin; ++ci)
              acc += double(in[size_t(((n * cin + ci) * h + iy) * w + ix)]) *
                     wt[size_t(((ci * cout + co) * s + i) * s + j)];
          want[size_t(((n * cout + co) * oh + y) * ow + x)] = acc;
        }
  Tensor y = Tensor::from(in, {bs, cin, h, w}, dev)
                 .conv_transpose2d(Tensor::from(wt, {cin, cout, s, s}, dev),
                                   {.bias = Tensor::from(bias, {cout}, dev),
                                    .stride = {s},
                                    .padding = {pad},
                                    .output_padding = {extra}});
  EXPECT_EQ(y.shape(), (Shape{bs, cout, oh, ow}));
  expect_close(y.to_vector<float>(), want,
               dev + " pad " + std::to_string(pad) + " output_padding " + std::to_string(extra));
}

using testing_devices::devices_with_values;
INSTANTIATE_TEST_SUITE_P(Devices, ConvPaths, testing::ValuesIn(devices_with_values()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sluice
