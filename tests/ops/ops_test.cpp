// Tensor ops realized on a device through the whole pipeline (schedule, lower, render, compile, run)
// against the reference evaluator (runtime/reference.h), in the manner of ggml's test-backend-ops: floats
// within a tolerance by dtype, integers exactly, elements the reference marks undefined skipped, and
// sentinel bytes around every buffer to catch out-of-bounds writes. A table of the kernels run is
// printed at the end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/device.h"
#include "backends/null/device.h"
#include "runtime/realize.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

const std::string kDev = "CPU";

// Deterministic host data in [lo, hi): the inputs stay exact, so differences come from the kernels.
std::vector<float> data(int64_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::vector<float> v;
  v.resize(size_t(n));
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

struct OpCase {
  // float32 default tolerance: one rounding per op, a few ops deep.
  OpCase(std::string n, std::function<Tensor()> f, double rt = 1e-5, double at = 1e-6, std::string why = "")
      : name(std::move(n)), build(std::move(f)), rtol(rt), atol(at), skip(std::move(why)) {}
  std::string name;
  std::function<Tensor()> build;
  double rtol, atol;
  std::string skip;  // why the case cannot run yet (empty: it runs)
};

OpCase loose(std::string name, std::function<Tensor()> f, double tol = 1e-4) {
  return {std::move(name), std::move(f), tol, tol};
}

std::vector<OpCase> cases() {
  const Tensor a = randf({4, 5}, 1), b = randf({4, 5}, 2), row = randf({5}, 3),
               pos = randf({4, 5}, 4, 0.1f, 4);
  const Tensor ia = randi({4, 5}, 5), ib = randi({4, 5}, 6, -6, 6), sh = randi({4, 5}, 7, -2, 34);
  std::vector<OpCase> v = {
      // elementwise float32, broadcasting
      {"add_broadcast", [=] { return a + row; }},
      {"sub_scalar", [=] { return a - 1.5f; }},
      {"mul", [=] { return a * b; }},
      {"div", [=] { return a / b; }},
      {"neg_abs", [=] { return (-a).abs(); }},
      {"maximum", [=] { return a.maximum(b); }},
      {"minimum", [=] { return a.minimum(row); }},
      {"maximum_nan", [=] { return (a / a.mul(0)).maximum(b); }},
      {"reciprocal", [=] { return pos.reciprocal(); }},
      loose("exp", [=] { return a.exp(); }),
      loose("log", [=] { return pos.log(); }),
      loose("sqrt", [=] { return pos.sqrt(); }),
      loose("sin_cos", [=] { return a.sin() + b.cos(); }),
      loose("pow", [=] { return pos.pow(b); }),
      loose("sigmoid_tanh_gelu", [=] { return a.sigmoid() + b.tanh() + a.gelu(); }),
      {"relu", [=] { return a.relu(); }},
      {"trunc_floor_ceil_round",
       [=] { return a.mul(3).trunc() + a.mul(3).floor() * 2 + b.ceil() * 4 + b.round(); }},
      {"where_cmp", [=] { return (a < b).where(a, b * 2); }},
      {"eq_ne", [=] { return (a.mul(2).round() == b.mul(2).round()).logical_or(a != a); }},
      {"isnan_isinf", [=] { return (a / a.mul(0)).isnan().logical_xor((a / 0.0f).isinf()); }},
      // int32: exact, wrapping, C division
      {"int_add_sub_mul", [=] { return ia * ia * ia * ia * ia * ia + ib - ia; }},
      {"int_div_mod", [=] { return ia.div(ib, Rounding::Trunc) + ia % ib * 100; }},  // x/0 undefined
      {"int_floor_divide", [=] { return ia.floor_divide(ib); }},
      {"int_max_min", [=] { return ia.maximum(ib) * 3 + ia.minimum(ib); }},
      {"int_bitwise", [=] { return (ia & ib) + (ia | 7) * 2 + (ia ^ ib); }},
      {"int_shifts", [=] { return (ia << sh) + (ia >> sh); }},  // shifts >= 32 undefined
      {"int_neg_cmp", [=] { return (-ia).lt(ib).where(ia, -ib); }},
      {"int_overflow", [=] { return (ia + 2147483600) * 3; }},
      // casts and other dtypes
      {"cast_float_int", [=] { return a.mul(10).cast(dtypes::int32); }},
      {"cast_int_float", [=] { return ia.cast(dtypes::float32) / 7.0f; }},
      {"cast_bool",
       [=] {
         return a.cast(dtypes::bool_).cast(dtypes::int32) + ia.cast(dtypes::bool_).cast(dtypes::int32);
       }},
      {"cast_int8_wrap", [=] { return ia.mul(9).cast(dtypes::int8); }},
      {"uint8_arith", [=] { return ia.cast(dtypes::uint8) * 7 + 200; }},
      {"int64_arith", [=] { return ia.cast(dtypes::int64) * 100000 * 100000 + ib; }},
      {"float64", [=] { return a.cast(dtypes::float64) * b.cast(dtypes::float64) + 1e-12; }, 1e-12, 1e-15},
      {"bitcast", [=] { return a.bitcast(dtypes::int32) ^ 1; }},
      {"float16", [=] { return a.cast(dtypes::float16) + 1; }, 1e-3, 1e-3,
       "float16 is not rendered for the CPU yet (compute-in-float + storage conversion is not implemented)"},
      // movement
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
      // reductions
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
      loose("softmax", [=] { return a.softmax(); }),
      loose("log_softmax", [=] { return a.log_softmax(0); }),
      loose("layernorm",
            [=] {
              return randf({3, 16}, 10).layernorm();
            }),
      loose("matmul",
            [=] {
              return randf({8, 16}, 11).matmul(randf({16, 4}, 12));
            }),
      loose("matmul_batched",
            [=] {
              return randf({2, 3, 8}, 13).matmul(randf({8, 5}, 14));
            }),
      loose("conv2d",
            [=] {
              return randf({1, 2, 5, 5}, 15).conv2d(randf({3, 2, 3, 3}, 16), {.padding = {1}});
            }),
      loose("sdpa_causal",
            [=] {
              Tensor q = randf({1, 2, 8, 4}, 17), k = randf({1, 2, 8, 4}, 18), v2 = randf({1, 2, 8, 4}, 19);
              return q.scaled_dot_product_attention(k, v2, std::nullopt, true);
            }),
      loose("mlp_gelu",
            [=] {
              return (randf({4, 8}, 20).matmul(randf({8, 16}, 21)) + 1).gelu().matmul(randf({16, 3}, 22));
            }),
      loose("cumsum", [=] { return a.cumsum(1); }),
      {"argmax", [=] { return a.argmax(1); }},
      {"arange", [=] { return Tensor::arange(0, 10, 3) * 2; }},
      {"arange_float", [=] { return Tensor::arange(0.5, 4, 0.25, std::nullopt, kDev); }},
      loose("rand",
            [=] {
              return Tensor::rand({3, 7}, 42, kDev);
            }),
      loose(
          "randn", [=] { return Tensor::randn({16}, 7, kDev); }, 1e-3),
  };
  return v;
}

// Elementwise comparison: floats within atol + rtol*|ref| (NaN matches NaN, infinities exactly), integers
// exactly, undefined reference elements skipped.
testing::AssertionResult close(const eval::HostArray& got, const eval::HostArray& ref, double rtol,
                               double atol) {
  if (got.dtype != ref.dtype || got.shape != ref.shape)
    return testing::AssertionFailure() << "got " << got.str() << "\nwant " << ref.str();
  for (int64_t k = 0; k < ref.numel(); ++k) {
    if (!ref.is_defined(k)) continue;
    bool ok;
    if (ref.dtype.is_float()) {
      const double x = got.f[size_t(k)], w = ref.f[size_t(k)];
      ok = std::isnan(w)   ? std::isnan(x)
           : std::isinf(w) ? x == w
                           : std::abs(x - w) <= atol + rtol * std::abs(w);
    } else {
      ok = got.i[size_t(k)] == ref.i[size_t(k)];
    }
    if (!ok)
      return testing::AssertionFailure()
             << "element " << k << " differs\ngot  " << got.str() << "\nwant " << ref.str();
  }
  return testing::AssertionSuccess();
}

// The CPU device, its realizer and the table of kernels run, torn down before main returns: UOps (held by
// the realizer's caches) must not be released from static destructors (core/ir/uop.cpp frees nodes
// through a thread_local work list that is gone by then).
struct CpuEnv {
  std::unique_ptr<hcq::Device> dev = cpu::open_device();
  Realizer realizer{*dev, cpu::target(*dev), RealizeOptions{.guard_bytes = 64}};
  std::vector<std::string> table;
};
CpuEnv* g_env = nullptr;

class OpsEnvironment : public testing::Environment {
 public:
  void SetUp() override { g_env = new CpuEnv; }
  void TearDown() override {
    std::printf("\n%-26s %-22s %8s %4s  %s\n", "case", "kernel", "groups", "new", "tensor ops");
    for (const std::string& r : g_env->table) std::printf("%s\n", r.c_str());
    delete g_env;
    g_env = nullptr;
  }
};
const auto* const kEnv = testing::AddGlobalTestEnvironment(new OpsEnvironment);

class Ops : public testing::TestWithParam<OpCase> {};

TEST_P(Ops, MatchesReferenceOnCpu) {
  const OpCase& c = GetParam();
  if (!c.skip.empty()) GTEST_SKIP() << "CPU: " << c.skip;
  Tensor t = c.build();
  eval::HostArray ref = reference(t);
  RealizeReport rep;
  eval::HostArray got = g_env->realizer.run({t}, &rep).at(0);
  EXPECT_TRUE(close(got, ref, c.rtol, c.atol));
  EXPECT_TRUE(rep.guard_violations.empty()) << rep.guard_violations.front();
  for (const auto& k : rep.kernels) {
    char line[256];
    std::snprintf(line, sizeof line, "%-26s %-22s %8llu %4s  %s", c.name.c_str(), k.name.c_str(),
                  (unsigned long long)k.work_groups, k.compiled ? "yes" : "", k.metadata.c_str());
    g_env->table.push_back(line);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Ops, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<OpCase>& i) { return i.param.name; });

// NULL accepts and completes everything: the same path runs end to end, with no values to check.
TEST(OpsNull, SchedulesCompilesAndRuns) {
  std::unique_ptr<hcq::Device> dev = null::open_device();
  Realizer r(*dev, null::target(*dev));
  Tensor a = randf({4, 5}, 1);
  RealizeReport rep;
  std::vector<eval::HostArray> out = r.run({(a + 1).softmax(), a.sum({0})}, &rep);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (Shape{4, 5}));
  EXPECT_GE(rep.kernels.size(), 2u);
}

}  // namespace
}  // namespace sluice
