// Lowering structure (core/codegen, without optimization actions: opts_test.cpp has those) and C
// rendering (renderers/), no device: kernel names and launch sizes, loop structure of reductions, masked
// loads, launch-dimension mapping under device limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/codegen/codegen.h"
#include "core/codegen/global_dims.h"
#include "core/ir/symbolic.h"
#include "renderers/cpu.h"
#include "runtime/tensor.h"

namespace sluice::codegen {
namespace {

Tensor input(const Shape& shape) {
  return Tensor::from(std::vector<float>(size_t(prod(shape)), 1.0f), shape, "CPU");
}

// The kernel of the last schedule item of t.
Kernel kernel_of(const Tensor& t) { return make_kernel(t.schedule().back().ast, {}, {}); }

size_t count(const Kernel& k, Op op) {
  return size_t(std::count_if(k.uops.begin(), k.uops.end(), [&](const UOp& u) { return u.op() == op; }));
}
size_t position(const Kernel& k, Op op) {
  return size_t(std::find_if(k.uops.begin(), k.uops.end(), [&](const UOp& u) { return u.op() == op; }) -
                k.uops.begin());
}

TEST(Codegen, ElementwiseIsOneFlatGridWithoutLoops) {
  Kernel k = kernel_of(input({4, 4}) + input({4, 4}));
  EXPECT_EQ(k.name, "E_4_4");
  EXPECT_EQ(k.global_size, (std::array<uint32_t, 3>{16, 1, 1}));
  EXPECT_EQ(count(k, Op::Range), 0u);
  EXPECT_EQ(count(k, Op::Store), 1u);
  ASSERT_EQ(k.bufs.size(), 3u);
  EXPECT_TRUE(k.bufs[0].written && !k.bufs[0].read);
  EXPECT_TRUE(k.bufs[1].read && !k.bufs[1].written);
  EXPECT_EQ(k.bufs[1].size, 16);
}

TEST(Codegen, ReduceIsOneLoopWithAccumulatorOutside) {
  Kernel k = kernel_of(input({64, 128}).sum({1}));
  EXPECT_EQ(k.name, "r_64_128");
  EXPECT_EQ(k.global_size[0], 64u);
  ASSERT_EQ(count(k, Op::Range), 1u);
  EXPECT_EQ(count(k, Op::EndRange), 1u);
  // acc = 0; for (...) { acc = acc + x; } out = acc
  EXPECT_LT(position(k, Op::DefineReg), position(k, Op::Range));
  EXPECT_LT(position(k, Op::Range), position(k, Op::Assign));
  EXPECT_LT(position(k, Op::Assign), position(k, Op::EndRange));
  EXPECT_LT(position(k, Op::EndRange), position(k, Op::Store));
}

TEST(Codegen, ReducesOfOneKernelShareTheLoop) {
  Tensor a = input({8, 16});
  Kernel k = kernel_of(a.sum({1}) + a.max({1}));
  EXPECT_EQ(count(k, Op::Range), 1u);
  EXPECT_EQ(count(k, Op::DefineReg), 2u);
}

TEST(Codegen, FullReductionHasOneWorkGroup) {
  Kernel k = kernel_of(input({4, 5}).sum());
  EXPECT_EQ(k.global_count(), 1u);
  EXPECT_EQ(count(k, Op::Range), 2u);  // one loop per reduced axis, nested
}

TEST(Codegen, PaddingGivesMaskedLoads) {
  Kernel k = kernel_of(input({4}).pad({{2, 2}}) * 2);
  auto load = std::find_if(k.uops.begin(), k.uops.end(), [](const UOp& u) { return u.op() == Op::Load; });
  ASSERT_NE(load, k.uops.end());
  EXPECT_EQ(load->src(0).num_src(), 3u);  // INDEX(buf, idx, valid)
}

TEST(Codegen, CopyIsNotAKernel) {
  UOp buf0 = UOp::make(Op::DefineGlobal, dtypes::float32.ptr(AddrSpace::Global, 4), {}, int64_t(0));
  UOp buf1 = UOp::make(Op::DefineGlobal, dtypes::float32.ptr(AddrSpace::Global, 4), {}, int64_t(1));
  EXPECT_THROW(make_kernel(UOp::make(Op::Copy, dtypes::float32, {buf0, buf1}, int64_t(16))), Error);
}

TEST(Codegen, NamesAreUniqueWithinAProgram) {
  KernelNamer n;
  EXPECT_EQ(n.unique("E_4"), "E_4");
  EXPECT_EQ(n.unique("E_4"), "E_4n1");
  EXPECT_EQ(n.unique("r_4"), "r_4");
  EXPECT_EQ(n.unique("E_4"), "E_4n2");
}

TEST(GlobalDims, CpuFlattensToOneDimension) {
  GlobalMap m = map_global({2, 1, 3, 4}, DeviceCaps{});
  EXPECT_EQ(m.dims, (std::vector<uint32_t>{24}));
  EXPECT_TRUE(m.axis_idx[1].is_const());
}

TEST(GlobalDims, MergesTheNeighboursWithFewestWorkGroupsIntoThreeDimensions) {
  DeviceCaps gpu{.global_dims = 3, .global_max = {65535, 65535, 65535}};
  EXPECT_EQ(map_global({2, 3, 4, 5}, gpu).dims, (std::vector<uint32_t>{6, 4, 5}));
  // A 1x1 conv's (batch, output-channel tiles, rows, column tiles): the channel tiles stay a dimension.
  EXPECT_EQ(map_global({6, 30, 12, 4}, gpu).dims, (std::vector<uint32_t>{6, 30, 48}));
  EXPECT_EQ(map_global({5, 4, 3, 2, 7}, gpu).dims, (std::vector<uint32_t>{20, 6, 7}));
}

TEST(GlobalDims, TooLargeDimensionSplitsWhenADimensionIsFree) {
  DeviceCaps gpu{.global_dims = 3, .global_max = {1024, 1024, 1024}};
  EXPECT_EQ(map_global({1 << 16}, gpu).dims, (std::vector<uint32_t>{64, 1024}));
  EXPECT_THROW(map_global({3, 5, 1 << 16}, gpu), Error);
}

TEST(GlobalDims, PrimeDimensionAboveTheLimitSplitsWithAGuard) {
  DeviceCaps gpu{.global_dims = 3, .global_max = {65535, 65535, 65535}};
  GlobalMap m = map_global({65537}, gpu);
  EXPECT_EQ(m.dims, (std::vector<uint32_t>{2, 65535}));
  ASSERT_TRUE(m.valid);  // the surplus work-groups store nothing
  // Every work-group of the grid gets an index below the size; the valid ones get each index once.
  std::vector<int> seen(65537, 0);
  for (int64_t h : {0, 1})
    for (int64_t l = 0; l < 65535; ++l) {
      const std::vector<std::pair<UOp, UOp>> at = {{m.specials[0], UOp::const_int(dtypes::index, h)},
                                                   {m.specials[1], UOp::const_int(dtypes::index, l)}};
      const UOp idx = simplify(m.axis_idx[0].substitute(at)), ok = simplify(m.valid.substitute(at));
      ASSERT_TRUE(idx.is_const() && ok.is_const());
      ASSERT_GE(idx.const_int_value(), 0);
      ASSERT_LT(idx.const_int_value(), 65537);
      if (ok.const_int_value()) ++seen[size_t(idx.const_int_value())];
    }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 65537);
  EXPECT_FALSE(map_global({1 << 16}, gpu).valid);  // a divisor splits it exactly
}

TEST(Codegen, IndexesInInt64OnlyWhereABufferPasses2To30) {
  auto index_dtype = [](const Kernel& k) {
    for (const UOp& u : k.uops)
      if (u.op() == Op::Special) return u.dtype();
    return dtypes::void_;
  };
  const int64_t wide = (int64_t(1) << 31) + 64;
  Kernel big = kernel_of(Tensor::zeros({wide}, dtypes::uint8, "CPU").contiguous() + 1);
  EXPECT_EQ(index_dtype(big), dtypes::int64);
  const std::string src = render::make_cpu_renderer()->render(big);
  EXPECT_NE(src.find("const long gidx0 = (long)"), std::string::npos) << src;
  EXPECT_EQ(index_dtype(kernel_of(input({1024, 1024}) + 1)), dtypes::int32);
}

TEST(CpuRenderer, EmitsTheKernelAbiAndGuardsDivision) {
  Tensor a = Tensor::from(std::vector<int32_t>{1, 2, 3, 4}, {4}, "CPU");
  Tensor b = Tensor::from(std::vector<int32_t>{1, 0, -1, 2}, {4}, "CPU");
  Kernel k = kernel_of(a.div(b, Rounding::Trunc));
  std::string src = render::make_cpu_renderer()->render(k);
  EXPECT_NE(
      src.find(
          "void E_4(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores)"),
      std::string::npos)
      << src;
  EXPECT_NE(src.find("== 0 ? (int)0"), std::string::npos) << src;  // x/0 never traps
}

// int32 addition of loaded values may overflow: it wraps through unsigned (signed overflow is undefined in
// C). Index arithmetic, whose ranges are known, stays plain signed C.
TEST(CpuRenderer, SignedArithmeticWrapsUnlessItsRangeFits) {
  Tensor a = Tensor::from(std::vector<int32_t>{1, 2, 3, 4}, {4}, "CPU");
  const std::string src = render::make_cpu_renderer()->render(kernel_of(a + a));
  EXPECT_NE(src.find("(int)((unsigned int)"), std::string::npos) << src;
  const std::string idx = render::make_cpu_renderer()->render(kernel_of(input({64, 64}).permute({1, 0}) + 1));
  EXPECT_EQ(idx.find("(unsigned int)"), std::string::npos) << idx;
}

TEST(CpuRenderer, HalfIsStoredAsItsBits) {  // C has no half arithmetic everywhere: emulated (cstyle.h)
  Kernel k = kernel_of(input({4}).cast(dtypes::float16) + 1);
  const std::string src = render::make_cpu_renderer()->render(k);
  EXPECT_NE(src.find("unsigned short* data0"), std::string::npos) << src;
}

}  // namespace
}  // namespace sluice::codegen
