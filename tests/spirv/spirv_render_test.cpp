// Every kernel of the op families of the Tensor API (the cases of tests/ops/ops_test.cpp) and of the
// benchmark models (models/models.h), rendered as SPIR-V and checked by spirv-val for the Vulkan 1.2
// and 1.3 environments, under two sets of device capabilities (one work-item per group; work-groups with
// shared memory, so the LOCAL/GROUP optimizations apply). Plus the capabilities each module declares and
// the [render] errors for what Vulkan SPIR-V cannot express.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "backends/vulkan/device.h"
#include "base/error.h"
#include "core/codegen/codegen.h"
#include "core/schedule/schedule.h"
#include "models/models.h"
#include "renderers/spirv.h"
#include "renderers/spirv_builder.h"
#include "runtime/realize.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"
#include "tests/spirv/spirv_val.h"

namespace sluice {
namespace {

std::string kDev = "CPU";  // where the cases' tensors live: scheduled only, or run by SpirvVulkan

std::vector<float> data(int64_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345;
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    f = lo + (hi - lo) * float(x % 10000) / 10000.0f;
  }
  return v;
}
Tensor randf(const Shape& shape, uint32_t seed, float lo = -2, float hi = 2) {
  return Tensor::from(data(prod(shape), seed, lo, hi), shape, kDev);
}
Tensor randi(const Shape& shape, uint32_t seed, int lo = -50, int hi = 50) {
  std::vector<int32_t> v;
  for (float f : data(prod(shape), seed, float(lo), float(hi))) v.push_back(int32_t(std::floor(f)));
  return Tensor::from(v, shape, kDev);
}

struct Case {
  std::string name;
  std::function<Tensor()> build;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The op list of tests/ops/ops_test.cpp, plus a few dtypes only SPIR-V's optional types reach.
std::vector<Case> op_cases() {
  const Tensor a = randf({4, 5}, 1), b = randf({4, 5}, 2), row = randf({5}, 3),
               pos = randf({4, 5}, 4, 0.1f, 4);
  const Tensor ia = randi({4, 5}, 5), ib = randi({4, 5}, 6, -6, 6), sh = randi({4, 5}, 7, -2, 34);
  return {
      {"add_broadcast", [=] { return a + row; }},
      {"sub_scalar", [=] { return a - 1.5f; }},
      {"mul", [=] { return a * b; }},
      {"div", [=] { return a / b; }},
      {"neg_abs", [=] { return (-a).abs(); }},
      {"maximum", [=] { return a.maximum(b); }},
      {"minimum", [=] { return a.minimum(row); }},
      {"maximum_nan", [=] { return (a / a.mul(0)).maximum(b); }},
      {"reciprocal", [=] { return pos.reciprocal(); }},
      {"exp", [=] { return a.exp(); }},
      {"log", [=] { return pos.log(); }},
      {"sqrt", [=] { return pos.sqrt(); }},
      {"sin_cos", [=] { return a.sin() + b.cos(); }},
      {"pow", [=] { return pos.pow(b); }},
      {"sigmoid_tanh_gelu", [=] { return a.sigmoid() + b.tanh() + a.gelu(); }},
      {"relu", [=] { return a.relu(); }},
      {"trunc_floor_ceil_round",
       [=] { return a.mul(3).trunc() + a.mul(3).floor() * 2 + b.ceil() * 4 + b.round(); }},
      {"where_cmp", [=] { return (a < b).where(a, b * 2); }},
      {"eq_ne", [=] { return (a.mul(2).round() == b.mul(2).round()).logical_or(a != a); }},
      {"isnan_isinf", [=] { return (a / a.mul(0)).isnan().logical_xor((a / 0.0f).isinf()); }},
      {"int_add_sub_mul", [=] { return ia * ia * ia * ia * ia * ia + ib - ia; }},
      {"int_div_mod", [=] { return ia.div(ib, Rounding::Trunc) + ia % ib * 100; }},
      {"int_floor_divide", [=] { return ia.floor_divide(ib); }},
      {"int_max_min", [=] { return ia.maximum(ib) * 3 + ia.minimum(ib); }},
      {"int_bitwise", [=] { return (ia & ib) + (ia | 7) * 2 + (ia ^ ib); }},
      {"int_shifts", [=] { return (ia << sh) + (ia >> sh); }},
      {"int_neg_cmp", [=] { return (-ia).lt(ib).where(ia, -ib); }},
      {"int_overflow", [=] { return (ia + 2147483600) * 3; }},
      {"cast_float_int", [=] { return a.mul(10).cast(dtypes::int32); }},
      {"cast_int_float", [=] { return ia.cast(dtypes::float32) / 7.0f; }},
      {"cast_bool",
       [=] {
         return a.cast(dtypes::bool_).cast(dtypes::int32) + ia.cast(dtypes::bool_).cast(dtypes::int32);
       }},
      {"cast_int8_wrap", [=] { return ia.mul(9).cast(dtypes::int8); }},
      {"uint8_arith", [=] { return ia.cast(dtypes::uint8) * 7 + 200; }},
      {"int64_arith", [=] { return ia.cast(dtypes::int64) * 100000 * 100000 + ib; }},
      {"float64", [=] { return a.cast(dtypes::float64) * b.cast(dtypes::float64) + 1e-12; }},
      {"float64_exp_log_sin",
       [=] {
         return a.cast(dtypes::float64).exp() + pos.cast(dtypes::float64).log() +
                b.cast(dtypes::float64).sin();
       }},
      {"bitcast", [=] { return a.bitcast(dtypes::int32) ^ 1; }},
      {"float16", [=] { return a.cast(dtypes::float16) + 1; }},
      {"float16_math",
       [=] {
         return (a.cast(dtypes::float16) / b.cast(dtypes::float16)).exp() + pos.cast(dtypes::float16).sqrt();
       }},
      {"int16_uint16",
       [=] { return ia.cast(dtypes::int16) * 300 + ib.cast(dtypes::uint16).cast(dtypes::int16); }},
      {"uint64_shift", [=] { return (ia.cast(dtypes::uint64) << 40) >> sh.cast(dtypes::uint64); }},
      {"uint32_div", [=] { return ia.cast(dtypes::uint32) / ib.cast(dtypes::uint32); }},
      {"permute",
       [=] {
         return a.permute({1, 0}).contiguous();
       }},
      {"pad",
       [=] {
         return a.pad({{1, 2}, {0, 3}}, 0);
       }},
      {"pad_value",
       [=] {
         return a.pad({{1, 0}, {2, 1}}, 7.5f) * 2;
       }},
      {"shrink_flip",
       [=] {
         return a.shrink({{1, 3}, {0, 4}}).flip({0, 1});
       }},
      {"chain",
       [=] {
         return a.reshape({2, 10}).permute({1, 0}).pad({{1, 1}, {0, 2}}).flip({0}).shrink({{2, 9}, {1, 4}}) +
                1;
       }},
      {"expand",
       [=] {
         return row.reshape({1, 5}).expand({3, 5}) * randf({3, 1}, 8);
       }},
      {"cat_repeat",
       [=] {
         return sluice::cat({a, b}, 1).repeat({2, 1});
       }},
      {"sum_all", [=] { return a.sum(); }},
      {"sum_axis0", [=] { return a.sum({0}); }},
      {"sum_axis1_keepdim", [=] { return a.sum({1}, true); }},
      {"max_axis", [=] { return a.max({1}); }},
      {"min_all", [=] { return a.min(); }},
      {"prod", [=] { return pos.prod({0}); }},
      {"mean_3d",
       [=] {
         return randf({3, 4, 5}, 9).mean({0, 2});
       }},
      {"int_sum_max", [=] { return ia.sum({1}) + ia.max({1}); }},
      {"sum_empty",
       [=] {
         return Tensor::zeros({3, 0}).sum({1});
       }},
      {"reduce_then_ew", [=] { return (a - a.max({1}, true)).exp().sum({1}); }},
      {"softmax", [=] { return a.softmax(); }},
      {"log_softmax", [=] { return a.log_softmax(0); }},
      {"layernorm",
       [=] {
         return randf({3, 16}, 10).layernorm();
       }},
      {"matmul",
       [=] {
         return randf({8, 16}, 11).matmul(randf({16, 4}, 12));
       }},
      {"matmul_big",
       [=] {
         return randf({64, 256}, 11).matmul(randf({256, 64}, 12));
       }},
      {"matmul_batched",
       [=] {
         return randf({2, 3, 8}, 13).matmul(randf({8, 5}, 14));
       }},
      {"conv2d",
       [=] {
         return randf({1, 2, 5, 5}, 15).conv2d(randf({3, 2, 3, 3}, 16), {.padding = {1}});
       }},
      {"sdpa_causal",
       [=] {
         Tensor q = randf({1, 2, 8, 4}, 17), k = randf({1, 2, 8, 4}, 18), v2 = randf({1, 2, 8, 4}, 19);
         return q.scaled_dot_product_attention(k, v2, std::nullopt, true);
       }},
      {"mlp_gelu",
       [=] {
         return (randf({4, 8}, 20).matmul(randf({8, 16}, 21)) + 1).gelu().matmul(randf({16, 3}, 22));
       }},
      {"cumsum", [=] { return a.cumsum(1); }},
      {"argmax", [=] { return a.argmax(1); }},
      {"arange", [=] { return Tensor::arange(0, 10, 3) * 2; }},
      {"arange_float", [=] { return Tensor::arange(0.5, 4, 0.25, std::nullopt, kDev); }},
      {"rand",
       [=] {
         return Tensor::rand({3, 7}, 42, dtypes::float32, kDev);
       }},
      {"randn", [=] { return Tensor::randn({16}, 7, dtypes::float32, kDev); }},
      {"big_sum", [=] { return randf({4096}, 23).sum(); }},
  };
}

// Capabilities of a Vulkan device: one with work-groups and shared memory (as lavapipe and GPUs), and one
// running one work-item per group (the CPU's shape of launch), so both kernel forms are rendered.
codegen::DeviceCaps gpu_caps() {
  codegen::DeviceCaps c;
  c.global_dims = 3;
  c.global_max = {65535, 65535, 65535};
  c.local_bytes = 32768;
  c.supports_float16 = true;
  c.has_local = true;
  c.max_local_size = 256;
  c.local_max = {256, 256, 64};
  return c;
}
codegen::DeviceCaps poly_caps() {  // as backends/vulkan: polynomials for EXP2/LOG2/SIN (transcendental.h)
  codegen::DeviceCaps c = gpu_caps();
  c.accurate_transcendentals = false;
  return c;
}
codegen::DeviceCaps flat_caps() {
  codegen::DeviceCaps c;
  c.global_dims = 3;
  c.global_max = {65535, 65535, 65535};
  c.supports_float16 = true;
  return c;
}

struct Rendered {
  std::vector<std::pair<std::string, std::string>> modules;  // (name, bytes)
  std::set<std::string> uops;                                // kernel-level ops seen
};

// float64 EXP2/LOG2/SIN render only as polynomials: `poly_only` renders those cases under poly_caps alone.
Rendered render_all(const std::vector<UOp>& outputs, const std::string& label,
                    const render::SpirvOptions& opt = {}, bool poly_only = false) {
  Rendered r;
  const Schedule s = schedule(outputs);
  auto renderer = render::make_spirv_renderer(opt);
  std::vector<std::pair<codegen::DeviceCaps, const char*>> sets = {{poly_caps(), "poly"}};
  if (!poly_only) sets.insert(sets.end(), {{gpu_caps(), "gpu"}, {flat_caps(), "flat"}});
  for (const auto& [caps, tag] : sets) {
    for (const ScheduleItem& it : s.items) {
      if (it.ast.op() != Op::Sink) continue;
      const codegen::Kernel k = codegen::make_kernel(it.ast, caps);
      for (const UOp& u : k.uops) r.uops.insert(std::string(op_name(u.op())));
      r.modules.push_back({label + "/" + tag + "/" + k.name, renderer->render(k)});
    }
  }
  return r;
}

size_t g_validated = 0;  // modules x environments, printed at the end
std::set<std::string> g_uops;

void check(const Rendered& r) {
  EXPECT_FALSE(r.modules.empty());
  if (const char* dir = std::getenv("SLUICE_SPIRV_DUMP")) {  // keep the modules for spirv-dis
    for (const auto& [name, bytes] : r.modules) {
      std::string file = name;
      for (char& c : file) c = c == '/' ? '.' : c;
      std::ofstream(std::string(dir) + "/" + file + ".spv", std::ios::binary) << bytes;
    }
  }
  g_uops.insert(r.uops.begin(), r.uops.end());
  if (!testing_spirv::have_spirv_val()) GTEST_SKIP() << "spirv-val (spirv-tools) is not on PATH";
  for (const std::string& e : testing_spirv::validate(r.modules, {"vulkan1.2", "vulkan1.3"}))
    ADD_FAILURE() << e;
  g_validated += r.modules.size();
}

class SpirvOps : public testing::TestWithParam<Case> {};

TEST_P(SpirvOps, ModulesValidate) {
  const Case& c = GetParam();
  check(render_all({c.build().contiguous().uop()}, c.name, {}, c.name.rfind("float64_", 0) == 0));
}

INSTANTIATE_TEST_SUITE_P(Cases, SpirvOps, testing::ValuesIn(op_cases()),
                         [](const testing::TestParamInfo<Case>& i) { return i.param.name; });

TEST(SpirvModels, MlpValidates) { check(render_all({bench::Mlp().forward().uop()}, "mlp")); }
TEST(SpirvModels, CnnValidates) { check(render_all({bench::Cnn().forward().uop()}, "cnn")); }
TEST(SpirvModels, Gpt2BlockValidates) { check(render_all({bench::Gpt(1).forward().uop()}, "gpt2")); }

// Kernels over 2^31 + 64 elements index in int64 (work-group ids zero-extended), and a launch dimension of
// the prime 65537 splits with a guard. Neither runs on this machine's Vulkan (2 GiB), so they validate here.
TEST(SpirvModels, WideIndexAndSplitLaunchKernelsValidate) {
  const int64_t wide = (int64_t(1) << 31) + 64;
  Tensor big = Tensor::zeros({wide}, dtypes::uint8, "CPU").contiguous();
  Tensor prime = Tensor::zeros({65537}, dtypes::float32, "CPU").contiguous();
  const Rendered r =
      render_all({(big + 1).uop(), big.cast(dtypes::int64).sum().uop(), (prime * 2).uop()}, "wide");
  check(r);
}

// SPIR-V 1.3 (Vulkan 1.1: the 8-bit storage extension) and 1.6 modules validate too.
TEST(SpirvVersions, OtherVersionsValidate) {
  if (!testing_spirv::have_spirv_val()) GTEST_SKIP() << "spirv-val (spirv-tools) is not on PATH";
  const Tensor a = randf({4, 5}, 1), b = randf({4, 5}, 2), ia = randi({4, 5}, 5);
  const std::vector<UOp> outs = {(a < b).uop(), a.softmax().uop(), ia.cast(dtypes::uint8).uop(),
                                 (ia.cast(dtypes::int64) * 3).uop(), a.cast(dtypes::float16).uop()};
  for (const auto& [version, env] :
       {std::pair{0x00010300u, "vulkan1.1"}, std::pair{0x00010600u, "vulkan1.3"}}) {
    const Rendered r = render_all(outs, "v" + std::to_string(version >> 8 & 0xff), {.version = version});
    for (const std::string& e : testing_spirv::validate(r.modules, {env})) ADD_FAILURE() << e;
  }
}

// Uops codegen does not emit yet, in a kernel built by hand: a push-constant variable bounding a masked
// load and store, MULACC, vector ALU ops and casts, and shared memory of bools.
codegen::Kernel hand_kernel() {
  using codegen::Kernel;
  Kernel k;
  k.name = "hand_vars";
  k.bufs = {{dtypes::float32, 16, true, false}, {dtypes::float32, 16, false, true}};
  const UOp out = UOp::make(Op::DefineGlobal, dtypes::float32.ptr(AddrSpace::Global, 16), {}, int64_t(0));
  const UOp in = UOp::make(Op::DefineGlobal, dtypes::float32.ptr(AddrSpace::Global, 16), {}, int64_t(1));
  const UOp shared = UOp::make(Op::DefineLocal, dtypes::bool_.ptr(AddrSpace::Local, 4), {}, int64_t(0));
  const UOp n = UOp::variable("n", 0, 16), m = UOp::variable("m", 0, 16);
  k.vars = {n, m};
  const UOp gid = UOp::make(Op::Special, dtypes::int32, {}, VarArg{"gidx0", 0, 15});
  const UOp lid = UOp::make(Op::Special, dtypes::int32, {}, VarArg{"lidx0", 0, 3});
  const UOp valid = gid.lt(n);
  const UOp x =
      UOp::make(Op::Load, dtypes::float32, {UOp::make(Op::Index, dtypes::float32, {in, gid, valid})});
  const UOp y = x.alu(Op::MulAcc, x, UOp::const_(dtypes::float32, 1.5));
  const UOp v = UOp::make(Op::Vectorize, dtypes::float32.vec(4), {x, y, x, y});
  const UOp w = v.alu(Op::Add, v).cast(dtypes::int32.vec(4)).cast(dtypes::float32.vec(4));
  const UOp z = UOp::make(Op::Gep, dtypes::float32, {w}, int64_t(1)) + (m.cast(dtypes::float32));
  const UOp sidx = UOp::make(Op::Index, dtypes::bool_, {shared, lid});
  const UOp st_shared = UOp::make(Op::Store, dtypes::void_, {sidx, y.lt(z)});
  const UOp bar = UOp::make(Op::Barrier, dtypes::void_, {st_shared});
  const UOp flag = UOp::make(Op::Load, dtypes::bool_, {sidx, bar});
  const UOp st = UOp::make(Op::Store, dtypes::void_,
                           {UOp::make(Op::Index, dtypes::float32, {out, gid, valid}), flag.where(z, y)});
  k.uops = st.toposort();  // sources before users, as a linear kernel lists them
  k.global_size = {16, 1, 1};
  k.local_size = {4, 1, 1};
  return k;
}

TEST(SpirvHandKernel, VariablesVectorsAndSharedMemoryValidate) {
  const std::string bytes = render::make_spirv_renderer()->render(hand_kernel());
  ASSERT_EQ(bytes.size() % 4, 0u);
  if (!testing_spirv::have_spirv_val()) GTEST_SKIP() << "spirv-val (spirv-tools) is not on PATH";
  for (const std::string& e : testing_spirv::validate({{"hand_vars", bytes}}, {"vulkan1.2", "vulkan1.3"}))
    ADD_FAILURE() << e;
  const std::string v13 = render::make_spirv_renderer({.version = 0x00010300})->render(hand_kernel());
  for (const std::string& e : testing_spirv::validate({{"hand_vars_1.3", v13}}, {"vulkan1.1"}))
    ADD_FAILURE() << e;
}

// --- a handful of kernels run on a Vulkan driver (lavapipe here) against the reference evaluator ---

testing::AssertionResult close(const eval::HostArray& got, const eval::HostArray& ref, double tol) {
  if (got.dtype != ref.dtype || got.shape != ref.shape)
    return testing::AssertionFailure() << "got " << got.str() << "\nwant " << ref.str();
  for (int64_t k = 0; k < ref.numel(); ++k) {
    if (!ref.is_defined(k)) continue;
    const double x = got.value(k), w = ref.value(k);
    const bool ok = std::isnan(w)   ? std::isnan(x)
                    : std::isinf(w) ? x == w
                                    : std::abs(x - w) <= tol + tol * std::abs(w);
    if (!ok)
      return testing::AssertionFailure()
             << "element " << k << "\ngot  " << got.str() << "\nwant " << ref.str();
  }
  return testing::AssertionSuccess();
}

// A chosen handful (SLUICE_SPIRV_ALL_CASES=1: every case; the ops suite runs them all on VULKAN too).
// maximum_nan is left out: lavapipe folds x*0 to +0 even under SignedZeroInfNanPreserve, so a/(a*0)
// gives -inf for negative a where IEEE gives +inf (the module computes it as written).
TEST(SpirvVulkan, KernelsMatchReference) {
  const std::string why = vulkan::absent_reason();
  if (!why.empty()) GTEST_SKIP() << "VULKAN is absent: " << why;
  std::unique_ptr<hcq::Device> dev = vulkan::open_device(0);
  render::Target target;
  try {
    target = vulkan::target(*dev);
  } catch (const DeviceError& e) {  // a build whose Vulkan backend was compiled without this renderer
    GTEST_SKIP() << e.what();
  }
  RealizeOptions ro;
  ro.guard_bytes = 64;
  Realizer r(*dev, target, ro);
  const std::set<std::string> chosen = {"add_broadcast",
                                        "maximum",
                                        "exp",
                                        "log",
                                        "sin_cos",
                                        "where_cmp",
                                        "isnan_isinf",
                                        "int_div_mod",
                                        "int_shifts",
                                        "int_overflow",
                                        "cast_float_int",
                                        "cast_int8_wrap",
                                        "uint8_arith",
                                        "int64_arith",
                                        "float64",
                                        "float64_exp_log_sin",
                                        "bitcast",
                                        "float16",
                                        "float16_math",
                                        "int16_uint16",
                                        "uint64_shift",
                                        "uint32_div",
                                        "pad_value",
                                        "chain",
                                        "sum_axis0",
                                        "max_axis",
                                        "softmax",
                                        "matmul",
                                        "matmul_big",
                                        "conv2d",
                                        "argmax",
                                        "cumsum",
                                        "big_sum"};
  size_t ran = 0;
  kDev = dev->name();  // the cases make some tensors when they are built
  for (const Case& c : op_cases()) {
    if (!chosen.count(c.name) && !std::getenv("SLUICE_SPIRV_ALL_CASES")) continue;
    SCOPED_TRACE(c.name);
    const Tensor t = c.build().contiguous();
    const double tol = t.dtype().itemsize() == 2 && t.dtype().is_float() ? 2e-3 : 1e-4;
    RealizeReport rep;
    const eval::HostArray got = r.run({t}, &rep).at(0);
    EXPECT_TRUE(close(got, reference(t), tol));
    EXPECT_TRUE(rep.guard_violations.empty()) << rep.guard_violations.front();
    EXPECT_FALSE(rep.kernels.empty());
    ++ran;
  }
  kDev = "CPU";
  EXPECT_EQ(ran, chosen.size());
  std::printf("spirv: %zu op cases ran on %s and matched the reference\n", ran, dev->name().c_str());
}

// --- capabilities declared only when used, and the [render] errors ---

std::set<uint32_t> caps_of(const std::string& bytes) {
  std::set<uint32_t> c;
  std::vector<uint32_t> w(bytes.size() / 4);
  for (size_t i = 0; i < w.size(); ++i)
    for (int k = 0; k < 4; ++k) w[i] |= uint32_t(uint8_t(bytes[4 * i + size_t(k)])) << (8 * k);
  for (size_t i = 5; i < w.size(); i += std::max(1u, w[i] >> 16))
    if ((w[i] & 0xffff) == uint32_t(spirv::Op::Capability)) c.insert(w[i + 1]);
  return c;
}
std::set<uint32_t> module_caps(const Tensor& t, const render::SpirvOptions& opt = {}) {
  std::set<uint32_t> all;
  for (const auto& m : render_all({t.uop()}, "caps", opt).modules) {
    const std::set<uint32_t> c = caps_of(m.second);
    all.insert(c.begin(), c.end());
  }
  return all;
}
uint32_t cap(spirv::Capability c) { return uint32_t(c); }

TEST(SpirvCapabilities, DeclaredOnlyWhenUsed) {
  const Tensor a = randf({4, 5}, 1), b = randf({4, 5}, 2), ia = randi({4, 5}, 5);
  const uint32_t shader = cap(spirv::Capability::Shader),
                 ieee = cap(spirv::Capability::SignedZeroInfNanPreserve);
  EXPECT_EQ(module_caps(a.softmax()), (std::set<uint32_t>{shader, ieee}));
  EXPECT_EQ(module_caps(a.softmax(), {.inf_nan_preserve32 = false}), (std::set<uint32_t>{shader}));
  EXPECT_EQ(module_caps(ia * 3), (std::set<uint32_t>{shader}));
  // bool buffers: 8-bit storage, but no 8-bit arithmetic.
  EXPECT_EQ(module_caps(ia < 3),
            (std::set<uint32_t>{shader, cap(spirv::Capability::StorageBuffer8BitAccess)}));
  EXPECT_FALSE(module_caps(a < b).count(cap(spirv::Capability::Int8)));
  const std::set<uint32_t> u8 = module_caps(ia.cast(dtypes::uint8) * 7);
  EXPECT_TRUE(u8.count(cap(spirv::Capability::Int8)) &&
              u8.count(cap(spirv::Capability::StorageBuffer8BitAccess)));
  const std::set<uint32_t> h = module_caps(a.cast(dtypes::float16) + 1);
  EXPECT_TRUE(h.count(cap(spirv::Capability::Float16)) &&
              h.count(cap(spirv::Capability::StorageBuffer16BitAccess)));
  EXPECT_FALSE(h.count(cap(spirv::Capability::Int8)));
  EXPECT_TRUE(module_caps(ia.cast(dtypes::int64) + 1).count(cap(spirv::Capability::Int64)));
  EXPECT_TRUE(module_caps(a.cast(dtypes::float64) + 1).count(cap(spirv::Capability::Float64)));
}

TEST(SpirvErrors, MissingFeaturesAndTypes) {
  const Tensor a = randf({4, 5}, 1), ia = randi({4, 5}, 5);
  auto throws_render = [](const Tensor& t, const render::SpirvOptions& opt, const std::string& needle) {
    try {
      render_all({t.uop()}, "err", opt);
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("[render]"), std::string::npos) << msg;
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      return;
    }
    ADD_FAILURE() << "no error mentioning " << needle;
  };
  throws_render(a.cast(dtypes::float16) + 1, {.float16 = false}, "shaderFloat16");
  throws_render(ia.cast(dtypes::int64) + 1, {.int64 = false}, "shaderInt64");
  throws_render(ia.cast(dtypes::uint8) * 3, {.int8 = false}, "shaderInt8");
  throws_render(a < 0.5f, {.storage8 = false}, "storageBuffer8BitAccess");
  throws_render(a.cast(dtypes::bfloat16) + 1, {}, "bfloat16");
  throws_render(a.cast(dtypes::float64).exp(), {}, "accurate_transcendentals");
}

class Summary : public testing::Environment {
 public:
  void TearDown() override {
    std::string ops;
    for (const std::string& s : g_uops) ops += " " + s;
    std::printf("\nspirv: %zu modules validated for vulkan1.2 and vulkan1.3; kernel uops seen:%s\n",
                g_validated, ops.c_str());
  }
};
const auto* const kSummary = testing::AddGlobalTestEnvironment(new Summary);

}  // namespace
}  // namespace sluice
