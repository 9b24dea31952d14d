// Compiled models (Model::save, CompiledModel::load; runtime/saved_plan.h) on every device: a saved and
// reloaded model gives the outputs the original run gave, bit for bit, and loading and running it runs
// no compiler and reads nothing from the compiler's cache; a small model's outputs also match values
// computed here on the host. Then the errors: another device kind, another sluice version, a truncated or
// damaged file, a file that is not a compiled model, inputs of another shape, dtype or name, an input
// read on the host with another value, and a write that fails leaving nothing behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "frontend/onnx/compiled_model.h"
#include "frontend/onnx/model.h"
#include "runtime/device.h"
#include "runtime/reference.h"
#include "runtime/saved_plan.h"
#include "tests/onnx/model_builder.h"

namespace sluice::onnx {
namespace {

namespace fs = std::filesystem;
using test::ModelBuilder;
using P = ::onnx::TensorProto;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) { return e.what(); }
  return "";
}

fs::path scratch() {
  const fs::path d = fs::temp_directory_path() / ("sluice_compiled_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::vector<std::byte> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> c{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}
void write_bytes(const fs::path& p, const std::vector<std::byte>& b) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

std::vector<float> ramp(size_t n, float scale, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + scale * float(i % 17) - 0.01f * float(i);
  return v;
}

// y = relu(x @ w + b) and s = sum of y over its last axis: weights, several kernels, two outputs.
constexpr int64_t kRows = 3, kIn = 5, kOut = 4;
std::vector<std::byte> small_model() {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {kRows, kIn});
  g.floats("w", ramp(kIn * kOut, 0.25f, -1.0f), {kIn, kOut});
  g.floats("b", ramp(kOut, 0.5f, -0.5f), {kOut});
  g.node("MatMul", {"x", "w"}, {"xw"});
  g.node("Add", {"xw", "b"}, {"z"});
  g.node("Relu", {"z"}, {"y"});
  g.ints("axes", {1});
  g.node("ReduceSum", {"y", "axes"}, {"s"});
  g.output("y", P::FLOAT, {kRows, kOut}).output("s", P::FLOAT, {kRows, 1});
  return mb.bytes();
}
// The same on the host, in double.
std::pair<std::vector<float>, std::vector<float>> small_model_on_host(const std::vector<float>& x) {
  const std::vector<float> w = ramp(kIn * kOut, 0.25f, -1.0f), b = ramp(kOut, 0.5f, -0.5f);
  std::vector<float> y(kRows * kOut), s(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    double sum = 0;
    for (int64_t o = 0; o < kOut; ++o) {
      double z = b[size_t(o)];
      for (int64_t i = 0; i < kIn; ++i) z += double(x[size_t(r * kIn + i)]) * w[size_t(i * kOut + o)];
      y[size_t(r * kOut + o)] = float(std::max(z, 0.0));
      sum += std::max(z, 0.0);
    }
    s[size_t(r)] = float(sum);
  }
  return {y, s};
}

// Compiler runs and cache reads of a device so far.
std::pair<uint64_t, uint64_t> compiler_counts(const std::string& device) {
  hcq::Compiler& c = open_device(device).compiler();
  return {c.invocations(), c.cache_hits()};
}

fs::path cls_model() {
  const char* env = std::getenv("SLUICE_DATA");
  const fs::path data = env && *env ? fs::path(env) : fs::path(SLUICE_SOURCE_DIR) / "data";
  return data / "ocr-models" / "assets" / "ch_ppocr_mobile_v2.0_cls_infer.onnx";
}

class Compiled : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    try {
      open_device(GetParam());
    } catch (const std::exception& e) { GTEST_SKIP() << GetParam() << " is absent: " << e.what(); }
  }
  std::string dev() const { return GetParam(); }
  fs::path file(const std::string& name) const { return scratch() / (name + "_" + dev() + ".sluice"); }

  // Runs `m` on `in`, saves it, loads it as a new object and runs that on the same inputs: the outputs
  // must be the same bits, and loading and running must not touch the compiler.
  std::vector<std::vector<float>> round_trip(Model& m, const std::map<std::string, Value>& in,
                                             const fs::path& f) {
    std::vector<std::vector<float>> want;
    std::vector<Shape> shapes;
    for (const Value& v : m.run(in)) {
      Tensor t = v.tensor();
      want.push_back(t.to_vector<float>());
      shapes.push_back(t.shape());
    }
    EXPECT_TRUE(m.last_run().captured) << m.last_run().not_captured;
    m.save(f.string());
    const auto before = compiler_counts(dev());
    CompiledModel c = CompiledModel::load(f.string());
    EXPECT_EQ(c.device(), dev());
    EXPECT_EQ(c.name(), m.name());
    for (int run = 0; run < 2; ++run) {
      std::vector<Value> out = c.run(in);
      EXPECT_EQ(out.size(), want.size());
      for (size_t k = 0; k < out.size() && k < want.size(); ++k) {
        Tensor t = out[k].tensor();
        EXPECT_EQ(t.shape(), shapes[k]);
        EXPECT_EQ(t.to_vector<float>(), want[k]) << "output " << k << ", run " << run;
      }
    }
    EXPECT_EQ(compiler_counts(dev()), before) << "loading or running the compiled model used the compiler";
    return want;
  }
};

TEST_P(Compiled, ASmallModelRoundTripsAndMatchesTheHost) {
  Model m = Model::from_bytes(small_model(), "small.onnx", "", {.device = dev()});
  const std::vector<float> x = ramp(kRows * kIn, 0.3f, -2.0f);
  const auto [y, s] = small_model_on_host(x);
  std::vector<std::vector<float>> got =
      round_trip(m, {{"x", Tensor::from(x, {kRows, kIn}, dev())}}, file("small"));
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(got[0][i], y[i], 1e-5) << i;
  for (size_t i = 0; i < s.size(); ++i) EXPECT_NEAR(got[1][i], s[i], 1e-4) << i;
  CompiledModel c = CompiledModel::load(file("small").string());
  ASSERT_EQ(c.inputs().size(), 1u);
  EXPECT_EQ(c.inputs()[0].type_str(), "tensor(float)[3, 5]");
  EXPECT_EQ(c.outputs()[1].type_str(), "tensor(float)[3, 1]");
  // Another input: the compiled model computes, it does not replay a recording.
  const std::vector<float> x2 = ramp(kRows * kIn, -0.2f, 1.0f);
  std::vector<Value> out = c.run({{"x", Tensor::from(x2, {kRows, kIn}, "CPU")}});
  Tensor t2 = out[0].tensor();
  const std::vector<float> y2 = small_model_on_host(x2).first, got2 = t2.to_vector<float>();
  for (size_t i = 0; i < y2.size(); ++i) EXPECT_NEAR(got2[i], y2[i], 1e-5) << i;
}

TEST_P(Compiled, TheOcrClassifierRoundTrips) {
  if (!fs::exists(cls_model()))
    GTEST_SKIP() << cls_model().string() << " is missing (run scripts/fetch-models.sh)";
  Model m = Model::load(cls_model().string(), {.device = dev()});
  const std::vector<float> x = Tensor::rand({1, 3, 48, 192}, 7, dtypes::float32, "CPU").to_vector<float>();
  std::vector<std::vector<float>> got =
      round_trip(m, {{"x", Tensor::from(x, {1, 3, 48, 192}, dev())}}, file("cls"));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].size(), 2u);
  EXPECT_NEAR(got[0][0] + got[0][1], 1.0f, 1e-5);  // a softmax
}

// A recurrent state passed back in: the compiled model must not overwrite what it reads.
TEST_P(Compiled, AStateFedBackStaysCorrect) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("h", P::FLOAT, {4});
  g.floats("k", {2, 2, 2, 2}, {4});
  g.node("Mul", {"h", "k"}, {"m"});
  g.node("Add", {"m", "h"}, {"y"});  // y = 3h
  g.output("y", P::FLOAT, {4});
  Model m = Model::from_bytes(mb.bytes(), "state.onnx", "", {.device = dev()});
  m.run({{"h", Tensor::from(std::vector<float>{0, 0, 0, 0}, {4}, dev())}});
  m.save(file("state").string());
  CompiledModel c = CompiledModel::load(file("state").string());
  Tensor h = Tensor::from(std::vector<float>{1, 2, 3, 4}, {4}, dev());
  for (int i = 0; i < 5; ++i) h = Tensor(c.run({{"h", h}}).at(0).tensor());
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{243, 486, 729, 972}));
}

INSTANTIATE_TEST_SUITE_P(Devices, Compiled, testing::Values("CPU", "VULKAN", "CL"),
                         [](const auto& info) { return std::string(info.param); });

// The errors, on the CPU (and the NULL device, which is always there, as the other kind).
class CompiledErrors : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    Model m = Model::from_bytes(small_model(), "small.onnx", "", {.device = "CPU"});
    m.run({{"x", Tensor::from(ramp(kRows * kIn, 1, 0), {kRows, kIn}, "CPU")}});
    m.save(good().string());
  }
  static fs::path good() { return scratch() / "errors_good.sluice"; }
  static std::string load_error(const std::vector<std::byte>& bytes) {
    const fs::path f = scratch() / "errors_bad.sluice";
    write_bytes(f, bytes);
    return error_of([&] { CompiledModel::load(f.string()); });
  }
};

TEST_F(CompiledErrors, AnotherDeviceKindNamesBoth) {
  const std::string e = error_of([] { CompiledModel::load(good().string(), "NULL"); });
  EXPECT_NE(e.find("[load]"), std::string::npos) << e;
  EXPECT_NE(e.find("was compiled for CPU"), std::string::npos) << e;
  EXPECT_NE(e.find("it cannot run on NULL"), std::string::npos) << e;
  EXPECT_THROW(CompiledModel::load(good().string(), "NULL"), DeviceError);
}

TEST_F(CompiledErrors, AnotherBinaryTargetNamesBoth) {
  SavedPlan plan = read_plan_file(good().string());
  plan.target.binary_target = "x86-64 objects for a processor of another kind";
  const fs::path f = scratch() / "errors_target.sluice";
  write_plan_file(plan, f.string());
  const std::string e = error_of([&] { CompiledModel::load(f.string()); });
  EXPECT_NE(e.find("'x86-64 objects for a processor of another kind'; CPU"), std::string::npos) << e;
  EXPECT_NE(e.find("takes cpu '" + open_device("CPU").compiler().binary_target() + "'"), std::string::npos)
      << e;
}

TEST_F(CompiledErrors, AnotherSluiceVersionIsNamed) {
  std::vector<std::byte> b = read_bytes(good());
  const std::string v = sluice_version();
  // The version follows the magic, the format and its length: bytes 16 on.
  ASSERT_EQ(std::string(reinterpret_cast<const char*>(b.data()) + 16, v.size()), v);
  b[16] = std::byte{'9'};
  const std::string e = load_error(b);
  EXPECT_NE(e.find("compiled by sluice 9" + v.substr(1) + " (format 1); this is sluice " + v),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("compile the model again"), std::string::npos) << e;
}

TEST_F(CompiledErrors, ATruncatedOrDamagedFileIsAnError) {
  const std::vector<std::byte> b = read_bytes(good());
  const std::string cut = load_error({b.begin(), b.end() - 100});
  EXPECT_NE(cut.find("truncated or damaged: " + std::to_string(b.size() - 100) + " bytes, its header says " +
                     std::to_string(b.size())),
            std::string::npos)
      << cut;
  EXPECT_NE(load_error({b.begin(), b.begin() + 20}).find("[load]"), std::string::npos);
  for (size_t at : {b.size() / 3, b.size() / 2, b.size() - 9, b.size() - 1}) {
    std::vector<std::byte> flipped = b;
    flipped[at] ^= std::byte{0x10};
    const std::string e = load_error(flipped);
    EXPECT_NE(e.find("damaged: its checksum does not match its contents"), std::string::npos)
        << at << ": " << e;
  }
  EXPECT_NE(load_error({}).find("not a compiled sluice model"), std::string::npos);
  const std::vector<std::byte> onnx = small_model();
  EXPECT_NE(load_error(onnx).find("not a compiled sluice model (`sluice compile` makes one)"),
            std::string::npos);
  EXPECT_NE(error_of([] { CompiledModel::load("/nonexistent/x.sluice"); }).find("does not exist"),
            std::string::npos);
}

TEST_F(CompiledErrors, InputsOfAnotherShapeDtypeOrNameAreErrors) {
  CompiledModel c = CompiledModel::load(good().string());
  const std::string shape = error_of([&] { c.run({{"x", Tensor::from(ramp(10, 1, 0), {2, 5}, "CPU")}}); });
  EXPECT_NE(shape.find("input 'x' was compiled for tensor(float)[3, 5], got shape (2, 5)"), std::string::npos)
      << shape;
  EXPECT_THROW(c.run({{"x", Tensor::from(ramp(10, 1, 0), {2, 5}, "CPU")}}), ShapeError);
  const std::string dtype = error_of([&] { c.run({{"x", Tensor::zeros({3, 5}, dtypes::int32, "CPU")}}); });
  EXPECT_NE(dtype.find("input 'x' was compiled for tensor(float)[3, 5], got int32 (3, 5)"), std::string::npos)
      << dtype;
  EXPECT_NE(error_of([&] { c.run({}); }).find("input 'x' (tensor(float)[3, 5]) is missing"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              c.run({{"x", Tensor::zeros({3, 5})}, {"q", Tensor::zeros({1})}});
            }).find("no input is named 'q' (inputs: x)"),
            std::string::npos);
}

// An input the graph reads on the host (a shape) is part of what the model was compiled for.
TEST_F(CompiledErrors, AnInputReadOnTheHostMustHoldItsCompiledValue) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {6}).input("shape", P::INT64, {2});
  g.node("Reshape", {"x", "shape"}, {"r"});
  g.node("Neg", {"r"}, {"y"});
  g.output_any("y", P::FLOAT);
  Model m = Model::from_bytes(mb.bytes(), "reshape.onnx", "", {.device = "CPU"});
  Tensor x = Tensor::from(ramp(6, 1, 0), {6}, "CPU");
  m.run({{"x", x}, {"shape", Tensor::from(std::vector<int64_t>{2, 3}, {2}, "CPU")}});
  const fs::path f = scratch() / "errors_reshape.sluice";
  m.save(f.string());
  CompiledModel c = CompiledModel::load(f.string());
  EXPECT_EQ(c.run({{"x", x}, {"shape", Tensor::from(std::vector<int64_t>{2, 3}, {2}, "CPU")}})
                .at(0)
                .tensor()
                .shape(),
            (Shape{2, 3}));
  const std::string e = error_of([&] {
    c.run({{"x", x}, {"shape", Tensor::from(std::vector<int64_t>{3, 2}, {2}, "CPU")}});
  });
  EXPECT_NE(
      e.find("the model read input 'shape' on the host when it was compiled, so it holds only for the value "
             "it had then, (2, 3); got (3, 2)"),
      std::string::npos)
      << e;
}

TEST_F(CompiledErrors, SavingWithoutACapturedRunIsAnError) {
  Model fresh = Model::from_bytes(small_model(), "small.onnx", "", {.device = "CPU"});
  EXPECT_NE(error_of([&] {
              fresh.save((scratch() / "none.sluice").string());
            }).find("small.onnx: run it once with inputs of the shapes to compile it for"),
            std::string::npos);
  Model uncaptured = Model::from_bytes(small_model(), "small.onnx", "", {.device = "CPU", .capture = false});
  uncaptured.run({{"x", Tensor::from(ramp(kRows * kIn, 1, 0), {kRows, kIn}, "CPU")}});
  EXPECT_NE(error_of([&] {
              uncaptured.save((scratch() / "none.sluice").string());
            }).find("its last run was not captured (capture is off)"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(scratch() / "none.sluice"));
}

// A write that fails leaves neither the file nor its temporary behind.
TEST_F(CompiledErrors, AFailedWriteLeavesNothingBehind) {
  const SavedPlan plan = read_plan_file(good().string());
  const fs::path dir = scratch() / "atomic";
  fs::create_directories(dir / "taken");  // a directory where the file should go: the rename fails
  EXPECT_NE(error_of([&] {
              write_plan_file(plan, (dir / "taken").string());
            }).find("cannot write the compiled model"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              write_plan_file(plan, (dir / "missing" / "x.sluice").string());
            }).find("cannot write the compiled model"),
            std::string::npos);
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename(), "taken") << e.path();
  EXPECT_TRUE(fs::is_empty(dir / "taken"));
}

}  // namespace
}  // namespace sluice::onnx
