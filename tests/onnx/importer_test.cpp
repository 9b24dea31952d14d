// The ONNX importer's pieces (frontend/onnx): parsing every attribute and data field, external data and
// its errors, the checks made at load and at run, shape arithmetic folding on the host, and capture:
// a second run with the same input shapes replays and compiles nothing. Then attribute defaults that
// moved between opsets, subgraphs reading the values of enclosing graphs, and TfIdfVectorizer's modes,
// each against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "frontend/onnx/model.h"
#include "frontend/onnx/proto.h"
#include "runtime/buffer.h"
#include "tests/onnx/model_builder.h"

namespace sluice::onnx {
namespace {

namespace fs = std::filesystem;
using test::attr;
using test::ModelBuilder;
using P = ::onnx::TensorProto;

constexpr const char* kDev = "CPU";

Tensor floats(std::vector<float> v, Shape shape) { return Tensor::from(v, shape, kDev); }

// The message of the sluice::Error that f throws; "" if it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) { return e.what(); }
  return "";
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("sluice_onnx_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(OnnxProto, ReadsEveryAttributeType) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {2});
  auto* n = g.node("Custom", {"x"}, {"y"}, "n");
  attr(n, "i", int64_t(-3));
  attr(n, "is", std::vector<int64_t>{1, 2});
  test::attr_f(n, "f", 0.5f);
  auto* s = n->add_attribute();
  s->set_name("s");
  s->set_type(::onnx::AttributeProto::STRING);
  s->set_s("text");
  auto* t = n->add_attribute();
  t->set_name("t");
  t->set_type(::onnx::AttributeProto::TENSOR);
  t->mutable_t()->set_data_type(P::INT32);
  t->mutable_t()->add_dims(2);
  t->mutable_t()->add_int32_data(7);
  t->mutable_t()->add_int32_data(-8);
  test::attr_graph(n, "body")->set_name("inner");
  g.output("y", P::FLOAT, {2});
  auto m = parse_model_bytes(mb.bytes(), "m.onnx", "");
  const Node& node = m->graph->nodes.at(0);
  EXPECT_EQ(node.name, "n");
  EXPECT_EQ(std::get<int64_t>(node.attrs.at("i")), -3);
  EXPECT_EQ(std::get<std::vector<int64_t>>(node.attrs.at("is")), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(std::get<double>(node.attrs.at("f")), 0.5);
  EXPECT_EQ(std::get<std::string>(node.attrs.at("s")), "text");
  const auto& td = std::get<std::shared_ptr<const TensorData>>(node.attrs.at("t"));
  EXPECT_EQ(td->dtype, dtypes::int32);
  int32_t vals[2];
  std::memcpy(vals, td->host->bytes.data(), 8);
  EXPECT_EQ(vals[0], 7);
  EXPECT_EQ(vals[1], -8);
  EXPECT_EQ(std::get<std::shared_ptr<const Graph>>(node.attrs.at("body"))->name, "inner");
  EXPECT_EQ(m->opset, 13);
}

TEST(OnnxProto, TypedFieldsGiveStorageBytes) {
  struct Row {
    int type;
    DType dtype;
    std::vector<std::byte> want;
  };
  auto bytes = [](auto... v) {
    std::vector<std::byte> b;
    auto put = [&](auto x) {
      const auto* p = reinterpret_cast<const std::byte*>(&x);
      b.insert(b.end(), p, p + sizeof x);
    };
    (put(v), ...);
    return b;
  };
  ::onnx::TensorProto f16, b, u64, i8, d;
  f16.set_data_type(P::FLOAT16), f16.add_dims(2), f16.add_int32_data(0x3c00), f16.add_int32_data(0xc000);
  b.set_data_type(P::BOOL), b.add_dims(3), b.add_int32_data(1), b.add_int32_data(0), b.add_int32_data(5);
  u64.set_data_type(P::UINT64), u64.add_dims(1), u64.add_uint64_data(~uint64_t(0));
  i8.set_data_type(P::INT8), i8.add_dims(2), i8.add_int32_data(-1), i8.add_int32_data(127);
  d.set_data_type(P::DOUBLE), d.add_dims(1), d.add_double_data(0.1);
  EXPECT_EQ(tensor_from_proto(f16, "", "f16")->host->bytes, bytes(uint16_t(0x3c00), uint16_t(0xc000)));
  EXPECT_EQ(tensor_from_proto(b, "", "b")->host->bytes, bytes(uint8_t(1), uint8_t(0), uint8_t(1)));
  EXPECT_EQ(tensor_from_proto(u64, "", "u64")->host->bytes, bytes(~uint64_t(0)));
  EXPECT_EQ(tensor_from_proto(i8, "", "i8")->host->bytes, bytes(int8_t(-1), int8_t(127)));
  EXPECT_EQ(tensor_from_proto(d, "", "d")->host->bytes, bytes(0.1));
  // Data that does not fill the shape, and types sluice does not have.
  ::onnx::TensorProto short_f;
  short_f.set_data_type(P::FLOAT), short_f.add_dims(3), short_f.add_float_data(1);
  EXPECT_EQ(error_of([&] { tensor_from_proto(short_f, "", "m.onnx: initializer 'w'"); }),
            "[onnx] m.onnx: initializer 'w': holds 4 bytes of data, but shape (3,) of float needs 12");
  ::onnx::TensorProto str;
  str.set_data_type(P::STRING), str.add_dims(1), str.add_string_data("a");
  EXPECT_EQ(error_of([&] { tensor_from_proto(str, "", "s"); }),
            "[onnx] s: has element type string, which sluice does not have");
}

// y = x + w, with w stored in a file next to the model, at an offset.
ModelBuilder external_model(const std::string& location, int64_t offset, int64_t length) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {3});
  g.node("Add", {"x", "w"}, {"y"});
  g.output("y", P::FLOAT, {3});
  auto* w = g.proto()->add_initializer();
  w->set_name("w");
  w->set_data_type(P::FLOAT);
  w->add_dims(3);
  w->set_data_location(P::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  kv("length", std::to_string(length));
  return mb;
}

void write(const fs::path& p, const std::vector<std::byte>& b) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

TEST(OnnxProto, ExternalDataLoadsAtItsOffset) {
  const fs::path dir = temp_dir("external");
  std::vector<float> file = {99, 1, 2, 3, 99};
  write(dir / "weights.bin", std::vector<std::byte>(reinterpret_cast<std::byte*>(file.data()),
                                                    reinterpret_cast<std::byte*>(file.data() + file.size())));
  write(dir / "m.onnx", external_model("weights.bin", 4, 12).bytes());
  Model m = Model::load((dir / "m.onnx").string(), {.device = kDev});
  std::vector<Value> out = m.run({{"x", floats({10, 20, 30}, {3})}});
  EXPECT_EQ(out.at(0).tensor().to_vector<float>(), (std::vector<float>{11, 22, 33}));
  fs::remove_all(dir);
}

TEST(OnnxProto, ExternalDataErrorsNameTheFileAndTheValues) {
  const fs::path dir = temp_dir("external_bad");
  write(dir / "weights.bin", std::vector<std::byte>(16));
  auto load = [&](const std::string& loc, int64_t off, int64_t len) {
    write(dir / "m.onnx", external_model(loc, off, len).bytes());
    return error_of([&] { Model::load((dir / "m.onnx").string(), {.device = kDev}); });
  };
  EXPECT_NE(load("missing.bin", 0, 12)
                .find("external data file '" + (dir / "missing.bin").string() + "' cannot be read"),
            std::string::npos);
  EXPECT_NE(load("weights.bin", 20, 12).find("offset 20 is past the end of"), std::string::npos);
  EXPECT_NE(load("weights.bin", 8, 12).find("offset 8 + length 12 is past the end of"), std::string::npos);
  EXPECT_NE(load("../etc/passwd", 0, 12).find("is outside the model's folder"), std::string::npos);
  const std::string wrong = load("weights.bin", 0, 8);
  EXPECT_NE(wrong.find("initializer 'w': holds 8 bytes of data, but shape (3,) of float needs 12"),
            std::string::npos)
      << wrong;
  fs::remove_all(dir);
}

// Every truncation and many corruptions of a model either load or throw sluice::Error (never crash).
TEST(OnnxProto, TruncatedOrCorruptedFilesGiveClearErrors) {
  const std::vector<std::byte> good = external_model("w.bin", 0, 12).bytes();
  int errors = 0;
  for (size_t n = 0; n < good.size(); ++n) {
    std::span<const std::byte> cut(good.data(), n);
    std::string e = error_of([&] { Model::from_bytes(cut, "cut.onnx", "", {.device = kDev}); });
    errors += !e.empty();
    EXPECT_EQ(e.rfind("[onnx] cut.onnx", 0), 0u) << n << ": " << e;
  }
  EXPECT_GT(errors, int(good.size()) / 2);
  const std::string e = error_of([] {
    std::vector<std::byte> junk(64, std::byte{0xff});
    Model::from_bytes(junk, "junk.onnx", "");
  });
  EXPECT_EQ(
      e,
      "[onnx] junk.onnx: is not a valid ONNX model (the protobuf does not parse: truncated or corrupted?)");
  EXPECT_EQ(error_of([] { Model::load("/nonexistent/m.onnx"); }),
            "[onnx] /nonexistent/m.onnx: does not exist or is not a file");
}

TEST(OnnxModel, UnsupportedOpsAreListedAtOnceWithTheirNodes) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {2});
  g.node("Frobnicate", {"x"}, {"a"}, "f1");
  g.node("Frobnicate", {"a"}, {"b"}, "f2");
  g.node("Relu", {"b"}, {"c"}, "ok");
  g.node("Bar", {"c"}, {"y"}, "bar")->set_domain("com.example");
  g.output("y", P::FLOAT, {2});
  EXPECT_EQ(error_of([&] { Model::from_bytes(mb.bytes(), "m.onnx", "", {.device = kDev}); }),
            "[onnx] m.onnx: ops sluice does not support: Frobnicate (nodes 'f1', 'f2'), com.example.Bar "
            "(node 'bar')");
}

TEST(OnnxModel, AValueNoNodeMakesIsNamedAtLoad) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {2});
  g.node("Add", {"x", "nowhere"}, {"y"}, "add");
  g.output("y", P::FLOAT, {2});
  EXPECT_EQ(
      error_of([&] { Model::from_bytes(mb.bytes(), "m.onnx", "", {.device = kDev}); }),
      "[onnx] m.onnx: node 'add' (Add) reads 'nowhere', which no earlier node, initializer or graph input "
      "makes");
}

// y = a + b with a: [batch, 3] float, b: [batch, 3] float.
Model add_model() {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("a", P::FLOAT, {"batch", 3}).input("b", P::FLOAT, {"batch", 3});
  g.node("Add", {"a", "b"}, {"y"});
  g.output("y", P::FLOAT, {"batch", 3});
  return Model::from_bytes(mb.bytes(), "add.onnx", "", {.device = kDev});
}

TEST(OnnxModel, InputsAreCheckedAgainstTheirDeclaredTypes) {
  Model m = add_model();
  Tensor ok = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of([&] {
              m.run({{"a", ok}, {"b", ok}, {"c", ok}});
            }),
            "[onnx] add.onnx: no input is named 'c' (inputs: a, b)");
  EXPECT_EQ(error_of([&] {
              m.run({{"a", ok}});
            }),
            "[onnx] add.onnx: input 'b' (tensor(float)[batch, 3]) is missing");
  EXPECT_EQ(error_of([&] {
              m.run({{"a", ok}, {"b", Tensor::from(std::vector<int32_t>(6), {2, 3}, kDev)}});
            }),
            "[onnx] add.onnx: input 'b' is declared tensor(float)[batch, 3], got int32 (2, 3)");
  EXPECT_EQ(error_of([&] {
              m.run({{"a", ok}, {"b", floats({1, 2, 3}, {3})}});
            }),
            "[onnx] add.onnx: input 'b' is declared tensor(float)[batch, 3] (rank 2), got shape (3,)");
  EXPECT_EQ(
      error_of([&] {
        m.run({{"a", ok}, {"b", floats({1, 2, 3, 4}, {2, 2})}});
      }),
      "[onnx] add.onnx: input 'b' is declared tensor(float)[batch, 3], got shape (2, 2) (dim 1 is 2, not 3)");
  EXPECT_EQ(error_of([&] {
              m.run({{"a", ok}, {"b", floats({1, 2, 3}, {1, 3})}});
            }),
            "[onnx] add.onnx: input 'b' has batch = 1 (dim 0), but an earlier input bound batch = 2");
  std::vector<Value> out = m.run({{"a", ok}, {"b", ok}});
  EXPECT_EQ(out.at(0).tensor().to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST(OnnxModel, AnOutputThatDisagreesWithItsDeclarationIsAnError) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {2, 3});
  g.node("Relu", {"x"}, {"y"});
  g.output("y", P::FLOAT, {3, 2});
  Model m = Model::from_bytes(mb.bytes(), "m.onnx", "", {.device = kDev});
  EXPECT_EQ(error_of([&] {
              m.run({{"x", floats({1, 2, 3, 4, 5, 6}, {2, 3})}});
            }),
            "[onnx] m.onnx: output 'y' is declared tensor(float)[3, 2], but the graph computes float (2, 3)");
}

TEST(OnnxModel, AnOpErrorNamesTheModelTheNodeAndTheValues) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {2, 3}).input("z", P::FLOAT, {4});
  g.node("Add", {"x", "z"}, {"y"}, "adder");
  g.output_any("y", P::FLOAT);
  Model m = Model::from_bytes(mb.bytes(), "m.onnx", "", {.device = kDev});
  const std::string e = error_of([&] {
    m.run({{"x", floats(std::vector<float>(6), {2, 3})}, {"z", floats({1, 2, 3, 4}, {4})}});
  });
  EXPECT_EQ(e.rfind("[onnx] m.onnx: node 'adder' (Add): ", 0), 0u) << e;
  EXPECT_NE(e.find("(2, 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("(4,)"), std::string::npos) << e;
}

// Range computes its values on the host: inputs of mixed dtypes, a count past the limit and an int64
// overflow are errors (the fuzz target found the first reading an empty array).
TEST(OnnxModel, RangeRejectsMixedDtypesAndImpossibleCounts) {
  auto range = [](int start_type, int limit_type) {
    ModelBuilder mb;
    auto g = mb.graph();
    g.input("s", start_type, {}).input("l", limit_type, {}).input("d", start_type, {});
    g.node("Range", {"s", "l", "d"}, {"y"}, "r");
    g.output_any("y", start_type);
    return Model::from_bytes(mb.bytes(), "range.onnx", "", {.device = kDev});
  };
  auto f = [](float v) { return Tensor::from({v}, {}, kDev); };
  auto i = [](int64_t v) { return Tensor::from({v}, {}, kDev); };
  Model mixed = range(P::FLOAT, P::INT64);
  EXPECT_EQ(error_of([&] {
              mixed.run({{"s", f(0)}, {"l", i(4)}, {"d", f(1)}});
            }),
            "[onnx] range.onnx: node 'r' (Range): start, limit and delta must have one dtype, got float, "
            "long, float");
  Model floats_model = range(P::FLOAT, P::FLOAT);
  EXPECT_EQ(floats_model.run({{"s", f(1)}, {"l", f(2)}, {"d", f(0.25f)}}).at(0).tensor().to_vector<float>(),
            (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  const std::string e = error_of([&] { floats_model.run({{"s", f(0)}, {"l", f(1e30f)}, {"d", f(1)}}); });
  EXPECT_NE(e.find("elements, over 268435456"), std::string::npos) << e;
  Model ints = range(P::INT64, P::INT64);
  const std::string o = error_of([&] { ints.run({{"s", i(INT64_MIN)}, {"l", i(INT64_MAX)}, {"d", i(1)}}); });
  EXPECT_NE(o.find("overflows int64"), std::string::npos) << o;
  EXPECT_EQ(ints.run({{"s", i(10)}, {"l", i(4)}, {"d", i(-3)}}).at(0).tensor().to_vector<int64_t>(),
            (std::vector<int64_t>{10, 7}));
}

// x (batch, 6) -> Reshape(x, concat(shape(x)[0:1], [2, 3])) -> Relu: the shape arithmetic folds on the
// host, so the run is one kernel, and a second run with the same batch replays it and compiles nothing.
Model reshape_model() {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {"batch", 6});
  g.ints("zero", {0}, {});
  g.ints("rest", {2, 3});
  g.ints("axes", {0});
  g.node("Shape", {"x"}, {"s"});
  g.node("Gather", {"s", "zero"}, {"b"});
  g.node("Unsqueeze", {"b", "axes"}, {"b1"});
  g.node("Concat", {"b1", "rest"}, {"shape"})->add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  g.node("Reshape", {"x", "shape"}, {"r"});
  g.node("Relu", {"r"}, {"y"});
  g.output("y", P::FLOAT, {"batch", 2, 3});
  return Model::from_bytes(mb.bytes(), "reshape.onnx", "", {.device = kDev});
}

std::vector<float> ramp(int n, float start) {
  std::vector<float> v(size_t(n), 0);
  for (int i = 0; i < n; ++i) v[size_t(i)] = start + float(i);
  return v;
}

TEST(OnnxModel, ShapeArithmeticFoldsAndTheSecondRunReplays) {
  Model m = reshape_model();
  for (int run = 0; run < 3; ++run) {
    const float start = float(run) - 4;
    std::vector<Value> out = m.run({{"x", floats(ramp(12, start), {2, 6})}});
    const RunInfo& info = m.last_run();
    EXPECT_EQ(out.at(0).tensor().shape(), (Shape{2, 2, 3}));
    std::vector<float> want = ramp(12, start);
    for (float& v : want) v = std::max(v, 0.0f);
    EXPECT_EQ(out.at(0).tensor().to_vector<float>(), want) << run;
    if (run == 0) {
      EXPECT_TRUE(info.captured) << info.not_captured;
      EXPECT_EQ(info.kernels, 1u) << "the shape arithmetic became kernels";
    } else {
      EXPECT_TRUE(info.replayed) << run;
      EXPECT_EQ(info.compiled, 0u);
      EXPECT_EQ(info.build_ms, 0);
    }
  }
  // Another batch: a plan of its own, still one kernel.
  std::vector<Value> out = m.run({{"x", floats(ramp(18, 1), {3, 6})}});
  EXPECT_FALSE(m.last_run().replayed);
  EXPECT_EQ(m.last_run().kernels, 1u);
  EXPECT_EQ(out.at(0).tensor().shape(), (Shape{3, 2, 3}));
}

// A shape given as an input is read on the host: its values join the replay key.
TEST(OnnxModel, AnInputReadOnTheHostJoinsTheReplayKey) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("x", P::FLOAT, {6}).input("shape", P::INT64, {2});
  g.node("Reshape", {"x", "shape"}, {"r"});
  g.node("Neg", {"r"}, {"y"});
  g.output_any("y", P::FLOAT);
  Model m = Model::from_bytes(mb.bytes(), "m.onnx", "", {.device = kDev});
  Tensor x = floats(ramp(6, 0), {6});
  auto run = [&](std::vector<int64_t> s) {
    return m.run({{"x", x}, {"shape", Tensor::from(s, {2}, kDev)}}).at(0).tensor().shape();
  };
  EXPECT_EQ(run({2, 3}), (Shape{2, 3}));
  EXPECT_EQ(run({3, 2}), (Shape{3, 2}));
  EXPECT_FALSE(m.last_run().replayed);
  EXPECT_EQ(run({2, 3}), (Shape{2, 3}));
  EXPECT_TRUE(m.last_run().replayed);
}

// A recurrent state: the output of one run is the next run's input (the replay must not overwrite
// what it reads).
TEST(OnnxModel, AStateFedBackThroughReplaysStaysCorrect) {
  ModelBuilder mb;
  auto g = mb.graph();
  g.input("h", P::FLOAT, {4});
  g.floats("k", {2, 2, 2, 2}, {4});
  g.node("Mul", {"h", "k"}, {"m"});
  g.node("Add", {"m", "h"}, {"y"});  // y = 3h
  g.output("y", P::FLOAT, {4});
  Model m = Model::from_bytes(mb.bytes(), "m.onnx", "", {.device = kDev});
  Tensor h = floats({1, 2, 3, 4}, {4});
  for (int i = 0; i < 5; ++i) h = m.run({{"h", h}}).at(0).tensor();
  EXPECT_TRUE(m.last_run().replayed);
  EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{243, 486, 729, 972}));
}

// A scalar exponent the model fixes is read on the host: x ** 2 multiplies (exactly, as C's pow rounds
// it), x ** 3 too (within an ulp), x ** 0.5 is a square root; a negative base keeps its sign under an odd
// power. The same exponent as a graph input takes the general exp2/log2 path and agrees to float
// rounding; an exponent of more dimensions than the base still broadcasts the result.
TEST(OnnxModel, PowByAnInitializerExponentMultiplies) {
  std::vector<float> xs;
  for (int i = 0; i < 64; ++i) xs.push_back(-3.3f + 0.1037f * float(i));
  auto pow_model = [](std::vector<test::D> e_dims, bool e_input, float e) {
    ModelBuilder mb;
    auto g = mb.graph();
    g.input("x", P::FLOAT, {64});
    std::vector<int64_t> dims;
    for (const test::D& d : e_dims) dims.push_back(d.size);
    if (e_input)
      g.input("e", P::FLOAT, e_dims);
    else
      g.floats("e", {e}, dims);
    g.node("Pow", {"x", "e"}, {"y"});
    g.output_any("y", P::FLOAT);
    return Model::from_bytes(mb.bytes(), "pow.onnx", "", {.device = kDev});
  };
  for (float e : {2.0f, 3.0f, 0.5f}) {
    Model m = pow_model({}, false, e);
    std::vector<float> got = m.run({{"x", floats(xs, {64})}}).at(0).tensor().to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const float x = xs[i], want = float(std::pow(double(x), double(e)));
      if (e == 0.5f && x < 0)
        EXPECT_TRUE(std::isnan(got[i])) << x;
      else if (e == 3.0f)
        EXPECT_NEAR(got[i], want, std::abs(want) * 1.2e-7f) << x << " ** 3";
      else
        EXPECT_EQ(got[i], want) << x << " ** " << e;
    }
  }
  Model general = pow_model({}, true, 0);
  std::vector<float> got =
      general.run({{"x", floats(xs, {64})}, {"e", floats({3.0f}, {})}}).at(0).tensor().to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], xs[i] * xs[i] * xs[i], 1e-5 * 36) << xs[i];
  Model wide = pow_model({1, 1}, false, 2.0f);
  Tensor y = wide.run({{"x", floats(xs, {64})}}).at(0).tensor();
  EXPECT_EQ(y.shape(), (Shape{1, 64}));
  EXPECT_NEAR(y.to_vector<float>()[5], xs[5] * xs[5], 1e-5);
}

// ---------------------------------------------------------------- attribute defaults per opset

void expect_values(const Value& v, const std::vector<double>& want, const Shape& shape) {
  const Tensor& t = v.tensor();
  EXPECT_EQ(t.shape(), shape);
  std::vector<double> got = t.cast(dtypes::float64).to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
}

// Runs one node `op` of opset `opset` on the float input "x"; `set` adds its attributes and initializers.
template <class F>
std::vector<Value> run_node(int opset, const std::string& op, const Tensor& x,
                            std::vector<std::string> inputs, size_t outputs, F set) {
  ModelBuilder mb(opset);
  auto g = mb.graph();
  g.input("x", P::FLOAT, std::vector<test::D>(x.shape().begin(), x.shape().end()));
  std::vector<std::string> outs;
  for (size_t k = 0; k < outputs; ++k) outs.push_back("y" + std::to_string(k));
  set(g, g.node(op, std::move(inputs), outs));
  for (const std::string& o : outs) g.output_any(o, P::FLOAT);
  return Model::from_bytes(mb.bytes(), op + ".onnx", "", {.device = kDev}).run({{"x", x}});
}
auto no_attrs = [](auto&, auto*) {};

// Before opset 13 Softmax flattens x to 2-D at `axis` (default 1) and normalizes each row; since 13 it
// normalizes along `axis` (default -1). x = ln(1..8) as (2, 2, 2), so the softmax of a group is v / sum(v).
TEST(OnnxOpsetDefaults, SoftmaxFlattensAtAxis1BeforeOpset13AndUsesTheLastAxisSince) {
  std::vector<float> v;
  for (int k = 1; k <= 8; ++k) v.push_back(std::log(float(k)));
  Tensor x = floats(v, {2, 2, 2});
  expect_values(run_node(11, "Softmax", x, {"x"}, 1, no_attrs).at(0),
                {1 / 10., 2 / 10., 3 / 10., 4 / 10., 5 / 26., 6 / 26., 7 / 26., 8 / 26.}, {2, 2, 2});
  const std::vector<double> pairs = {1 / 3., 2 / 3., 3 / 7., 4 / 7., 5 / 11., 6 / 11., 7 / 15., 8 / 15.};
  expect_values(run_node(13, "Softmax", x, {"x"}, 1, no_attrs).at(0), pairs, {2, 2, 2});
  expect_values(run_node(11, "Softmax", x, {"x"}, 1, [](auto&, auto* n) { attr(n, "axis", 2); }).at(0), pairs,
                {2, 2, 2});
  // Since 13 axis 1 is that axis alone: (1, 3) / 4, (2, 4) / 6, (5, 7) / 12, (6, 8) / 14.
  expect_values(run_node(13, "Softmax", x, {"x"}, 1, [](auto&, auto* n) { attr(n, "axis", 1); }).at(0),
                {1 / 4., 2 / 6., 3 / 4., 4 / 6., 5 / 12., 6 / 14., 7 / 12., 8 / 14.}, {2, 2, 2});
}

// Clip's bounds are attributes before opset 11 and optional inputs since; either left out is no bound.
TEST(OnnxOpsetDefaults, ClipTakesItsBoundsAsAttributesBeforeOpset11AndAsInputsSince) {
  Tensor x = floats({-3, -1, 0.5, 2, 5}, {5});
  auto clip6 = [&](std::optional<float> lo, std::optional<float> hi) {
    return run_node(6, "Clip", x, {"x"}, 1,
                    [&](auto&, auto* n) {
                      if (lo) test::attr_f(n, "min", *lo);
                      if (hi) test::attr_f(n, "max", *hi);
                    })
        .at(0);
  };
  expect_values(clip6(-1, 2), {-1, -1, 0.5, 2, 2}, {5});
  expect_values(clip6(std::nullopt, 2), {-3, -1, 0.5, 2, 2}, {5});
  expect_values(clip6(std::nullopt, std::nullopt), {-3, -1, 0.5, 2, 5}, {5});
  auto clip11 = [&](const std::string& lo, const std::string& hi) {
    return run_node(11, "Clip", x, {"x", lo, hi}, 1,
                    [](auto& g, auto*) {
                      g.floats("lo", {-1}, {});
                      g.floats("hi", {2}, {});
                    })
        .at(0);
  };
  expect_values(clip11("lo", "hi"), {-1, -1, 0.5, 2, 2}, {5});
  expect_values(clip11("", "hi"), {-3, -1, 0.5, 2, 2}, {5});
  expect_values(clip11("lo", ""), {-1, -1, 0.5, 2, 5}, {5});
}

// ReduceSum's axes are an attribute before opset 13 and an input since, where no axes (or an empty
// tensor) reduce everything unless noop_with_empty_axes makes them the identity. keepdims defaults to 1.
TEST(OnnxOpsetDefaults, ReduceSumTakesAxesAsAnAttributeBeforeOpset13AndAsAnInputSince) {
  Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  auto sum = [&](int opset, std::vector<std::string> in, auto set) {
    return run_node(opset, "ReduceSum", x, in, 1, set).at(0);
  };
  expect_values(sum(11, {"x"}, [](auto&, auto* n) { attr(n, "axes", std::vector<int64_t>{1}); }), {6, 15},
                {2, 1});
  expect_values(sum(11, {"x"}, no_attrs), {21}, {1, 1});
  expect_values(sum(11, {"x"},
                    [](auto&, auto* n) { attr(n, "axes", std::vector<int64_t>{0}), attr(n, "keepdims", 0); }),
                {5, 7, 9}, {3});
  expect_values(sum(13, {"x", "axes"}, [](auto& g, auto*) { g.ints("axes", {1}); }), {6, 15}, {2, 1});
  expect_values(
      sum(13, {"x", "axes"}, [](auto& g, auto* n) { g.ints("axes", {-2}), attr(n, "keepdims", 0); }),
      {5, 7, 9}, {3});
  expect_values(sum(13, {"x"}, no_attrs), {21}, {1, 1});
  expect_values(sum(13, {"x"}, [](auto&, auto* n) { attr(n, "noop_with_empty_axes", 1); }),
                {1, 2, 3, 4, 5, 6}, {2, 3});
  expect_values(sum(13, {"x", "axes"},
                    [](auto& g, auto* n) { g.ints("axes", {}, {0}), attr(n, "noop_with_empty_axes", 1); }),
                {1, 2, 3, 4, 5, 6}, {2, 3});
  expect_values(sum(13, {"x", "axes"}, [](auto& g, auto*) { g.ints("axes", {}, {0}); }), {21}, {1, 1});
}

// Split's sizes are the `split` attribute before opset 13 and an input since; without them the parts
// are equal (one per output), and since opset 18 num_outputs may say how many, the last part smaller.
TEST(OnnxOpsetDefaults, SplitTakesSizesAsAnAttributeThenAnInputThenNumOutputs) {
  Tensor x7 = floats({1, 2, 3, 4, 5, 6, 7}, {7});
  auto split = [&](int opset, const Tensor& x, std::vector<std::string> in, size_t outputs, auto set) {
    return run_node(opset, "Split", x, in, outputs, set);
  };
  std::vector<Value> p = split(11, x7, {"x"}, 2, [](auto&, auto* n) {
    attr(n, "split", std::vector<int64_t>{2, 5});
  });
  expect_values(p.at(0), {1, 2}, {2});
  expect_values(p.at(1), {3, 4, 5, 6, 7}, {5});
  p = split(11, floats({1, 2, 3, 4, 5, 6}, {6}), {"x"}, 3, no_attrs);
  expect_values(p.at(0), {1, 2}, {2});
  expect_values(p.at(1), {3, 4}, {2});
  expect_values(p.at(2), {5, 6}, {2});
  p = split(13, x7, {"x", "sizes"}, 2, [](auto& g, auto*) { g.ints("sizes", {3, 4}); });
  expect_values(p.at(0), {1, 2, 3}, {3});
  expect_values(p.at(1), {4, 5, 6, 7}, {4});
  p = split(18, x7, {"x"}, 3, [](auto&, auto* n) { attr(n, "num_outputs", 3); });
  expect_values(p.at(0), {1, 2, 3}, {3});
  expect_values(p.at(1), {4, 5, 6}, {3});
  expect_values(p.at(2), {7}, {1});
  p = split(18, x7, {"x", "sizes"}, 2, [](auto& g, auto*) { g.ints("sizes", {6, 1}); });
  expect_values(p.at(0), {1, 2, 3, 4, 5, 6}, {6});
  expect_values(p.at(1), {7}, {1});
}

// ---------------------------------------------------------------- subgraphs capturing outer values

// Three trips of a Loop whose body holds an If: even iterations add w (made by a node of the outer
// graph, two scopes up), odd ones subtract k (an outer initializer). The body reads its own initializers,
// its inputs (the iteration number, the carried acc) and, in the If's branches, both outer values.
//   w = 2x;  acc = 0;  for i in 0..2: acc = i % 2 == 0 ? acc + w : acc - k;  trace[i] = acc
Model loop_if_model() {
  ModelBuilder mb(13);
  auto g = mb.graph();
  g.input("x", P::FLOAT, {2});
  g.floats("k", {10, 20}, {2});
  g.floats("two", {2}, {});
  g.floats("acc0", {0, 0}, {2});
  g.ints("trips", {3}, {});
  g.node("Mul", {"x", "two"}, {"w"}, "outer_w");
  auto* loop = g.node("Loop", {"trips", "", "acc0"}, {"acc", "trace"}, "loop");
  test::GraphBuilder body(test::attr_graph(loop, "body"));
  body.proto()->set_name("body");
  body.input("i", P::INT64, {}).input("cond", P::BOOL, {}).input("acc_in", P::FLOAT, {2});
  body.ints("two_i", {2}, {});
  body.ints("zero_i", {0}, {});
  body.node("Mod", {"i", "two_i"}, {"parity"});
  body.node("Equal", {"parity", "zero_i"}, {"even"});
  auto* branch = body.node("If", {"even"}, {"next"}, "branch");
  test::GraphBuilder then_g(test::attr_graph(branch, "then_branch"));
  then_g.proto()->set_name("add_w");
  then_g.node("Add", {"acc_in", "w"}, {"t"});
  then_g.output_any("t", P::FLOAT);
  test::GraphBuilder else_g(test::attr_graph(branch, "else_branch"));
  else_g.proto()->set_name("sub_k");
  else_g.node("Sub", {"acc_in", "k"}, {"e"});
  else_g.output_any("e", P::FLOAT);
  body.node("Identity", {"cond"}, {"cond_out"});
  body.node("Identity", {"next"}, {"acc_out"});
  body.node("Identity", {"next"}, {"trace_out"});
  body.output("cond_out", P::BOOL, {}).output("acc_out", P::FLOAT, {2}).output("trace_out", P::FLOAT, {2});
  g.output("acc", P::FLOAT, {2}).output("trace", P::FLOAT, {3, 2});
  return Model::from_bytes(mb.bytes(), "loop_if.onnx", "", {.device = kDev});
}

TEST(OnnxSubgraphs, ALoopBodysIfReadsValuesOfTheOuterGraph) {
  Model m = loop_if_model();
  // x = (1, 2): w = (2, 4), k = (10, 20): (2, 4), (-8, -16), (-6, -12).
  std::vector<Value> out = m.run({{"x", floats({1, 2}, {2})}});
  expect_values(out.at(0), {-6, -12}, {2});
  expect_values(out.at(1), {2, 4, -8, -16, -6, -12}, {3, 2});
  // x = (3, -1): w = (6, -2): (6, -2), (-4, -22), (2, -24); the same shapes, so a replay if captured.
  out = m.run({{"x", floats({3, -1}, {2})}});
  expect_values(out.at(0), {2, -24}, {2});
  expect_values(out.at(1), {6, -2, -4, -22, 2, -24}, {3, 2});
}

// ---------------------------------------------------------------- TfIdfVectorizer beyond the suite's TF

// Rows (1, 2, 1, 3, 2) and (3, 3, 3, 7, 1); pool: unigrams 1, 3, 7 and bigrams (1, 2), (2, 3), numbered
// 0..4 and counted into coordinates 4..0 (reversed). Bigrams skip up to 1: row 0 has (1, 2) at distance 1
// (x0, x1) and 2 (x2, x4), and (2, 3) at distance 2 (x1, x3). Counts per gram: row 0 (2, 1, 0, 2, 1),
// row 1 (1, 3, 1, 0, 0); by coordinate: (1, 2, 0, 1, 2) and (0, 0, 1, 3, 1). Weights are per coordinate.
std::vector<double> tfidf(const std::string& mode, int64_t min_gram) {
  ModelBuilder mb(13);
  auto g = mb.graph();
  g.input("x", P::INT32, {2, 5});
  auto* n = g.node("TfIdfVectorizer", {"x"}, {"y"});
  test::attr_s(n, "mode", mode);
  attr(n, "min_gram_length", min_gram), attr(n, "max_gram_length", 2), attr(n, "max_skip_count", 1);
  attr(n, "ngram_counts", std::vector<int64_t>{0, 3});
  attr(n, "ngram_indexes", std::vector<int64_t>{4, 3, 2, 1, 0});
  attr(n, "pool_int64s", std::vector<int64_t>{1, 3, 7, 1, 2, 2, 3});
  test::attr_floats(n, "weights", {0.5f, 2, 9, 3, 4});
  g.output("y", P::FLOAT, {2, 5});
  Model m = Model::from_bytes(mb.bytes(), "tfidf.onnx", "", {.device = kDev});
  Tensor x = Tensor::from(std::vector<int32_t>{1, 2, 1, 3, 2, 3, 3, 3, 7, 1}, {2, 5}, kDev);
  return m.run({{"x", x}}).at(0).tensor().cast(dtypes::float64).to_vector<double>();
}

TEST(OnnxTfIdf, ModesWeightTheCountsOfSkippedNGrams) {
  EXPECT_EQ(tfidf("TF", 1), (std::vector<double>{1, 2, 0, 1, 2, 0, 0, 1, 3, 1}));
  EXPECT_EQ(tfidf("IDF", 1), (std::vector<double>{0.5, 2, 0, 3, 4, 0, 0, 9, 3, 4}));
  EXPECT_EQ(tfidf("TFIDF", 1), (std::vector<double>{0.5, 4, 0, 3, 8, 0, 0, 9, 9, 4}));
  EXPECT_EQ(tfidf("TF", 2), (std::vector<double>{1, 2, 0, 0, 0, 0, 0, 0, 0, 0}));  // bigrams only
}

TEST(OnnxTfIdf, AStringPoolIsAClearError) {
  ModelBuilder mb(13);
  auto g = mb.graph();
  g.input("x", P::INT64, {4});
  auto* n = g.node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
  test::attr_s(n, "mode", "TF");
  attr(n, "min_gram_length", 1), attr(n, "max_gram_length", 1), attr(n, "max_skip_count", 0);
  attr(n, "ngram_counts", std::vector<int64_t>{0});
  attr(n, "ngram_indexes", std::vector<int64_t>{0, 1});
  test::attr_strings(n, "pool_strings", {"a", "b"});
  g.output_any("y", P::FLOAT);
  Model m = Model::from_bytes(mb.bytes(), "tfidf.onnx", "", {.device = kDev});
  EXPECT_EQ(
      error_of([&] {
        m.run({{"x", Tensor::from(std::vector<int64_t>{1, 2, 3, 4}, {4}, kDev)}});
      }),
      "[onnx] tfidf.onnx: node 'tfidf' (TfIdfVectorizer): the pool is strings (pool_strings), which need "
      "string inputs: sluice has no string dtype");
}

}  // namespace
}  // namespace sluice::onnx
