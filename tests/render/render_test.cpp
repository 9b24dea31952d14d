// Every op family of the Tensor API and the benchmark models (models/models.h), lowered by
// codegen::make_kernel and rendered in every C dialect, then compiled with the real compilers (issue #4):
//   CPU C    clang (backends/cpu's compiler)
//   CUDA C   NVRTC to PTX, then ptxas for sm_80 and sm_90 (a process, found next to NVRTC or on PATH)
//   HIP      clang -x hip for gfx1100, gfx90a, gfx942 (backends/hip's compiler)
//   OpenCL C the OpenCL backend's compiler on device CL (PoCL)
// Kernels of one language compile as one batch (one compiler process) through the disk cache. Zero render
// and compile errors are expected. A language whose compiler is missing is skipped with the reason. Each
// test prints its row of the table (rendered / compiled / failed); the whole table prints at the end.
// Bad input: a broken kernel fails with the compiler's log and the kernel's name, and the whole source at
// SLUICE_DEBUG=4.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cuda/compiler.h"
#include "backends/cuda/device.h"
#include "backends/hip/compiler.h"
#include "backends/hip/device.h"
#include "backends/opencl/device.h"
#include "base/debug.h"
#include "core/codegen/codegen.h"
#include "core/schedule/schedule.h"
#include "hcq/error.h"
#include "models/models.h"
#include "renderers/cpu.h"
#include "renderers/cuda.h"
#include "renderers/hip.h"
#include "renderers/opencl.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

// --- the kernels --------------------------------------------------------------------------------------

Tensor f32(const Shape& s) { return Tensor::empty(s, dtypes::float32, "CPU"); }
Tensor of(const Shape& s, DType dt) { return Tensor::empty(s, dt, "CPU"); }

// The op families of tests/ops/ops_test.cpp, plus the dtypes each language must express.
std::vector<std::pair<std::string, Tensor>> op_cases() {
  const Tensor a = f32({4, 5}), b = f32({4, 5}), row = f32({5}), pos = f32({4, 5});
  const Tensor ia = of({4, 5}, dtypes::int32), ib = of({4, 5}, dtypes::int32), sh = of({4, 5}, dtypes::int32);
  return {
      {"add_broadcast", a + row},
      {"sub_scalar", a - 1.5f},
      {"mul_div", a * b / b},
      {"neg_abs", (-a).abs()},
      {"maximum_minimum", a.maximum(b) + a.minimum(row)},
      {"reciprocal", pos.reciprocal()},
      {"exp_log_sqrt", a.exp() + pos.log() + pos.sqrt()},
      {"sin_cos", a.sin() + b.cos()},
      {"pow", pos.pow(b)},
      {"sigmoid_tanh_gelu", a.sigmoid() + b.tanh() + a.gelu()},
      {"relu", a.relu()},
      {"trunc_floor_ceil_round", a.trunc() + a.floor() + b.ceil() + b.round()},
      {"where_cmp", (a < b).where(a, b * 2)},
      {"eq_ne", (a == b).logical_or(a != a)},
      {"isnan_isinf", (a / a.mul(0)).isnan().logical_xor((a / 0.0f).isinf())},
      {"int_arith", ia * ia + ib - ia},
      {"int_div_mod", ia.div(ib, Rounding::Trunc) + ia % ib},
      {"int_floor_divide", ia.floor_divide(ib)},
      {"int_max_min", ia.maximum(ib) + ia.minimum(ib)},
      {"int_bitwise", (ia & ib) + (ia | 7) + (ia ^ ib)},
      {"int_shifts", (ia << sh) + (ia >> sh)},
      {"int_neg_cmp", (-ia).lt(ib).where(ia, -ib)},
      {"cast_float_int", a.cast(dtypes::int32)},
      {"cast_int_float", ia.cast(dtypes::float32) / 7.0f},
      {"cast_bool", a.cast(dtypes::bool_).cast(dtypes::int32)},
      {"int8_uint8", ia.cast(dtypes::int8) + ia.cast(dtypes::uint8).cast(dtypes::int8)},
      {"int16_uint16", ia.cast(dtypes::int16) * 3 + ia.cast(dtypes::uint16).cast(dtypes::int16)},
      {"int64_uint64", ia.cast(dtypes::int64) * 100000 + ia.cast(dtypes::uint64).cast(dtypes::int64)},
      {"uint32", ia.cast(dtypes::uint32) * 7 + 200},
      {"float64", a.cast(dtypes::float64) * b.cast(dtypes::float64) + 1e-12},
      {"float64_transcendental",
       a.cast(dtypes::float64).exp() + pos.cast(dtypes::float64).log() + a.cast(dtypes::float64).sin()},
      {"bitcast", a.bitcast(dtypes::int32) ^ 1},
      {"float16", a.cast(dtypes::float16) * 2 + 1},
      {"float16_math", a.cast(dtypes::float16).exp() + pos.cast(dtypes::float16).sqrt() +
                           a.cast(dtypes::float16).maximum(b.cast(dtypes::float16))},
      {"float16_io", of({4, 5}, dtypes::float16).sum({1}) + of({4, 1}, dtypes::float16)},
      {"bfloat16", a.cast(dtypes::bfloat16) * 3 + 1},
      {"bfloat16_math", a.cast(dtypes::bfloat16).sin() + a.cast(dtypes::bfloat16).cast(dtypes::float16)},
      {"bfloat16_bitcast", a.cast(dtypes::bfloat16).bitcast(dtypes::int16) + 1},
      {"float16_bitcast", ia.cast(dtypes::int16).bitcast(dtypes::float16) * 2},
      {"permute", a.permute({1, 0}).contiguous()},
      {"pad", a.pad({{1, 2}, {0, 3}}, 0)},
      {"pad_value", a.pad({{1, 0}, {2, 1}}, 7.5f) * 2},
      {"shrink_flip", a.shrink({{1, 3}, {0, 4}}).flip({0, 1})},
      {"chain",
       a.reshape({2, 10}).permute({1, 0}).pad({{1, 1}, {0, 2}}).flip({0}).shrink({{2, 9}, {1, 4}}) + 1},
      {"expand", row.reshape({1, 5}).expand({3, 5}) * f32({3, 1})},
      {"cat_repeat", sluice::cat({a, b}, 1).repeat({2, 1})},
      {"sum_all", a.sum()},
      {"sum_axis0", a.sum({0})},
      {"sum_keepdim", a.sum({1}, true)},
      {"max_min", a.max({1}) + a.min({1})},
      {"prod", pos.prod({0})},
      {"mean_3d", f32({3, 4, 5}).mean({0, 2})},
      {"int_sum_max", ia.sum({1}) + ia.max({1})},
      {"sum_big", f32({256, 1024}).sum({1})},
      {"softmax", a.softmax()},
      {"log_softmax", a.log_softmax(0)},
      {"layernorm", f32({3, 16}).layernorm()},
      {"matmul", f32({64, 128}).matmul(f32({128, 32}))},
      {"matmul_batched", f32({2, 3, 8}).matmul(f32({8, 5}))},
      {"matvec", f32({1, 512}).matmul(f32({512, 256}))},
      {"conv2d", f32({1, 2, 5, 5}).conv2d(f32({3, 2, 3, 3}), {.padding = {1}})},
      {"sdpa_causal",
       f32({1, 2, 8, 4})
           .scaled_dot_product_attention(f32({1, 2, 8, 4}), f32({1, 2, 8, 4}), std::nullopt, true)},
      {"cumsum", a.cumsum(1)},
      {"argmax", a.argmax(1)},
      {"arange", Tensor::arange(0, 10, 3) * 2},
      {"rand", Tensor::rand({3, 7}, 42, dtypes::float32, "CPU")},
      {"randn", Tensor::randn({16}, 7, dtypes::float32, "CPU")},
  };
}

struct Ast {
  std::string origin;  // the op case or model it came from
  UOp ast;
};

const std::vector<Ast>& asts() {
  static const std::vector<Ast> all = [] {
    std::vector<Ast> v;
    auto add = [&](const std::string& origin, const Tensor& t) {
      for (const ScheduleItem& it : schedule({t.uop()}).items)
        if (it.ast.op() == Op::Sink) v.push_back({origin, it.ast});
    };
    for (const auto& [name, t] : op_cases()) add(name, t);
    add("MLP", bench::Mlp().forward());
    add("CNN", bench::Cnn().forward());
    add("GPT-2 block", bench::Gpt(1).forward());
    return v;
  }();
  return all;
}

// --- the languages ------------------------------------------------------------------------------------

fs::path cache_dir() { return hcq::default_cache_dir(); }

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    *status = -1;
    return "cannot run " + cmd;
  }
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  *status = ::pclose(p);
  return out;
}

fs::path find_ptxas() {
  std::vector<fs::path> c;
  if (!cuda::nvrtc_dir().empty()) c.push_back(cuda::nvrtc_dir().parent_path() / "bin" / "ptxas");
  if (const char* p = std::getenv("CUDA_PATH"); p && *p) c.push_back(fs::path(p) / "bin" / "ptxas");
  c.push_back("/usr/local/cuda/bin/ptxas");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');) c.push_back(fs::path(d) / "ptxas");
  }
  for (const fs::path& p : c)
    if (fs::exists(p)) return p;
  return {};
}

// ptxas over one PTX module: "" when it assembles, else its output.
std::string ptxas(const fs::path& tool, const std::string& arch, const hcq::Binary& ptx) {
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() / ("sluice-ptxas-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path in = dir / ("m" + std::to_string(n++) + ".ptx"), out = in.string() + ".cubin";
  std::ofstream(in, std::ios::binary)
      .write(reinterpret_cast<const char*>(ptx.data()),
             std::streamsize(ptx.size() && ptx.back() == 0 ? ptx.size() - 1 : ptx.size()));
  int status = 0;
  std::string log = run(
      "'" + tool.string() + "' -arch=" + arch + " '" + in.string() + "' -o '" + out.string() + "'", &status);
  fs::remove_all(dir);
  return status == 0 ? "" : "ptxas -arch=" + arch + ": " + log;
}

struct Language {
  std::string name;
  std::shared_ptr<const render::CStyleRenderer> renderer;
  codegen::DeviceCaps caps;
  std::string absent;  // why it cannot be compiled here ("" when it can)
  // Compiles a batch; throws (hcq::CompileError) with the diagnostics on failure.
  std::function<void(const std::vector<std::string>&)> compile;
};

Language cpu_language() {
  auto c = std::shared_ptr<hcq::Compiler>(cpu::make_compiler(cache_dir()));
  return {"CPU C (clang)", render::make_cpu_renderer(), codegen::DeviceCaps{}, "",
          [c](const std::vector<std::string>& s) { c->compile_many(s); }};
}

Language cuda_language(const std::string& arch) {
  Language l{"CUDA " + arch + " (NVRTC+ptxas)", render::make_cuda_renderer(), cuda::caps(), "", {}};
  const fs::path tool = find_ptxas();
  if (!cuda::nvrtc_absent_reason().empty())
    l.absent = cuda::nvrtc_absent_reason();
  else if (tool.empty())
    l.absent = "ptxas not found next to NVRTC, in $CUDA_PATH/bin, /usr/local/cuda/bin or on PATH";
  auto c = std::shared_ptr<hcq::Compiler>(cuda::make_compiler(arch, cache_dir(), /*ptx=*/true));
  l.compile = [c, tool, arch](const std::vector<std::string>& s) {
    std::set<hcq::Binary> modules;  // a batch's sources share one module
    for (hcq::Binary& b : c->compile_many(s)) modules.insert(std::move(b));
    for (const hcq::Binary& m : modules)
      if (std::string err = ptxas(tool, arch, m); !err.empty())
        SLUICE_FAIL(hcq::CompileError, "ptxas") << err;
  };
  return l;
}

Language hip_language(const std::string& arch) {
  Language l{"HIP " + arch + " (clang)", render::make_hip_renderer(), hip::caps(), "", {}};
  std::string why;
  if (hip::find_clang(arch, &why).empty()) l.absent = why;
  auto c = std::shared_ptr<hcq::Compiler>(hip::make_compiler(arch, cache_dir()));
  l.compile = [c](const std::vector<std::string>& s) { c->compile_many(s); };
  return l;
}

Language opencl_language() {
  Language l{"OpenCL C (CL)", render::make_opencl_renderer(), {}, opencl::absent_reason(), {}};
  if (!l.absent.empty()) return l;
  std::shared_ptr<hcq::Device> dev = opencl::open_device(0);
  const render::Target t = opencl::target(*dev);
  l.renderer = std::dynamic_pointer_cast<const render::CStyleRenderer>(t.renderer);
  l.caps = t.caps;
  l.compile = [dev](const std::vector<std::string>& s) { dev->compiler().compile_many(s); };
  return l;
}

// --- the table ----------------------------------------------------------------------------------------

struct Row {
  std::string language, note;
  int rendered = 0, render_failed = 0, compiled = 0, failed = 0;
};
std::vector<Row>& table() {
  static std::vector<Row> rows;
  return rows;
}
void print_row(const Row& r) {
  std::printf("%-28s %8d %8d %8d %8d  %s\n", r.language.c_str(), r.rendered, r.render_failed, r.compiled,
              r.failed, r.note.c_str());
}
void print_header() {
  std::printf("%-28s %8s %8s %8s %8s\n", "language", "rendered", "rnd-fail", "compiled", "failed");
}

class TablePrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (table().size() < 2) return;  // one row was printed by its test already
    std::printf("\n");
    print_header();
    for (const Row& r : table()) print_row(r);
  }
};
const auto* const kPrinter = ::testing::AddGlobalTestEnvironment(new TablePrinter);

void check_language(const Language& l) {
  Row row{l.name, "", 0, 0, 0, 0};
  if (!l.absent.empty()) {
    row.note = "SKIPPED: " + l.absent;
    table().push_back(row);
    print_header();
    print_row(row);
    GTEST_SKIP() << l.name << ": " << l.absent;
  }
  std::vector<std::string> sources, names;
  codegen::KernelNamer namer;
  for (const Ast& a : asts()) {
    try {
      codegen::Kernel k = codegen::make_kernel(a.ast, l.caps);
      k.name = namer.unique(k.name);
      sources.push_back(l.renderer->render(k));
      names.push_back(a.origin + ": " + k.name);
      ++row.rendered;
    } catch (const Error& e) {
      ++row.render_failed;
      ADD_FAILURE() << l.name << ": rendering a kernel of " << a.origin << " failed: " << e.what();
    }
  }
  try {
    l.compile(sources);
    row.compiled = int(sources.size());
  } catch (const Error& batch) {
    // Find the culprits one by one (each its own unit).
    for (size_t i = 0; i < sources.size(); ++i) {
      try {
        l.compile({sources[i]});
        ++row.compiled;
      } catch (const Error& e) {
        ++row.failed;
        if (row.failed <= 5)
          ADD_FAILURE() << l.name << ": " << names[i] << " does not compile:\n"
                        << std::string(e.what()).substr(0, 3000) << "\n--- source ---\n"
                        << sources[i];
      }
    }
    if (row.failed == 0)
      ADD_FAILURE() << l.name << ": the batch failed but every kernel alone compiles:\n" << batch.what();
  }
  table().push_back(row);
  print_header();
  print_row(row);
  EXPECT_GE(row.rendered, 90) << "too few kernels: the op families or models did not schedule";
  EXPECT_EQ(row.failed, 0);
}

TEST(Render, CpuC) { check_language(cpu_language()); }
TEST(Render, CudaSm80) { check_language(cuda_language("sm_80")); }
TEST(Render, CudaSm90) { check_language(cuda_language("sm_90")); }
TEST(Render, HipGfx1100) { check_language(hip_language("gfx1100")); }
TEST(Render, HipGfx90a) { check_language(hip_language("gfx90a")); }
TEST(Render, HipGfx942) { check_language(hip_language("gfx942")); }
TEST(Render, OpenCLC) { check_language(opencl_language()); }

// HIP kernels carry no transcendental builtin: the polynomials replaced them (hip::caps()).
TEST(Render, HipUsesPolynomialTranscendentals) {
  const auto r = render::make_hip_renderer();
  const Tensor a = f32({4, 5});
  for (const ScheduleItem& it : schedule({(a.exp() + a.log() + a.sin()).uop()}).items) {
    if (it.ast.op() != Op::Sink) continue;
    const std::string src = r->render(codegen::make_kernel(it.ast, hip::caps()));
    for (const char* fn : {"exp2", "log2", "__builtin_sin"})
      EXPECT_EQ(src.find(fn), std::string::npos) << fn << " in\n" << src;
  }
}

// Emulated half and bfloat16 in CPU C, run on the CPU device: every op rounds to the 16-bit format as
// core/ir/dtype.h does (the reference here is computed on the host with round_float after each op).
// The benchmark models get data before they are timed: standard normal values, written in place (the
// graph keeps its buffers), the same for the same seed, and no denormal among them (an uninitialized
// buffer's garbage made the CNN 3-4x slower on Intel cores).
TEST(BenchModels, FillNormalWritesNormalValuesInPlace) {
  bench::Cnn cnn, again;
  const size_t kernels = schedule({cnn.forward().uop()}).items.size();
  bench::fill_normal(cnn.params());
  bench::fill_normal(again.params());
  EXPECT_EQ(schedule({cnn.forward().uop()}).items.size(), kernels) << "filled parameters changed the graph";
  EXPECT_EQ(cnn.c2.shape(), (Shape{64, 32, 3, 3}));
  std::vector<float> v = cnn.c2.to_vector<float>();
  EXPECT_EQ(v, again.c2.to_vector<float>());
  double sum = 0, sq = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x) && std::fpclassify(x) != FP_SUBNORMAL) << x;
    sum += x, sq += double(x) * x;
  }
  const double mean = sum / double(v.size()), sd = std::sqrt(sq / double(v.size()) - mean * mean);
  EXPECT_NEAR(mean, 0, 0.05);
  EXPECT_NEAR(sd, 1, 0.05);
}

TEST(Render, CpuHalfAndBfloat16Run) {
  std::vector<float> x;
  for (int i = 0; i < 64; ++i) x.push_back(float(i - 32) * 0.37f + 0.001f * float(i * i));
  x.push_back(65504.0f), x.push_back(1e-7f), x.push_back(-3e-5f), x.push_back(70000.0f);
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    const Tensor a = Tensor::from(x, {int64_t(x.size())}, "CPU");
    const Tensor h = a.cast(dt);
    std::vector<float> got = ((h * 3 + 1).maximum(h.sqrt()) - h / 7).cast(dtypes::float32).to_vector<float>();
    ASSERT_EQ(got.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      auto r = [&](double v) { return round_float(dt, v); };
      const double v = r(x[i]), m = r(r(v * 3) + 1), sq = r(std::sqrt(v));
      const double want = r((std::isnan(sq) || m < sq ? sq : m) - r(v / 7));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << dt.name() << " x = " << x[i];
      } else {
        EXPECT_EQ(double(got[i]), want) << dt.name() << " x = " << x[i];
      }
    }
    // The bits in memory are IEEE half / bfloat16: a bitcast to int16 sees them.
    std::vector<int32_t> bits = h.bitcast(dtypes::int16).cast(dtypes::int32).to_vector<int32_t>();
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t want = dt == dtypes::float16 ? float_to_half_bits(x[i]) : float_to_bf16_bits(x[i]);
      EXPECT_EQ(uint16_t(bits[i]), want) << dt.name() << " x = " << x[i];
    }
  }
}

// --- bad input: a compiler failure names the kernel and shows the log (and the source at DEBUG=4) -----

struct Broken {
  std::string language, absent;
  std::unique_ptr<hcq::Compiler> compiler;
  std::string source;  // defines broken_kernel with an error on its own line
};

void expect_named_failure(Broken b, bool names_kernel) {
  if (!b.absent.empty()) GTEST_SKIP() << b.language << ": " << b.absent;
  const fs::path cache = fs::temp_directory_path() / ("sluice-broken-" + std::to_string(::getpid()));
  for (int debug : {0, 4}) {
    set_debug_level(debug);
    try {
      b.compiler->compile(b.source + "// debug " + std::to_string(debug) + "\n");  // no cache hit
      ADD_FAILURE() << b.language << ": a broken kernel compiled";
    } catch (const hcq::CompileError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("[compile]"), std::string::npos) << m;
      EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << "no compiler log in: " << m;
      if (names_kernel) {
        EXPECT_NE(m.find("broken_kernel"), std::string::npos) << "no kernel name in: " << m;
      }
      if (debug >= 4) {
        EXPECT_NE(m.find("// debug 4"), std::string::npos) << "no source at SLUICE_DEBUG=4: " << m;
      } else {
        EXPECT_EQ(m.find("// debug"), std::string::npos) << "the source shows below SLUICE_DEBUG=4: " << m;
      }
    }
  }
  set_debug_level(0);
  fs::remove_all(cache);
}

TEST(RenderBadInput, CudaCompileErrorNamesKernel) {
  expect_named_failure({"CUDA", cuda::nvrtc_absent_reason(), cuda::make_compiler("sm_90", ""),
                        "extern \"C\" __global__ void __launch_bounds__(1) broken_kernel(float* data0) {\n"
                        "  data0[0] = undeclared_thing;\n}\n"},
                       true);
}

TEST(RenderBadInput, HipCompileErrorNamesKernel) {
  std::string why;
  hip::find_clang("gfx1100", &why);
  expect_named_failure({"HIP", why, hip::make_compiler("gfx1100", ""),
                        "extern \"C\" __attribute__((global)) void broken_kernel(float* data0) {\n"
                        "  data0[0] = undeclared_thing;\n}\n"},
                       true);
}

TEST(RenderBadInput, NoSuitableClangIsAClearError) {
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);
  std::string why;
  EXPECT_TRUE(hip::find_clang("gfx942", &why).empty());
  EXPECT_NE(why.find("gfx942"), std::string::npos) << why;
  try {
    hip::make_compiler("gfx942", "")->compile("int x;\n");
    ADD_FAILURE() << "compiled without a clang";
  } catch (const hcq::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("gfx942"), std::string::npos) << e.what();
  }
  ::setenv("PATH", path.c_str(), 1);
}

}  // namespace
}  // namespace sluice
