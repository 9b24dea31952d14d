// BEAM search (runtime/beam.h) on every device that computes: the chosen kernel is at least as fast as
// the heuristic's and agrees with the reference evaluator, through realize too; the disk cache makes a
// second search free; a failing candidate is skipped with its reason; a wrong kernel is refused by the
// check and never chosen.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/codegen/codegen.h"
#include "core/codegen/search.h"
#include "core/schedule/schedule.h"
#include "runtime/beam.h"
#include "runtime/device.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"
#include "tests/ops/test_devices.h"

namespace sluice {
namespace {

using codegen::OptOp;

Tensor randf(const Shape& shape, uint32_t seed, const std::string& device) {
  std::vector<float> v(size_t(prod(shape)));
  uint32_t x = seed * 2654435761u + 99;
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    f = -1.0f + 2.0f * float(x % 10007) / 10007.0f;
  }
  return Tensor::from(v, shape, device);
}

UOp only_ast(const Tensor& t) {
  std::vector<UOp> asts;
  for (const ScheduleItem& it : schedule({t.uop()}).items)
    if (it.ast.op() == Op::Sink) asts.push_back(it.ast);
  SLUICE_CHECK(asts.size() == 1) << "expected one kernel, got " << asts.size();
  return asts[0];
}

BeamOptions quick(bool cache = false) {
  BeamOptions o;
  o.width = 2;
  o.budget_s = 2;
  o.use_cache = cache;
  return o;
}

class Beam : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (std::string why = testing_devices::absent(GetParam()); !why.empty()) GTEST_SKIP() << why;
    dev_ = &open_device(GetParam());
  }
  hcq::Device* dev_ = nullptr;
};

TEST_P(Beam, ChoosesAKernelNoSlowerThanTheHeuristicThatMatchesTheReference) {
  const Tensor t = randf({48, 64}, 1, GetParam()).matmul(randf({64, 40}, 2, GetParam())).relu();
  const UOp ast = only_ast(t);
  const BeamResult r = beam_search(ast, *dev_, device_target(GetParam()), quick());
  EXPECT_FALSE(r.from_cache);
  EXPECT_GT(r.timed, 2u);
  EXPECT_TRUE(r.rejected.empty()) << r.rejected.front();
  EXPECT_GT(r.best_us, 0);
  EXPECT_LE(r.best_us, r.heuristic_us);
  EXPECT_NO_THROW(codegen::make_kernel(ast, device_target(GetParam()).caps, r.opts));

  // Through realize, with the search turned on by the environment.
  setenv("SLUICE_BEAM", "2", 1);
  setenv("SLUICE_BEAM_BUDGET", "2", 1);
  Tensor u = (randf({16, 24}, 3, GetParam()).matmul(randf({24, 8}, 4, GetParam())) * 0.5f).realize();
  unsetenv("SLUICE_BEAM");
  unsetenv("SLUICE_BEAM_BUDGET");
  const eval::HostArray want = reference(u);
  const std::vector<float> got = u.to_vector<float>();
  ASSERT_EQ(int64_t(got.size()), want.numel());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want.value(int64_t(k)), 1e-4) << k;
}

// The budget bounds the search, not round 0 (a loaded machine can spend a small budget on round 0
// alone), and the first batch after round 0 is timed however small the budget is.
TEST_P(Beam, TheBudgetStartsAfterRoundZeroAndItsFirstBatchAlwaysRuns) {
  BeamOptions o = quick();
  o.budget_s = 1e-9;
  const UOp ast = only_ast(randf({32, 32}, 11, GetParam()).sum({1}));
  const BeamResult r = beam_search(ast, *dev_, device_target(GetParam()), o);
  EXPECT_GT(r.timed, 2u) << "no candidate timed past round 0";
  EXPECT_LE(r.timed, 2u + 8u) << "the spent budget did not stop the search after its first batch";
}

TEST_P(Beam, ASecondSearchReadsTheDiskCache) {
  const UOp ast = only_ast(randf({32, 32}, 5, GetParam()).sum({1}));
  const std::string path = beam_cache_path(ast, *dev_, 2);
  if (path.empty()) GTEST_SKIP() << "the device's compiler has no cache directory";
  std::filesystem::remove(path);
  const BeamResult first = beam_search(ast, *dev_, device_target(GetParam()), quick(true));
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  const uint64_t runs = dev_->compiler().invocations(), hits = dev_->compiler().cache_hits();
  const BeamResult second = beam_search(ast, *dev_, device_target(GetParam()), quick(true));
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.opts, first.opts);
  EXPECT_EQ(second.timed, 0u);
  EXPECT_EQ(dev_->compiler().invocations(), runs);
  EXPECT_EQ(dev_->compiler().cache_hits(), hits);
}

TEST_P(Beam, ADamagedOrStaleCacheEntryIsSearchedAgain) {
  const UOp ast = only_ast(randf({16, 32}, 9, GetParam()).sum({0}));
  const std::string path = beam_cache_path(ast, *dev_, 2);
  if (path.empty()) GTEST_SKIP() << "the device's compiler has no cache directory";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  for (const char* entry :
       {"not a cache entry\n", "opts: UPCAST axis 9 arg 4\n", "opts: SPIN axis 0 arg 2\n"}) {
    std::ofstream(path) << entry;
    const BeamResult r = beam_search(ast, *dev_, device_target(GetParam()), quick(true));
    EXPECT_FALSE(r.from_cache) << entry;
    EXPECT_GT(r.timed, 0u) << entry;
    EXPECT_NO_THROW(codegen::make_kernel(ast, device_target(GetParam()).caps, r.opts)) << entry;
  }
}

TEST_P(Beam, AFailingCandidateIsSkippedWithItsReason) {
  const UOp ast = only_ast(randf({64, 32}, 6, GetParam()) * 3.0f + 1.0f);
  BeamOptions o = quick();
  o.probe = [](codegen::Candidate& c) {
    if (c.opts.size() == 1 && c.opts[0].op == OptOp::Upcast) throw Error("[beam test] planted failure");
  };
  const BeamResult r = beam_search(ast, *dev_, device_target(GetParam()), o);
  size_t planted = 0;  // others may be skipped too (a loaded machine: a deadline)
  for (const std::string& s : r.skipped)
    planted += s.find(": [beam test] planted failure") != std::string::npos;
  EXPECT_GT(planted, 0u);
  EXPECT_FALSE(r.opts.size() == 1 && r.opts[0].op == OptOp::Upcast) << codegen::opts_str(r.opts);
}

TEST_P(Beam, AWrongKernelIsRefusedByTheReferenceCheck) {
  const Tensor a = randf({32, 16}, 7, GetParam()), b = randf({32, 16}, 8, GetParam());
  const UOp ast = only_ast(a + b), wrong = only_ast(a - b);  // the same buffers, another result
  const codegen::DeviceCaps caps = device_target(GetParam()).caps;
  BeamOptions o = quick();
  o.probe = [&](codegen::Candidate& c) {
    codegen::Kernel k = codegen::make_kernel(wrong, caps, c.opts);
    k.name = c.kernel.name;
    c.kernel = k;
  };
  const BeamResult r = beam_search(ast, *dev_, device_target(GetParam()), o);
  ASSERT_FALSE(r.rejected.empty());
  EXPECT_NE(r.rejected[0].find("the reference evaluator gives"), std::string::npos) << r.rejected[0];
  EXPECT_EQ(r.opts, codegen::make_kernel(ast, caps).opts);  // the heuristic's, the fallback
}

TEST(BeamOptions, BadEnvironmentValuesNameTheVariable) {
  setenv("SLUICE_BEAM", "two", 1);
  try {
    beam_options_from_env();
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("SLUICE_BEAM='two' is not a number from 0 to 64"), std::string::npos)
        << e.what();
  }
  unsetenv("SLUICE_BEAM");
  EXPECT_EQ(beam_options_from_env().width, 0);
}

INSTANTIATE_TEST_SUITE_P(Devices, Beam, testing::ValuesIn(testing_devices::devices_with_values()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sluice
