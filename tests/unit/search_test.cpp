// BEAM search's device-free parts: the kernel-AST reference evaluator (core/eval/kernel_eval.h), checked
// against the tensor-level reference evaluator on kernels of every shape of view (permuted, broadcast,
// padded, flipped, two-view reshapes), reductions and convolutions; the search space (codegen/search.h);
// and the text form of action lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/codegen/codegen.h"
#include "core/codegen/search.h"
#include "core/eval/kernel_eval.h"
#include "core/ir/shape_tracker.h"
#include "core/schedule/schedule.h"
#include "core/schedule/views.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"
#include "tests/unit/kernel_fixtures.h"

namespace sluice {
namespace {

using codegen::Opt;
using codegen::OptOp;
using testing_kernels::item_of;
using testing_kernels::randf;

// Every element of t's one kernel from evaluate_kernel, against reference(t).
void expect_matches_reference(const Tensor& t) {
  const ScheduleItem it = item_of(t);
  std::vector<eval::HostArray> bufs;
  for (size_t i = 0; i < it.bufs.size(); ++i)
    bufs.push_back(i < it.ast.num_src() ? eval::HostArray{it.bufs[i].dtype(), {0}, {}, {}, {}}
                                        : read_host_buffer(it.bufs[i]));
  const eval::HostArray want = reference(t);
  std::vector<int64_t> all(size_t(want.numel()));
  for (size_t k = 0; k < all.size(); ++k) all[k] = int64_t(k);
  const std::vector<eval::KernelValue> got = eval::evaluate_kernel(it.ast, bufs, all);
  ASSERT_EQ(int64_t(got.size()), want.numel());
  for (const eval::KernelValue& g : got) {
    ASSERT_EQ(g.buffer, 0u);
    const double w = want.value(g.position);
    const double v = want.dtype.is_float() ? g.value.f : double(g.value.i);
    ASSERT_TRUE(g.defined) << "element " << g.position;
    ASSERT_NEAR(v, w, 1e-9 * (1 + std::abs(w))) << "element " << g.position;
  }
}

TEST(KernelEval, ElementwiseThroughPermuteExpandFlip) {
  Tensor a = randf({3, 4}, 1), b = randf({4}, 2);
  expect_matches_reference((a.permute({1, 0}).flip({0}) + b.reshape({4, 1}).expand({4, 3})) * 2.5f);
}

TEST(KernelEval, PaddedAndShrunkViews) {
  Tensor a = randf({5, 6}, 3);
  expect_matches_reference(a.pad({{1, 2}, {0, 3}}, 0).shrink({{1, 7}, {2, 8}}).exp());
}

TEST(KernelEval, ReshapeOfAPermutedTensorNeedsTwoViews) {
  Tensor a = randf({4, 6}, 4);
  const Tensor t = a.permute({1, 0}).reshape({3, 8}) + 1.0f;
  size_t views = 0;
  for (const UOp& u : item_of(t).ast.toposort())
    if (u.op() == Op::View) views = std::max(views, sched::st_of(u).views.size());
  EXPECT_EQ(views, 2u);
  expect_matches_reference(t);
}

TEST(KernelEval, ReductionsSumAndMax) {
  Tensor a = randf({6, 7, 5}, 5);
  expect_matches_reference(a.sum({1}));
  expect_matches_reference(a.max({0, 2}));
}

TEST(KernelEval, MatmulWithBiasAndRelu) {
  Tensor a = randf({9, 16}, 6), w = randf({16, 11}, 7), bias = randf({11}, 8);
  expect_matches_reference((a.matmul(w) + bias).relu());
}

TEST(KernelEval, ConvolutionWithPadding) {
  Tensor x = randf({2, 3, 6, 6}, 9), w = randf({4, 3, 3, 3}, 10);
  ConvOptions o;
  o.padding = {1};
  expect_matches_reference(x.conv2d(w, o));
}

TEST(KernelEval, IntegersWrapAndCast) {
  Tensor a = Tensor::from(std::vector<int32_t>{7, -9, 120, 3, 0, 5}, {2, 3}, "CPU");
  expect_matches_reference((a * 3 + 1).cast(dtypes::int8).cast(dtypes::int32).sum({1}));
}

TEST(KernelEval, BadInputNamesTheProblem) {
  const ScheduleItem it = item_of(randf({4}, 1) + randf({4}, 2));
  std::vector<eval::HostArray> too_few(1, eval::HostArray{dtypes::float32, {0}, {}, {}, {}});
  const std::vector<int64_t> one{0};
  try {
    eval::evaluate_kernel(it.ast, too_few, one);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[evaluate_kernel] the kernel reads buffer 1"), std::string::npos)
        << e.what();
  }
}

TEST(SearchSpace, EveryCandidateIsOneActionFurtherAndDistinct) {
  const ScheduleItem it = item_of(randf({32, 64}, 1).matmul(randf({64, 48}, 2)));
  const codegen::DeviceCaps cpu;  // no work-groups: LOCAL never applies, GROUP splits in registers
  const std::vector<codegen::Candidate> c = codegen::next_candidates(it.ast, cpu, {});
  ASSERT_GT(c.size(), 5u);
  std::vector<std::string> names;
  bool split = false;
  for (const codegen::Candidate& k : c) {
    ASSERT_EQ(k.opts.size(), 1u);
    EXPECT_NE(k.opts[0].op, OptOp::Local);
    if (k.opts[0].op == OptOp::Group) {
      EXPECT_NE(k.kernel.name.find('s'), std::string::npos) << k.kernel.name;
      EXPECT_EQ(k.kernel.local_size, (std::array<uint32_t, 3>{1, 1, 1}));
      split = true;
    }
    EXPECT_EQ(k.kernel.opts, k.opts);
    names.push_back(k.kernel.str());  // GROUP and GROUPTOP by one arg share a name, not their uops
  }
  EXPECT_TRUE(split);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "two candidates split alike";

  codegen::DeviceCaps gpu;
  gpu.global_dims = 3, gpu.has_local = true, gpu.max_local_size = 256, gpu.local_max = {256, 256, 64};
  gpu.local_bytes = 32768;
  bool local = false, group = false;
  for (const codegen::Candidate& k : codegen::next_candidates(it.ast, gpu, {{OptOp::Upcast, 0, 4}})) {
    ASSERT_EQ(k.opts.size(), 2u);
    EXPECT_EQ(k.opts[0], (Opt{OptOp::Upcast, 0, 4}));
    local |= k.opts[1].op == OptOp::Local;
    group |= k.opts[1].op == OptOp::Group || k.opts[1].op == OptOp::GroupTop;
  }
  EXPECT_TRUE(local && group);
}

TEST(SearchSpace, OptsTextRoundTrips) {
  const std::vector<Opt> opts{{OptOp::Upcast, 1, 4}, {OptOp::GroupTop, 0, 16}, {OptOp::PadTo, 2, 32}};
  EXPECT_EQ(codegen::opts_str(opts), "UPCAST axis 1 arg 4, GROUPTOP axis 0 arg 16, PADTO axis 2 arg 32");
  EXPECT_EQ(codegen::parse_opts(codegen::opts_str(opts)), opts);
  EXPECT_TRUE(codegen::parse_opts("no opts").empty());
  try {
    codegen::parse_opts("UPCAST axis 1 arg 4, SPIN axis 0 arg 2");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[parse_opts] cannot read ' SPIN axis 0 arg 2'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice
