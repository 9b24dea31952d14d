// The JIT (runtime/jit.h): run, capture, then replay as one graph with the inputs patched in.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "runtime/jit.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

std::vector<float> ramp(int64_t n, float start, float step) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * float(i);
  return v;
}

std::vector<Tensor> mlp(const std::vector<Tensor>& in) {
  return {(in[0].matmul(in[1]) + 1).relu().sum({1}), in[0].exp().max({0})};
}

TEST(Jit, ReplaysOneGraphWithNewInputsOnCpu) {
  Jit f = jit(mlp);
  const Tensor w = Tensor::from(ramp(8 * 3, -1, 0.1f), {8, 3}, "CPU");
  for (int call = 1; call <= 6; ++call) {
    Tensor x = Tensor::from(ramp(4 * 8, float(call) * 0.5f - 2, 0.05f * float(call)), {4, 8}, "CPU");
    std::vector<Tensor> out = f({x, w});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(f.captured(), call >= 2) << call;
    std::vector<Tensor> want = mlp({x, w});
    for (size_t k = 0; k < 2; ++k) {
      std::vector<float> got = out[k].to_vector<float>();
      eval::HostArray ref = reference(want[k]);
      ASSERT_EQ(got.size(), ref.f.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], ref.f[i], 1e-4 * (1 + std::abs(ref.f[i]))) << call;
    }
  }
  EXPECT_EQ(f.calls(), 6);
  EXPECT_GE(f.kernel_count(), 2u);
}

TEST(Jit, LazyInputsAreRealizedFirst) {
  Jit f = jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 3}; });
  for (int call = 1; call <= 4; ++call) {
    Tensor x = Tensor::from(std::vector<float>{1, 2}, {2}, "CPU") + float(call);  // not realized yet
    EXPECT_EQ(f({x})[0].to_vector<float>(), (std::vector<float>{3.0f * (1 + call), 3.0f * (2 + call)}));
  }
}

TEST(Jit, WrongInputShapeNamesTheInputAndBothShapes) {
  Jit f = jit(mlp);
  const Tensor w = Tensor::from(ramp(8 * 3, 0, 1), {8, 3}, "CPU");
  for (int call = 0; call < 3; ++call) f({Tensor::from(ramp(32, 0, 1), {4, 8}, "CPU"), w});
  try {
    f({Tensor::from(ramp(36, 0, 1), {4, 9}, "CPU"), w});
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "[jit] input 0: captured (4, 8) float on CPU, got (4, 9) float on CPU");
  }
  EXPECT_THROW(f({w}), ValueError);  // wrong number of inputs
  EXPECT_THROW(f({Tensor::from(std::vector<int32_t>(32, 1), {4, 8}, "CPU"), w}), ValueError);  // dtype
}

TEST(Jit, ReplaysOnNull) {
  Jit f = jit([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] + 1).softmax(), in[0].sum()};
  });
  for (int call = 0; call < 5; ++call) {
    std::vector<Tensor> out = f({Tensor::ones({4, 5}, dtypes::float32, "NULL")});
    EXPECT_EQ(out[0].shape(), (Shape{4, 5}));
    EXPECT_EQ(out[0].device(), "NULL");
  }
  EXPECT_TRUE(f.captured());
  EXPECT_GE(f.kernel_count(), 2u);
}

TEST(Jit, CaptureFirstCallReplaysFromTheSecond) {
  Jit f(mlp, {.capture_first_call = true});
  const Tensor w = Tensor::from(ramp(8 * 3, -1, 0.1f), {8, 3}, "CPU");
  for (int call = 1; call <= 3; ++call) {
    Tensor x = Tensor::from(ramp(4 * 8, float(call), 0.1f), {4, 8}, "CPU");
    std::vector<Tensor> out = f({x, w});
    EXPECT_TRUE(f.captured()) << call;
    std::vector<float> got = out[1].to_vector<float>();
    eval::HostArray ref = reference(mlp({x, w})[1]);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ref.f[i], 1e-4 * (1 + std::abs(ref.f[i])));
  }
}

// A function that reads a value on the host while it is captured would replay only the kernels after
// the read: it is not captured, and every call runs it.
TEST(Jit, FunctionThatRealizesInsideStaysUnjitted) {
  int runs = 0;
  Jit f(
      [&](const std::vector<Tensor>& in) {
        ++runs;
        Tensor m = in[0].max();
        float top = m.item<float>();  // a host read
        return std::vector<Tensor>{in[0] - top};
      },
      {.capture_first_call = true});
  for (int call = 1; call <= 3; ++call) {
    std::vector<Tensor> out = f({Tensor::from(ramp(4, float(call), 1), {4}, "CPU")});
    EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{-3, -2, -1, 0}));
  }
  EXPECT_FALSE(f.captured());
  EXPECT_EQ(runs, 3);
  EXPECT_NE(f.why().find("host read"), std::string::npos) << f.why();
}

}  // namespace
}  // namespace sluice
