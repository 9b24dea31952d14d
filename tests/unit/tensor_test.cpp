// The lazy Tensor API (runtime/tensor.h): shapes and dtypes of every op family, promotion and
// broadcasting, bad input with its message, tags, laziness and the random generator's reproducibility.
// Values are checked through the reference evaluator in tensor_value_test.cpp.
#include "runtime/tensor.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/device_name.h"
#include "tests/error_of.h"

using namespace sluice;
namespace d = sluice::dtypes;

namespace {

using testing_errors::error_of;

Tensor f32(const Shape& shape) { return Tensor::empty(shape, d::float32, "CPU"); }
Tensor typed(const Shape& shape, DType dt) { return Tensor::empty(shape, dt, "CPU"); }

}  // namespace

// ---------------------------------------------------------------- devices

TEST(TensorDevice, NamesAreCanonical) {
  EXPECT_EQ(canonical_device("cpu"), "CPU");
  EXPECT_EQ(canonical_device("CPU:0"), "CPU");
  EXPECT_EQ(canonical_device("cuda:1"), "CUDA:1");
  EXPECT_EQ(parse_device("VULKAN:2").kind, "VULKAN");
  EXPECT_EQ(parse_device("VULKAN:2").ordinal, 2);
  for (const char* name : {"NULL", "CL", "HIP"}) EXPECT_EQ(canonical_device(name), name);
}

TEST(TensorDevice, UnknownNamesListTheKnownKinds) {
  EXPECT_EQ(error_of<DeviceError>([] { parse_device("TPU"); }),
            "[device] unknown device \"TPU\": known kinds are CUDA, HIP, VULKAN, CL, CPU, NULL");
  EXPECT_THROW(parse_device("CPU:-1"), DeviceError);
  EXPECT_THROW(parse_device("CPU:x"), DeviceError);
  EXPECT_THROW(parse_device("CPU:"), DeviceError);
}

TEST(TensorDevice, DefaultFollowsTheEnvironment) {
  const char* old = std::getenv("SLUICE_DEVICE");
  std::string saved = old ? old : "";
  setenv("SLUICE_DEVICE", "null", 1);
  EXPECT_EQ(default_device(), "NULL");
  EXPECT_EQ(Tensor::zeros({2}).device(), "NULL");
  unsetenv("SLUICE_DEVICE");
  // Without it, the registry's choice (tests/ops checks the ranking): some available device, never NULL.
  const std::string def = default_device();
  EXPECT_NE(def, "NULL");
  bool listed = false;
  for (const DeviceInfo& d : list_devices()) listed |= d.name == def && d.available;
  EXPECT_TRUE(listed) << def;
  if (old) setenv("SLUICE_DEVICE", saved.c_str(), 1);
}

// ---------------------------------------------------------------- creation

TEST(TensorCreation, FromHostDataKeepsACopy) {
  std::vector<int16_t> data{1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from(data, {2, 3}, "cpu:0");
  data[0] = 99;  // the tensor copied the data
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.dtype(), d::int16);
  EXPECT_EQ(t.device(), "CPU");
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.ndim(), 2);
  UOp buf = t.uop().src(0);
  ASSERT_EQ(buf.op(), Op::Buffer);
  auto host = host_buffer(buf);
  ASSERT_TRUE(host);
  EXPECT_EQ(host->dtype, d::int16);
  EXPECT_EQ(host->size, 6);
  ASSERT_EQ(host->bytes.size(), 12u);
  int16_t first;
  std::memcpy(&first, host->bytes.data(), 2);
  EXPECT_EQ(first, 1);
}

TEST(TensorCreation, HostTypesMapToDtypes) {
  EXPECT_EQ(Tensor::from(std::vector<bool>{true, false}, {2}).dtype(), d::bool_);
  EXPECT_EQ(Tensor::from(std::vector<uint8_t>{1}, {1}).dtype(), d::uint8);
  EXPECT_EQ(Tensor::from(std::vector<int32_t>{1}, {}).dtype(), d::int32);
  EXPECT_EQ(Tensor::from(std::vector<long long>{1}, {1}).dtype(), d::int64);
  EXPECT_EQ(Tensor::from(std::vector<uint64_t>{1}, {1}).dtype(), d::uint64);
  EXPECT_EQ(Tensor::from(std::vector<double>{1}, {1}).dtype(), d::float64);
  EXPECT_EQ(Tensor::from(std::vector<float>{1, 2, 3}).shape(), Shape{3});
  std::vector<float> h{1, 2};
  EXPECT_EQ(Tensor::from(std::span<const float>(h), {2}, d::float16).dtype(), d::float16);
  EXPECT_EQ(Tensor::from(std::span<const float>(h), {2}, d::bfloat16).dtype(), d::bfloat16);
  EXPECT_THROW(Tensor::from(std::span<const float>(h), {2}, d::int32), DTypeError);
}

TEST(TensorCreation, BracedListsKeepTheirElementType) {
  EXPECT_EQ(Tensor::from({1.0f, 2.0f}, {2}).dtype(), d::float32);
  EXPECT_EQ(Tensor::from({0, 1, 1, 0}, {4}).dtype(), d::int32);
  EXPECT_EQ(Tensor::from({1.5, 2.5}, {2, 1}, "CPU").dtype(), d::float64);
  EXPECT_EQ(Tensor::from({true, false}, {2}).dtype(), d::bool_);
  EXPECT_EQ(Tensor::from({int64_t(1), int64_t(2), int64_t(3)}).shape(), Shape{3});
  EXPECT_THROW(Tensor::from({1, 2, 3}, {2}), ShapeError);
}

TEST(TensorCreation, OneArgumentOrderEverywhere) {  // (shape, values, [seed], dtype, device)
  EXPECT_EQ(Tensor::zeros({2}, d::float16, "CPU").dtype(), d::float16);
  EXPECT_EQ(Tensor::full({2}, 3, d::int8, "CPU").dtype(), d::int8);
  EXPECT_EQ(Tensor::rand({2}, 1, d::float16, "CPU").dtype(), d::float16);
  EXPECT_EQ(Tensor::randn({2}, 1, d::float64, "CPU").dtype(), d::float64);
  EXPECT_EQ(Tensor::randint({2}, 0, 5, 1, d::int64, "CPU").dtype(), d::int64);
  EXPECT_EQ(Tensor::uniform({2}, 0, 1, 1, d::float64, "CPU").dtype(), d::float64);
  EXPECT_EQ(Tensor::normal({2}, 0, 1, 1, d::float16, "NULL").device(), "NULL");
}

// Sizes whose product passes int64 (or what a buffer can address) are a ShapeError naming the op, never a
// silent empty tensor or a std::length_error.
TEST(TensorCreation, ShapesTooLargeToAddressAreRefused) {
  EXPECT_EQ(error_of<ShapeError>([] {
              Tensor::ones({int64_t(1) << 32, int64_t(1) << 32});
            }),
            "[full] shape (4294967296, 4294967296) has more than 2^60 elements");
  EXPECT_THROW(Tensor::zeros({3, int64_t(1) << 62}), ShapeError);
  EXPECT_THROW(Tensor::rand({int64_t(1) << 40, int64_t(1) << 40}), ShapeError);
  EXPECT_EQ(error_of<ShapeError>([] {
              Tensor::ones({1}).expand({int64_t(1) << 62, 16});
            }),
            "[expand] shape (4611686018427387904, 16) has more than 2^60 elements");
  EXPECT_EQ(Tensor::ones({0, int64_t(1) << 62, int64_t(1) << 62}).numel(), 0);  // empty is fine
  EXPECT_THROW(Tensor::ones({int64_t(1) << 40}).reshape({int64_t(1) << 40, -1, int64_t(1) << 40}),
               ShapeError);
}

// The dtype is checked before anything is allocated: a huge tensor read as the wrong type is a DTypeError.
TEST(TensorCreation, ReadingAsTheWrongTypeFailsBeforeAllocating) {
  EXPECT_EQ(
      error_of<DTypeError>([] { Tensor::ones({int64_t(1) << 40}, d::float32, "CPU").to_vector<int64_t>(); }),
      "[to_vector] tensor is float, asked for int64_t");
}

TEST(TensorCreation, FromChecksTheShape) {
  EXPECT_EQ(error_of<ShapeError>([] {
              Tensor::from(std::vector<float>{1, 2, 3}, {2, 2});
            }),
            "[from] 3 elements do not fill shape (2, 2)");
  EXPECT_THROW(Tensor::from(std::vector<float>{}, {-1}), ShapeError);
}

TEST(TensorCreation, FullTakesItsDtypeFromTheFillKind) {
  EXPECT_EQ(Tensor::full({2, 2}, 3.0, std::nullopt, "CPU").dtype(), d::float32);
  EXPECT_EQ(Tensor::full({2, 2}, 3, std::nullopt, "CPU").dtype(), d::int32);
  EXPECT_EQ(Tensor::full({2, 2}, true, std::nullopt, "CPU").dtype(), d::bool_);
  EXPECT_EQ(Tensor::full({2}, 1.5, d::float16, "CPU").dtype(), d::float16);
  EXPECT_EQ(Tensor::zeros({3, 1}, d::int8, "CPU").shape(), (Shape{3, 1}));
  EXPECT_EQ(Tensor::ones({}, d::float32, "CPU").shape(), Shape{});
  EXPECT_EQ(f32({2, 3}).full_like(7).dtype(), d::float32);
  EXPECT_EQ(f32({2, 3}).zeros_like(d::int32).dtype(), d::int32);
  EXPECT_EQ(Tensor::full({4, 4}, 3.0, std::nullopt, "CPU").uop().op(), Op::Expand);  // a broadcast constant
  EXPECT_EQ(error_of<ShapeError>([] { Tensor::full({-2}, 1); }), "[full] negative size in shape (-2,)");
  EXPECT_EQ(error_of<ShapeError>([] { Tensor::empty({3, -1}); }), "[empty] negative size in shape (3, -1)");
  EXPECT_THROW(Tensor::rand({-1}), ShapeError);
}

TEST(TensorCreation, RangesAndEye) {
  EXPECT_EQ(Tensor::arange(10).shape(), Shape{10});
  EXPECT_EQ(Tensor::arange(10).dtype(), d::int32);
  EXPECT_EQ(Tensor::arange(0, 1, 0.25).shape(), Shape{4});
  EXPECT_EQ(Tensor::arange(0, 1, 0.25).dtype(), d::float32);
  EXPECT_EQ(Tensor::arange(10, 0, -3).shape(), Shape{4});
  EXPECT_EQ(Tensor::arange(5, 2).shape(), Shape{0});
  EXPECT_EQ(Tensor::arange(0, 8, 1, d::int64).dtype(), d::int64);
  EXPECT_THROW(Tensor::arange(0, 8, 0), ValueError);
  EXPECT_EQ(Tensor::linspace(0, 1, 5).shape(), Shape{5});
  EXPECT_EQ(Tensor::eye(3).shape(), (Shape{3, 3}));
  EXPECT_EQ(Tensor::eye(2, 4, d::int32).shape(), (Shape{2, 4}));
  EXPECT_EQ(Tensor::eye(2, 4, d::int32).dtype(), d::int32);
}

TEST(TensorCreation, ArangeHasNoReduction) {  // elementwise: one fused kernel, no O(n^2) window sum
  for (const UOp& u : Tensor::arange(1000).uop().toposort()) EXPECT_NE(u.op(), Op::ReduceAxis);
}

// ---------------------------------------------------------------- random

TEST(TensorRandom, SameSeedSameGraph) {
  EXPECT_EQ(Tensor::rand({64}, 7).uop(), Tensor::rand({64}, 7).uop());
  EXPECT_EQ(Tensor::randn({3, 4}, 1).uop(), Tensor::randn({3, 4}, 1).uop());
  EXPECT_NE(Tensor::rand({64}, 7).uop(), Tensor::rand({64}, 8).uop());
  EXPECT_NE(Tensor::randint({8}, 0, 10, 1).uop(), Tensor::randint({8}, 0, 10, 2).uop());
}

TEST(TensorRandom, ShapesAndDtypes) {
  EXPECT_EQ(Tensor::rand({2, 3}).shape(), (Shape{2, 3}));
  EXPECT_EQ(Tensor::rand({2}, 0, d::float16, "CPU").dtype(), d::float16);
  EXPECT_EQ(Tensor::randn({5}, 0, d::float64, "CPU").dtype(), d::float64);
  EXPECT_EQ(Tensor::randint({4}, -3, 3).dtype(), d::int32);
  EXPECT_EQ(Tensor::uniform({4}, -1, 1).shape(), Shape{4});
  EXPECT_EQ(Tensor::normal({4, 1}, 0, 2).shape(), (Shape{4, 1}));
  EXPECT_EQ(Tensor::rand({0}).shape(), Shape{0});
  EXPECT_THROW(Tensor::rand({2}, 0, d::int32, "CPU"), DTypeError);
  EXPECT_THROW(Tensor::randint({2}, 3, 3), ValueError);
  EXPECT_THROW(Tensor::randint({2}, 0, 300, 0, d::int8, "CPU"), ValueError);
}

TEST(TensorRandom, BuiltFromIntegerOpsOnly) {  // the same ops on every device: no device RNG, no state
  for (const UOp& u : Tensor::rand({16}, 3).uop().toposort()) {
    if (is_alu(u.op())) {
      EXPECT_TRUE(u.dtype().is_int() || u.dtype().is_bool() || u.op() == Op::Mul) << op_name(u.op());
    }
    EXPECT_NE(u.op(), Op::Buffer);
  }
}

// ---------------------------------------------------------------- laziness and queries

TEST(TensorLazy, BuildingDoesNotExecute) {
  // A graph over a buffer with no data at all builds fine: nothing reads or computes anything.
  Tensor x = f32({64, 128});
  Tensor y = (x.matmul(f32({128, 32})) + 1).relu().softmax().sum({1});
  EXPECT_EQ(y.shape(), Shape{64});
  EXPECT_EQ(host_buffer(x.uop().src(0)), nullptr);
  int buffers = 0;
  for (const UOp& u : y.uop().toposort()) buffers += u.op() == Op::Buffer;
  EXPECT_EQ(buffers, 2);  // the inputs only: no result buffer was made
}

TEST(TensorLazy, DesignExampleBuilds) {  // DESIGN.md §5, up to the realize it does not have yet
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, "CPU");
  Tensor w = Tensor::randn({3, 4}, /*seed=*/0, d::float32, "CPU");
  Tensor y = (a.matmul(w) + 1.0f).relu().sum({1});
  EXPECT_EQ(y.shape(), Shape{2});
  Tensor z = a.to("VULKAN").reshape({3, 2}).permute({1, 0}).contiguous();
  EXPECT_EQ(z.device(), "VULKAN");
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
}

TEST(TensorLazy, StrDescribesWithoutRealizing) {
  EXPECT_EQ(f32({2, 3}).str(), "Tensor(shape=(2, 3), dtype=float, device=CPU)");
  EXPECT_EQ(typed({}, d::int64).to("NULL").str(), "Tensor(shape=(), dtype=long, device=NULL)");
  EXPECT_EQ(f32({4}).shape(-1), 4);
  EXPECT_THROW(f32({4}).shape(1), ShapeError);
}

TEST(TensorLazy, OpsTagTheirNodes) {
  Tensor x = f32({8, 16});
  Tensor s = x.softmax();
  EXPECT_STREQ(s.uop().tag(), "softmax");
  // Every computing node softmax built (max, subtraction, exp, sum, division) carries its name; constants
  // and buffers, also seen through movement ops, are data and carry none.
  for (const UOp& u : s.uop().toposort()) {
    const UOp* base = &u;
    while (is_movement(base->op())) base = &base->src(0);
    if (base->op() == Op::Const || base->op() == Op::Buffer || u.num_src() == 0) {
      EXPECT_EQ(u.tag(), nullptr) << op_name(u.op());
    } else {
      EXPECT_STREQ(u.tag(), "softmax") << op_name(u.op());
    }
  }
  EXPECT_STREQ(x.relu().uop().tag(), "relu");
  EXPECT_STREQ(x.matmul(f32({16, 4})).uop().tag(), "matmul");
  EXPECT_STREQ((x + 1).uop().tag(), "add");
  EXPECT_EQ(Tensor::full({4}, 2.0).uop().tag(), nullptr);
}

TEST(TensorState, AssignReplacesTheNode) {
  Tensor a = f32({16});
  UOp before = a.uop();
  a.assign(a + 1);
  EXPECT_EQ(a.uop().op(), Op::Assign);
  EXPECT_EQ(a.uop().src(0), before);
  EXPECT_EQ(error_of<ShapeError>([&] { a.assign(f32({4})); }), "[assign] cannot assign (4,) to (16,)");
  EXPECT_EQ(error_of<DTypeError>([&] { a.assign(typed({16}, d::int32)); }),
            "[assign] cannot assign int to float");
}

TEST(TensorState, RealizePointsAndCopies) {
  Tensor a = f32({2, 2});
  EXPECT_EQ(a.contiguous().uop().op(), Op::Contiguous);
  EXPECT_EQ(a.detach().uop().op(), Op::Detach);
  EXPECT_EQ(a.to("CPU").uop(), a.uop());
  Tensor b = a.to("NULL");
  EXPECT_EQ(b.uop().op(), Op::Copy);
  EXPECT_EQ(b.device(), "NULL");
  EXPECT_EQ(error_of<DeviceError>([&] { a + b; }), "[add] operands are on different devices: CPU and NULL");
  EXPECT_EQ(a.cast(d::float16).dtype(), d::float16);
  EXPECT_EQ(a.bitcast(d::int32).dtype(), d::int32);
  EXPECT_THROW(a.bitcast(d::int16), DTypeError);
}

// ---------------------------------------------------------------- promotion and broadcasting

TEST(TensorPromotion, TensorsPromoteToTheLeastUpperDtype) {
  EXPECT_EQ((typed({2}, d::int32) + f32({2})).dtype(), d::float32);
  EXPECT_EQ((typed({2}, d::uint8) + typed({2}, d::int8)).dtype(), d::int16);
  EXPECT_EQ((typed({2}, d::float16) * typed({2}, d::bfloat16)).dtype(), d::float32);
  EXPECT_EQ((typed({2}, d::int64) + typed({2}, d::float16)).dtype(), d::float16);
  EXPECT_EQ((typed({2}, d::bool_) + typed({2}, d::bool_)).dtype(), d::bool_);
}

TEST(TensorPromotion, ScalarsFollowTheReferenceRules) {
  EXPECT_EQ((typed({2}, d::int8) + 1).dtype(), d::int8);          // int scalar keeps an int tensor's dtype
  EXPECT_EQ((typed({2}, d::int8) + 1.5).dtype(), d::float32);     // float scalar: the default float
  EXPECT_EQ((typed({2}, d::float16) * 2.0).dtype(), d::float16);  // float tensors keep theirs
  EXPECT_EQ((typed({2}, d::float16) * 2).dtype(), d::float16);
  EXPECT_EQ((typed({2}, d::bool_) + 1).dtype(), d::int32);
  EXPECT_EQ((typed({2}, d::bool_) & true).dtype(), d::bool_);
  EXPECT_EQ((typed({2}, d::uint16) + true).dtype(), d::uint16);
  EXPECT_EQ((2 - typed({2}, d::int64)).dtype(), d::int64);  // scalars on the left too
  EXPECT_EQ((1.0f / typed({2}, d::int32)).dtype(), d::float32);
}

TEST(TensorPromotion, DivisionAndComparisons) {
  EXPECT_EQ((typed({2}, d::int32) / typed({2}, d::int32)).dtype(), d::float32);  // true division
  EXPECT_EQ(typed({2}, d::int32).floor_divide(2).dtype(), d::int32);
  EXPECT_EQ(typed({2}, d::int16).div(3, Rounding::Trunc).dtype(), d::int16);
  EXPECT_EQ(f32({2}).div(3, Rounding::Floor).dtype(), d::float32);
  EXPECT_EQ((typed({2}, d::int8) % 3).dtype(), d::int8);
  for (const Tensor& t :
       {f32({2}) < 1, f32({2}) <= 1, f32({2}) > f32({2}), f32({2}) >= 1, f32({2}) == 1, f32({2}) != 1,
        1 < f32({2}), f32({2}).isnan(), f32({2}).isinf(), typed({2}, d::int32).logical_not()})
    EXPECT_EQ(t.dtype(), d::bool_);
}

TEST(TensorPromotion, MathFunctionsComputeInFloat) {
  Tensor i = typed({3}, d::int32);
  for (const Tensor& t : {i.sqrt(), i.exp(), i.log(), i.sin(), i.cos(), i.tan(), i.reciprocal(), i.rsqrt(),
                          i.sigmoid(), i.tanh(), i.gelu(), i.erf(), i.mean()})
    EXPECT_EQ(t.dtype(), d::float32);
  Tensor h = typed({3}, d::float16);
  EXPECT_EQ(h.exp().dtype(), d::float16);
  EXPECT_EQ(h.sum().dtype(), d::float16);  // accumulated in float32, returned as half
  EXPECT_EQ(i.abs().dtype(), d::int32);
  EXPECT_EQ(i.floor().uop(), i.uop());  // integers are whole already
  EXPECT_EQ(i.pow(2).dtype(), d::int32);
  EXPECT_EQ(i.pow(0.5).dtype(), d::float32);
  EXPECT_EQ(f32({2}).pow(typed({2}, d::int32)).dtype(), d::float32);
}

TEST(TensorBroadcast, NumpyRules) {
  EXPECT_EQ((f32({2, 1, 3}) + f32({4, 1})).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ((f32({}) * f32({5, 2})).shape(), (Shape{5, 2}));
  EXPECT_EQ((f32({0, 1}) + f32({3})).shape(), (Shape{0, 3}));
  EXPECT_EQ(f32({3, 1}).gt(0).where(f32({1, 4}), 0).shape(), (Shape{3, 4}));
  EXPECT_EQ(error_of<ShapeError>([] { f32({2, 3}) + f32({4}); }), "[add] cannot broadcast (2, 3) and (4,)");
  EXPECT_EQ(error_of<ShapeError>([] {
              f32({2, 3}).maximum(f32({3, 3}));
            }),
            "[maximum] cannot broadcast (2, 3) and (3, 3)");
}

TEST(TensorElementwise, BitwiseNeedsIntegers) {
  Tensor i = typed({4}, d::int32), b = typed({4}, d::bool_);
  EXPECT_EQ((i & 3).dtype(), d::int32);
  EXPECT_EQ((b | b).dtype(), d::bool_);
  EXPECT_EQ((~i).dtype(), d::int32);
  EXPECT_EQ((i << 2).dtype(), d::int32);
  EXPECT_EQ((i >> typed({4}, d::int8)).dtype(), d::int32);
  EXPECT_EQ(error_of<DTypeError>([] { f32({2}).bitwise_and(f32({2})); }),
            "[bitwise_and] needs integer or bool tensors, got float");
  EXPECT_EQ(error_of<DTypeError>([&] { i ^ 1.5; }), "[bitwise_xor] needs integer or bool tensors, got float");
  EXPECT_EQ(error_of<DTypeError>([] { ~f32({2}); }),
            "[bitwise_not] needs integer or bool tensors, got float");
  EXPECT_EQ(error_of<DTypeError>([] { f32({2}) << 1; }), "[lshift] needs integer tensors, got float and int");
  EXPECT_THROW(b % b, DTypeError);
}

TEST(TensorElementwise, ShapesAndDtypesOfEveryUnary) {
  Tensor x = f32({2, 3});
  for (const Tensor& t : {-x,
                          x.abs(),
                          x.sign(),
                          x.square(),
                          x.exp2(),
                          x.log2(),
                          x.trunc(),
                          x.floor(),
                          x.ceil(),
                          x.round(),
                          x.clip(-1, 1),
                          x.clamp(std::nullopt, 2),
                          x.lerp(x, 0.5),
                          x.lerp(x, x),
                          x.maximum(0),
                          x.minimum(x),
                          x.relu(),
                          x.relu6(),
                          x.leaky_relu(),
                          x.elu(),
                          x.celu(),
                          x.selu(),
                          x.quick_gelu(),
                          x.silu(),
                          x.swish(),
                          x.mish(),
                          x.softplus(),
                          x.softsign(),
                          x.logsigmoid(),
                          x.hardsigmoid(),
                          x.hardswish(),
                          x.hardtanh()}) {
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.dtype(), d::float32);
  }
  EXPECT_THROW(x.clip(std::nullopt, std::nullopt), ValueError);
  Tensor b = typed({2}, d::bool_);
  EXPECT_EQ((-b).dtype(), d::bool_);
  EXPECT_EQ(b.logical_and(typed({2}, d::int32)).dtype(), d::bool_);
  EXPECT_EQ(b.logical_xor(b).dtype(), d::bool_);
  EXPECT_EQ(b.where(1, 0.5).dtype(), d::float32);
  EXPECT_EQ(b.where(typed({2}, d::int8), 1).dtype(), d::int8);
  EXPECT_EQ(f32({2}).masked_fill(b, -1e9).dtype(), d::float32);
  EXPECT_EQ(typed({2}, d::int16).masked_fill(b, 5).dtype(), d::int16);
}

// ---------------------------------------------------------------- reductions

TEST(TensorReduce, AxesAndKeepdim) {
  Tensor x = f32({2, 3, 4});
  EXPECT_EQ(x.sum().shape(), Shape{});
  EXPECT_EQ(x.sum({1}).shape(), (Shape{2, 4}));
  EXPECT_EQ(x.sum({-1}, true).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.max({0, 2}).shape(), Shape{3});
  EXPECT_EQ(x.min({-3}, true).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(x.prod({2}).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.mean({0, 1}).shape(), Shape{4});
  EXPECT_EQ(x.var({2}).shape(), (Shape{2, 3}));
  EXPECT_EQ(x.std({2}, true, 0).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.logsumexp({1}).shape(), (Shape{2, 4}));
  EXPECT_EQ(x.softmax(1).shape(), x.shape());
  EXPECT_EQ(x.log_softmax().shape(), x.shape());
  EXPECT_EQ(f32({}).sum().shape(), Shape{});
  EXPECT_EQ(error_of<ShapeError>([&] { x.sum({3}); }), "[sum] axis 3 is out of range for 3 dimensions");
  EXPECT_EQ(error_of<ShapeError>([&] { x.max({1, -2}); }), "[max] repeated axis in (1, -2)");
}

TEST(TensorReduce, Dtypes) {
  EXPECT_EQ(typed({4}, d::int8).sum().dtype(), d::int32);
  EXPECT_EQ(typed({4}, d::uint8).sum().dtype(), d::uint32);
  EXPECT_EQ(typed({4}, d::bool_).sum().dtype(), d::int32);
  EXPECT_EQ(typed({4}, d::int64).sum().dtype(), d::int64);
  EXPECT_EQ(typed({4}, d::int8).sum({}, false, d::int8).dtype(), d::int8);
  EXPECT_EQ(typed({4}, d::int8).max().dtype(), d::int8);
  EXPECT_EQ(typed({4}, d::uint8).min().dtype(), d::uint8);
  EXPECT_EQ(typed({4}, d::int32).mean().dtype(), d::float32);
  EXPECT_EQ(typed({4}, d::float16).mean().dtype(), d::float16);
  EXPECT_EQ(f32({4}).any().dtype(), d::bool_);
  EXPECT_EQ(typed({4}, d::int32).all().dtype(), d::bool_);
}

TEST(TensorReduce, ArgAndCumulative) {
  Tensor x = f32({64, 100});
  EXPECT_EQ(x.argmax(1).shape(), Shape{64});
  EXPECT_EQ(x.argmax(1).dtype(), d::int32);
  EXPECT_EQ(x.argmin(0, true).shape(), (Shape{1, 100}));
  EXPECT_EQ(x.argmax().shape(), Shape{});
  EXPECT_EQ(x.cumsum(1).shape(), x.shape());
  EXPECT_EQ(x.cumprod(0).shape(), x.shape());
  EXPECT_EQ(x.cummax(-1).shape(), x.shape());
  EXPECT_EQ(f32({1000}).cumsum().shape(), Shape{1000});  // two-stage for long axes
  EXPECT_EQ(typed({8}, d::int8).cumsum().dtype(), d::int32);
  EXPECT_THROW(x.argmax(2), ShapeError);
}

// ---------------------------------------------------------------- movement

TEST(TensorMovement, ReshapeAndFriends) {
  Tensor x = f32({2, 3, 4});
  EXPECT_EQ(x.reshape({6, -1}).shape(), (Shape{6, 4}));
  EXPECT_EQ(x.reshape({-1}).shape(), Shape{24});
  EXPECT_EQ(x.permute({2, 0, 1}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(x.permute({-1, 0, 1}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(x.transpose().shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(x.transpose(-1, -2).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(x.flatten().shape(), Shape{24});
  EXPECT_EQ(x.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(0, 1).shape(), (Shape{6, 4}));
  EXPECT_EQ(x.unflatten(2, {2, -1}).shape(), (Shape{2, 3, 2, 2}));
  EXPECT_EQ(f32({1, 3, 1}).squeeze().shape(), Shape{3});
  EXPECT_EQ(f32({1, 3, 1}).squeeze(-1).shape(), (Shape{1, 3}));
  EXPECT_EQ(f32({1, 3, 1}).squeeze(1).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(x.unsqueeze(0).shape(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(x.unsqueeze(-1).shape(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(f32({3, 1}).expand({2, -1, 5}).shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(error_of<ShapeError>([&] {
              x.reshape({5, -1});
            }),
            "[reshape] cannot reshape (2, 3, 4) to (5, -1)");
  EXPECT_EQ(error_of<ShapeError>([&] {
              x.reshape({-1, -1});
            }),
            "[reshape] only one size can be -1, got (-1, -1)");
  EXPECT_EQ(error_of<ShapeError>([&] { x.reshape({25}); }), "[reshape] cannot reshape (2, 3, 4) to (25,)");
  EXPECT_EQ(error_of<ShapeError>([&] {
              x.expand({3, 3, 4});
            }),
            "[expand] cannot broadcast (2, 3, 4) to (3, 3, 4)");
  EXPECT_THROW(x.permute({0, 1}), ShapeError);
  EXPECT_THROW(x.unsqueeze(4), ShapeError);
}

TEST(TensorMovement, PadShrinkFlip) {
  Tensor x = f32({2, 3});
  EXPECT_EQ(x.pad({{1, 1}, {2, 0}}).shape(), (Shape{4, 5}));
  EXPECT_EQ(x.pad({{0, 0}, {-1, 2}}).shape(), (Shape{2, 4}));  // negative crops
  EXPECT_EQ(x.pad({{1, 1}, {2, 2}}, 0, PadMode::Reflect).shape(), (Shape{4, 7}));
  EXPECT_EQ(x.pad({{3, 1}, {0, 4}}, 0, PadMode::Replicate).shape(), (Shape{6, 7}));
  EXPECT_EQ(x.pad({{2, 2}, {3, 3}}, 0, PadMode::Circular).shape(), (Shape{6, 9}));
  EXPECT_EQ(x.pad({{0, 0}, {0, 0}}, 5).uop(), x.uop());
  EXPECT_EQ(x.shrink({{0, 1}, {1, 3}}).shape(), (Shape{1, 2}));
  EXPECT_EQ(x.flip({-1}).shape(), x.shape());
  EXPECT_EQ(error_of<ValueError>([&] {
              x.pad({{2, 0}, {0, 0}}, 0, PadMode::Reflect);
            }),
            "[pad] reflect padding ((2, 0), (0, 0)) must be less than the sizes of (2, 3)");
  EXPECT_THROW(x.pad({{3, 0}, {0, 0}}, 0, PadMode::Circular), ValueError);
  EXPECT_THROW(x.pad({{-1, 0}, {0, 0}}, 0, PadMode::Replicate), ValueError);
  EXPECT_EQ(error_of<ShapeError>([&] {
              x.pad({{1, 1}});
            }),
            "[pad] needs one (before, after) pair per axis, got ((1, 1),) for (2, 3)");
}

TEST(TensorMovement, Slicing) {
  Tensor x = f32({10, 6});
  EXPECT_EQ(x.slice({{2, 5}}).shape(), (Shape{3, 6}));
  EXPECT_EQ(x.slice({{std::nullopt, std::nullopt, 3}, {1, std::nullopt, 2}}).shape(), (Shape{4, 3}));
  EXPECT_EQ(x.slice({{-3, std::nullopt}}).shape(), (Shape{3, 6}));
  EXPECT_EQ(x.slice({{std::nullopt, std::nullopt, -1}}).shape(), (Shape{10, 6}));
  EXPECT_EQ(x.slice({{8, 1, -3}}).shape(), (Shape{3, 6}));
  EXPECT_EQ(x.slice({{5, 2}}).shape(), (Shape{0, 6}));
  EXPECT_EQ(x.slice({{-100, 100}}).shape(), (Shape{10, 6}));
  EXPECT_EQ(x[3].shape(), Shape{6});
  EXPECT_EQ(x[-1].shape(), Shape{6});
  EXPECT_EQ(x.select(1, -2).shape(), Shape{10});
  EXPECT_EQ(error_of<ShapeError>([&] { x[10]; }), "[select] index 10 is out of range for axis 0 of (10, 6)");
  EXPECT_THROW(x.slice({{0, 1, 0}}), ValueError);
  EXPECT_THROW(x.slice({{}, {}, {}}), ShapeError);
}

TEST(TensorMovement, JoinAndSplit) {
  Tensor a = f32({8, 16}), b = f32({8, 16});
  EXPECT_EQ(sluice::cat({a, b}).shape(), (Shape{16, 16}));
  EXPECT_EQ(sluice::cat({a, f32({8, 4})}, -1).shape(), (Shape{8, 20}));
  EXPECT_EQ(sluice::cat({a, typed({8, 16}, d::int32)}).dtype(), d::float32);
  EXPECT_EQ(sluice::stack({f32({16}), f32({16}), f32({16})}).shape(), (Shape{3, 16}));
  EXPECT_EQ(sluice::stack({a, b}, -1).shape(), (Shape{8, 16, 2}));
  EXPECT_EQ(error_of<ShapeError>([&] {
              sluice::cat({a, f32({4, 4})});
            }),
            "[cat] shapes (8, 16) and (4, 4) differ outside axis 0");
  EXPECT_THROW(sluice::cat({}), ValueError);
  EXPECT_THROW(sluice::stack({a, f32({8})}), ShapeError);
  auto parts = f32({10, 2}).split(4);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].shape(), (Shape{2, 2}));
  EXPECT_EQ(f32({10, 2}).split({1, 9}).at(1).shape(), (Shape{9, 2}));
  EXPECT_EQ(error_of<ValueError>([] {
              f32({10}).split({1, 2});
            }),
            "[split] sizes (1, 2) do not add up to 10 (axis 0 of (10,))");
  EXPECT_EQ(f32({7, 3}).chunk(3).size(), 3u);
  EXPECT_EQ(f32({7, 3}).chunk(3).back().shape(), (Shape{1, 3}));
  EXPECT_EQ(f32({2, 3}).repeat({2, 1, 2}).shape(), (Shape{2, 2, 6}));
  EXPECT_EQ(f32({2, 3}).roll({1, -1}, {0, 1}).shape(), (Shape{2, 3}));
  EXPECT_EQ(f32({3, 4}).tril().shape(), (Shape{3, 4}));
  EXPECT_EQ(f32({2, 3, 4}).triu(1).shape(), (Shape{2, 3, 4}));
  EXPECT_THROW(f32({3}).tril(), ShapeError);
}

// ---------------------------------------------------------------- indexing

TEST(TensorIndex, GatherSelectOneHot) {
  Tensor table = f32({1000, 64}), idx = typed({8}, d::int32);
  EXPECT_EQ(table[idx].shape(), (Shape{8, 64}));
  EXPECT_EQ(table.index_select(1, typed({2, 5}, d::int64)).shape(), (Shape{1000, 2, 5}));
  EXPECT_EQ(f32({3, 4}).gather(1, typed({3, 2}, d::int32)).shape(), (Shape{3, 2}));
  EXPECT_EQ(f32({3, 4}).gather(0, typed({5, 4}, d::int32)).shape(), (Shape{5, 4}));
  EXPECT_EQ(idx.one_hot(10).shape(), (Shape{8, 10}));
  EXPECT_EQ(idx.one_hot(10).dtype(), d::int32);
  EXPECT_EQ(error_of<DTypeError>([&] { table[f32({2})]; }),
            "[index_select] needs an integer index, got float");
  EXPECT_THROW(f32({3, 4}).gather(1, typed({3}, d::int32)), ShapeError);
  EXPECT_THROW(f32({3, 4}).gather(1, typed({4, 2}, d::int32)), ShapeError);
  EXPECT_THROW(idx.one_hot(0), ValueError);
}

// ---------------------------------------------------------------- linear algebra

TEST(TensorLinalg, MatmulShapes) {
  EXPECT_EQ(f32({2, 3}).matmul(f32({3, 4})).shape(), (Shape{2, 4}));
  EXPECT_EQ(f32({5, 2, 3}).matmul(f32({3, 4})).shape(), (Shape{5, 2, 4}));
  EXPECT_EQ(f32({4, 64, 128}).matmul(f32({4, 128, 32})).shape(), (Shape{4, 64, 32}));
  EXPECT_EQ(f32({7, 1, 2, 3}).matmul(f32({5, 3, 4})).shape(), (Shape{7, 5, 2, 4}));
  EXPECT_EQ(f32({3}).matmul(f32({3, 4})).shape(), Shape{4});
  EXPECT_EQ(f32({2, 3}).dot(f32({3})).shape(), Shape{2});
  EXPECT_EQ(f32({3}).dot(f32({3})).shape(), Shape{});
  EXPECT_EQ(typed({2, 3}, d::float16).matmul(typed({3, 4}, d::float16)).dtype(), d::float16);
  EXPECT_EQ(typed({2, 3}, d::int8).matmul(typed({3, 4}, d::int8)).dtype(), d::int8);
  EXPECT_EQ(typed({2, 3}, d::int8).matmul(typed({3, 4}, d::int8), d::int32).dtype(), d::int32);
}

TEST(TensorLinalg, MatmulIsOneReduce) {
  int reduces = 0;
  for (const UOp& u : f32({64, 128}).matmul(f32({128, 32})).uop().toposort())
    reduces += u.op() == Op::ReduceAxis;
  EXPECT_EQ(reduces, 1);
}

TEST(TensorLinalg, MatmulErrors) {
  EXPECT_EQ(error_of<ShapeError>([] {
              f32({2, 3}).matmul(f32({4, 5}));
            }),
            "[matmul] inner dimensions differ: (2, 3) @ (4, 5)");
  EXPECT_EQ(error_of<ShapeError>([] {
              f32({2, 3}).dot(f32({2}));
            }),
            "[dot] inner dimensions differ: (2, 3) @ (2,)");
  EXPECT_EQ(error_of<ShapeError>([] { f32({}).matmul(f32({3})); }),
            "[matmul] both tensors need at least 1 dimension: () @ (3,)");
  EXPECT_THROW(f32({2, 2, 3}).matmul(f32({3, 3, 4})), ShapeError);  // batch dims do not broadcast
}

TEST(TensorLinalg, Einsum) {
  Tensor a = f32({2, 3}), b = f32({3, 4}), v = f32({3});
  EXPECT_EQ(Tensor::einsum("ij,jk->ik", {a, b}).shape(), (Shape{2, 4}));
  EXPECT_EQ(Tensor::einsum("ij,jk", {a, b}).shape(), (Shape{2, 4}));
  EXPECT_EQ(Tensor::einsum("ij->ji", {a}).shape(), (Shape{3, 2}));
  EXPECT_EQ(Tensor::einsum("ij->", {a}).shape(), Shape{});
  EXPECT_EQ(Tensor::einsum("i,i->", {v, v}).shape(), Shape{});
  EXPECT_EQ(Tensor::einsum("i,j->ij", {v, v}).shape(), (Shape{3, 3}));
  EXPECT_EQ(Tensor::einsum("bij,bjk->bik", {f32({5, 2, 3}), f32({5, 3, 4})}).shape(), (Shape{5, 2, 4}));
  EXPECT_EQ(Tensor::einsum("...ij,...jk->...ik", {f32({7, 5, 2, 3}), f32({5, 3, 4})}).shape(),
            (Shape{7, 5, 2, 4}));
  EXPECT_EQ(Tensor::einsum("...i->...", {f32({2, 3, 4})}).shape(), (Shape{2, 3}));
  EXPECT_THROW(Tensor::einsum("ij,jk->ik", {a}), ValueError);
  EXPECT_EQ(error_of<ShapeError>([&] {
              Tensor::einsum("ij,jk->ik", {a, f32({4, 4})});
            }),
            "[einsum] letter 'j' has sizes 3 and 4");
  EXPECT_THROW(Tensor::einsum("ii->i", {f32({3, 3})}), ValueError);
  EXPECT_THROW(Tensor::einsum("ij->iz", {a}), ValueError);
}

// ---------------------------------------------------------------- nn

TEST(TensorNN, Conv2dShapes) {
  EXPECT_EQ(f32({1, 3, 8, 8}).conv2d(f32({4, 3, 3, 3})).shape(), (Shape{1, 4, 6, 6}));
  EXPECT_EQ(f32({2, 3, 16, 16}).conv2d(f32({8, 3, 3, 3}), {.bias = f32({8}), .padding = {1}}).shape(),
            (Shape{2, 8, 16, 16}));
  EXPECT_EQ(f32({1, 4, 16, 16}).conv2d(f32({8, 4, 3, 3}), {.stride = {2}}).shape(), (Shape{1, 8, 7, 7}));
  EXPECT_EQ(f32({1, 4, 9, 9}).conv2d(f32({6, 2, 3, 3}), {.groups = 2, .dilation = {2}}).shape(),
            (Shape{1, 6, 5, 5}));
  EXPECT_EQ(f32({1, 1, 5, 7}).conv2d(f32({1, 1, 2, 3}), {.stride = {1, 2}, .padding = {0, 1, 2, 0}}).shape(),
            (Shape{1, 1, 5, 4}));
  EXPECT_EQ(f32({2, 3, 10}).conv1d(f32({5, 3, 4}), {.padding = {2}}).shape(), (Shape{2, 5, 11}));
  EXPECT_EQ(f32({1, 4, 5, 5}).conv_transpose2d(f32({4, 2, 3, 3})).shape(), (Shape{1, 2, 7, 7}));
  EXPECT_EQ(f32({1, 4, 5, 5})
                .conv_transpose2d(f32({4, 3, 3, 3}),
                                  {.groups = 2, .stride = {2}, .padding = {1}, .output_padding = {1}})
                .shape(),
            (Shape{1, 6, 10, 10}));
}

TEST(TensorNN, ConvErrors) {
  EXPECT_EQ(
      error_of<ShapeError>([] {
        f32({1, 3, 8, 8}).conv2d(f32({4, 2, 3, 3}));
      }),
      "[conv2d] input (1, 3, 8, 8) has 3 channels, weight (4, 2, 3, 3) with groups=1 expects 2 (and output "
      "channels divisible by groups)");
  EXPECT_THROW(f32({1, 4, 8, 8}).conv2d(f32({3, 2, 3, 3}), {.groups = 2}), ShapeError);  // 3 % 2
  EXPECT_THROW(f32({1, 3, 8}).conv2d(f32({4, 3, 3, 3})), ShapeError);
  EXPECT_THROW(f32({1, 3, 2, 2}).conv2d(f32({4, 3, 3, 3})), ShapeError);
  EXPECT_THROW(f32({1, 3, 8, 8}).conv2d(f32({4, 3, 3, 3}), {.bias = f32({3})}), ShapeError);
  EXPECT_THROW(f32({1, 3, 8, 8}).conv2d(f32({4, 3, 3, 3}), {.padding = {1, 1, 1}}), ValueError);
  EXPECT_THROW(f32({1, 3, 8, 8}).conv2d(f32({4, 3, 3, 3}), {.groups = 0}), ValueError);
}

TEST(TensorNN, PoolShapes) {
  Tensor x = f32({1, 4, 16, 16});
  EXPECT_EQ(x.max_pool2d().shape(), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(x.avg_pool2d().shape(), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(x.max_pool2d({.kernel = {3}, .stride = {2}, .padding = {1}}).shape(), (Shape{1, 4, 8, 8}));
  EXPECT_EQ(x.avg_pool2d({.kernel = {3, 2}, .stride = {1}}).shape(), (Shape{1, 4, 14, 15}));
  EXPECT_EQ(f32({1, 1, 5, 5}).max_pool2d({.kernel = {2}, .ceil_mode = true}).shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(f32({1, 1, 5, 5}).avg_pool2d({.kernel = {2}, .ceil_mode = true}).shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(f32({1, 1, 5, 5}).avg_pool2d({.kernel = {3}, .padding = {1}, .count_include_pad = false}).shape(),
            (Shape{1, 1, 2, 2}));
  EXPECT_EQ(typed({1, 1, 4, 4}, d::int32).max_pool2d().dtype(), d::int32);
  EXPECT_THROW(f32({4}).max_pool2d(), ShapeError);
  EXPECT_THROW(f32({1, 1, 2, 2}).max_pool2d({.kernel = {3}}), ShapeError);
}

TEST(TensorNN, NormsAttentionInterpolate) {
  Tensor x = f32({8, 768});
  EXPECT_EQ(x.layernorm().shape(), x.shape());
  EXPECT_EQ(x.rmsnorm().shape(), x.shape());
  EXPECT_EQ(f32({2, 3, 4, 4}).batchnorm(f32({3}), f32({3}), f32({3}), f32({3})).shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(f32({2, 3, 4, 4}).batchnorm(std::nullopt, std::nullopt, f32({3}), f32({3})).shape(),
            (Shape{2, 3, 4, 4}));
  EXPECT_THROW(f32({2, 3, 4, 4}).batchnorm(std::nullopt, std::nullopt, f32({4}), f32({3})), ShapeError);
  Tensor q = f32({1, 12, 128, 64});
  EXPECT_EQ(q.scaled_dot_product_attention(q, q, std::nullopt, true).shape(), q.shape());
  EXPECT_EQ(
      q.scaled_dot_product_attention(f32({1, 12, 32, 64}), f32({1, 12, 32, 16}), typed({128, 32}, d::bool_))
          .shape(),
      (Shape{1, 12, 128, 16}));
  EXPECT_THROW(q.scaled_dot_product_attention(q, q, f32({128, 128}), true), ValueError);
  EXPECT_EQ(f32({1, 3, 4, 4}).interpolate({8, 6}).shape(), (Shape{1, 3, 8, 6}));
  EXPECT_EQ(f32({1, 3, 4, 4}).interpolate({2}, InterpolateMode::Nearest).shape(), (Shape{1, 3, 4, 2}));
  EXPECT_EQ(typed({1, 4}, d::uint8).interpolate({7}, InterpolateMode::Linear, true).dtype(), d::uint8);
  EXPECT_THROW(f32({4}).interpolate({2, 2}), ValueError);
  EXPECT_THROW(f32({4}).interpolate({2}, InterpolateMode::Nearest, true), ValueError);
}

TEST(TensorNN, Losses) {
  Tensor logits = f32({64, 10}), labels = typed({64}, d::int32);
  EXPECT_EQ(logits.sparse_categorical_crossentropy(labels).shape(), Shape{});
  EXPECT_EQ(logits.sparse_categorical_crossentropy(labels, -1, 0.1, Reduction::None).shape(), Shape{64});
  EXPECT_EQ(logits.cross_entropy(labels).shape(), Shape{});
  EXPECT_EQ(logits.cross_entropy(f32({64, 10}), Reduction::None).shape(), Shape{64});
  EXPECT_EQ(f32({2, 5, 3, 4}).cross_entropy(typed({2, 3, 4}, d::int32), Reduction::None).shape(),
            (Shape{2, 3, 4}));
  EXPECT_EQ(logits.log_softmax().nll_loss(labels).shape(), Shape{});
  EXPECT_EQ(logits.log_softmax().nll_loss(labels, f32({10}), 3, Reduction::Sum).shape(), Shape{});
  EXPECT_EQ(f32({5}).sigmoid().binary_cross_entropy(f32({5})).shape(), Shape{});
  EXPECT_EQ(f32({5}).binary_cross_entropy_with_logits(f32({5}), Reduction::None).shape(), Shape{5});
  EXPECT_EQ(error_of<DTypeError>([&] { logits.sparse_categorical_crossentropy(f32({64})); }),
            "[sparse_categorical_crossentropy] needs integer class labels, got float");
  EXPECT_EQ(error_of<ShapeError>([&] { logits.sparse_categorical_crossentropy(typed({32}, d::int32)); }),
            "[sparse_categorical_crossentropy] labels (32,) do not match logits (64, 10)");
  EXPECT_THROW(logits.cross_entropy(labels, Reduction::Mean, 2), ValueError);
}

// ---------------------------------------------------------------- scheduling wrappers

TEST(TensorSchedule, WrapsTheScheduler) {
  Tensor a = Tensor::from(std::vector<float>(16, 1.0f), {4, 4}, "CPU");
  Tensor b = Tensor::from(std::vector<float>(16, 2.0f), {4, 4}, "CPU");
  auto items = (a * b + 1).relu().schedule();
  ASSERT_EQ(items.size(), 1u);  // elementwise ops fuse into one kernel
  EXPECT_EQ(items[0].bufs.size(), 3u);
  EXPECT_EQ(Tensor::schedule_all({a.sum({0}), a.sum({1})}).size(), 2u);  // two reduction shapes
  Tensor k = (a + b).kernelize();
  EXPECT_EQ(k.shape(), (Shape{4, 4}));
  EXPECT_EQ(k.device(), "CPU");
}
