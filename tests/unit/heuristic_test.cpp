// The hand-coded heuristic on the CPU device's own target (backends/cpu/device.cpp): the register tile it
// picks for matmuls and convolutions (UPCAST of the output's columns and rows, packed into vector
// accumulators and FMAs by vectorize.h), ragged columns upcast whole, and the results of tiled and untiled
// kernels, odd sizes included, against the reference evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/codegen/codegen.h"
#include "core/codegen/vectorize.h"
#include "core/schedule/schedule.h"
#include "runtime/device.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"
#include "tests/unit/kernel_fixtures.h"

namespace sluice::codegen {
namespace {

using O = OptOp;
using testing_kernels::randf;

// The kernel the CPU target builds for the last compute item of t's schedule.
Kernel cpu_kernel(const Tensor& t) {
  Schedule s = schedule({t.uop()});
  UOp ast;
  for (const ScheduleItem& it : s.items)
    if (it.ast.op() == Op::Sink) ast = it.ast;
  return make_kernel(ast, device_target("CPU").caps);
}

size_t count_if(const Kernel& k, Op op, bool vector) {
  return size_t(std::count_if(k.uops.begin(), k.uops.end(),
                              [&](const UOp& u) { return u.op() == op && u.dtype().is_vector() == vector; }));
}

// t realized on the CPU device, compared with the reference evaluator (relative tolerance: the tile's
// FMAs round once where the reference rounds twice; a NaN where the reference has one). Returns how many
// NaNs the reference has.
int expect_matches_reference(Tensor t) {
  const eval::HostArray want = reference(t);
  const std::vector<float> got = t.to_vector<float>();
  EXPECT_EQ(int64_t(got.size()), want.numel());
  if (int64_t(got.size()) != want.numel()) return 0;
  int bad = 0, nans = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    nans += std::isnan(want.f[i]);
    const bool ok = std::isnan(want.f[i])
                        ? std::isnan(got[i])
                        : std::fabs(got[i] - want.f[i]) <= 1e-4 * (1 + std::fabs(want.f[i]));
    if (!ok && bad++ < 5) ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want.f[i];
  }
  EXPECT_EQ(bad, 0);
  return nans;
}

// Random values with a NaN every 97 elements.
Tensor with_nans(const Shape& shape, uint32_t seed) {
  std::vector<float> v = randf(shape, seed).to_vector<float>();
  for (size_t i = 5; i < v.size(); i += 97) v[i] = std::nanf("");
  return Tensor::from(v, shape, "CPU");
}

TEST(Heuristic, CpuMatmulGetsARegisterTile) {
  const Tensor a = Tensor::empty({1024, 1024}, dtypes::float32, "CPU");
  const Tensor b = Tensor::empty({1024, 1024}, dtypes::float32, "CPU");
  const Kernel k = cpu_kernel(a.matmul(b));
  // Half the registers hold accumulators, the tallest tile first: with AVX-512's 32, 8 rows of 2 vectors
  // of 16 (each reduction step loads 2 column vectors for 16 FMAs); with AVX2's 16, 4 rows of 2 vectors
  // of 8. The reduce loop stays rolled.
  const std::vector<int> widths = device_target("CPU").caps.vector_widths;
  const int64_t vw = *std::max_element(widths.begin(), widths.end());
  const int64_t rows = vw == 16 ? 8 : 4, cols = 2 * vw, vectors = rows * cols / vw;
  EXPECT_EQ(k.opts, (std::vector<Opt>{{O::Upcast, 1, cols}, {O::Upcast, 0, rows}})) << k.str();
  EXPECT_EQ(count_if(k, Op::DefineReg, true), size_t(vectors)) << k.str();  // rows x column vectors
  EXPECT_EQ(count_if(k, Op::DefineReg, false), 0u) << k.str();
  EXPECT_EQ(count_if(k, Op::MulAcc, true), size_t(vectors)) << k.str();  // one vector FMA per accumulator
  EXPECT_EQ(count_if(k, Op::Load, true), size_t(cols / vw)) << k.str();  // one row of the right operand
}

TEST(Heuristic, CpuGridWalksTheAxisSharingTheLargestInput) {
  // Consecutive work-groups of a core share the largest input read in the loops (renderers/cpu.cpp): a
  // matmul's column panel down its rows, a convolution's input across its output channels; an elementwise
  // kernel keeps memory order, in runs of an inner loop.
  const Tensor a = Tensor::empty({256, 256}, dtypes::float32, "CPU");
  const render::Target t = device_target("CPU");
  const std::string mm = t.renderer->render(cpu_kernel(a.matmul(a)));
  EXPECT_NE(mm.find("if (++g0 == launch[0]) { g0 = 0; ++g1; }"), std::string::npos) << mm;
  const std::string ew = t.renderer->render(cpu_kernel(a + 1.0f));
  EXPECT_NE(ew.find("for (; g1 < stop; ++g1) {"), std::string::npos) << ew;
  EXPECT_NE(ew.find("g1 = 0; ++g0;"), std::string::npos) << ew;
  const Tensor x = Tensor::empty({1, 32, 64, 64}, dtypes::float32, "CPU"),
               w = Tensor::empty({32, 32, 3, 3}, dtypes::float32, "CPU");
  const std::string conv = t.renderer->render(cpu_kernel(x.conv2d(w)));
  EXPECT_NE(conv.find("if (++g0 == launch[0]) {"), std::string::npos) << conv;
}

TEST(Heuristic, CpuTiledMatmulsMatchTheReference) {
  // Tiled: 96 columns take tiles of 32, 68 rows tiles of 4; an odd reduce of 129.
  const Tensor a = randf({68, 129}, 1), b = randf({129, 96}, 2);
  const Kernel k = cpu_kernel(a.matmul(b));
  EXPECT_FALSE(k.opts.empty());
  EXPECT_GT(count_if(k, Op::MulAcc, true), 0u) << k.str();
  expect_matches_reference(a.matmul(b));
  // Tiled, with a bias and relu after the reduction (MLP layer) and a batch axis (attention).
  expect_matches_reference((randf({64, 80}, 3).matmul(randf({80, 128}, 4)) + randf({128}, 5)).relu());
  expect_matches_reference(randf({3, 16, 40}, 6).matmul(randf({3, 40, 32}, 7)));
}

TEST(Heuristic, CpuTileKeepsOnlyVectorAccumulatorsUnderAScalarTail) {
  // relu (WHERE of CMPLT) has no vector form in C: it runs per lane on lanes of the vector accumulators,
  // which leaves no scalar copy of the matmul behind.
  const Tensor y = (randf({16, 24}, 12).matmul(randf({24, 64}, 13)) * 0.5f).relu() + 1.0f;
  const Kernel k = cpu_kernel(y);
  EXPECT_GT(count_if(k, Op::Where, false), 0u) << k.str();
  EXPECT_EQ(count_if(k, Op::DefineReg, false), 0u) << k.str();
  EXPECT_GT(count_if(k, Op::DefineReg, true), 0u) << k.str();
  expect_matches_reference(y);
}

TEST(Heuristic, CpuTileTranscendentalsStayVectors) {
  // A GELU tail (EXP2, RECIP) and the other unary float ops run on the tile's vectors (libm per lane in
  // one out-of-line loop per function: renderers/cstyle.h), not lane by lane in the kernel.
  const Tensor m = randf({16, 24}, 14).matmul(randf({24, 64}, 15)) * 0.25f;
  const Tensor gelu = m.gelu();
  const Kernel k = cpu_kernel(gelu);
  EXPECT_GT(count_if(k, Op::Exp2, true), 0u) << k.str();
  EXPECT_EQ(count_if(k, Op::Exp2, false), 0u) << k.str();
  EXPECT_GT(count_if(k, Op::Recip, true), 0u) << k.str();
  EXPECT_EQ(count_if(k, Op::Recip, false), 0u) << k.str();
  expect_matches_reference(gelu);
  const Tensor un = m.sin() + (m * m + 1.0f).sqrt().log2() + m.trunc() - m.neg();
  EXPECT_GT(count_if(cpu_kernel(un), Op::Sin, true), 0u) << cpu_kernel(un).str();
  expect_matches_reference(un);
}

TEST(Heuristic, CpuRaggedColumnsAreUpcastWholeOrByADivisor) {
  // A conv's 11 output columns (no multiple of the vector width): the whole row of columns, 4 output
  // channels and 2 output rows of accumulators, as vectors of 8, 2 and 1 lanes.
  const Tensor x = randf({4, 2, 12, 13}, 16), w = randf({8, 2, 3, 3}, 17), b = randf({8}, 18);
  const Tensor conv = x.conv2d(w, {.bias = b});
  const Kernel k = cpu_kernel(conv);
  ASSERT_GE(k.opts.size(), 2u) << k.str();
  EXPECT_EQ(k.opts[0], (Opt{O::Upcast, 3, 0})) << k.str();
  EXPECT_EQ(k.opts[1], (Opt{O::Upcast, 1, 4})) << k.str();
  EXPECT_GT(count_if(k, Op::MulAcc, true), 0u) << k.str();
  expect_matches_reference(conv);
  // A pooled map's 13 columns: one vector store and its tail.
  const Tensor pool = randf({2, 8, 26, 26}, 19).relu().max_pool2d();
  const Kernel kp = cpu_kernel(pool);
  EXPECT_NE(std::find(kp.opts.begin(), kp.opts.end(), Opt{O::Upcast, 3, 0}), kp.opts.end()) << kp.str();
  expect_matches_reference(pool);
  // A 10-class linear layer: the 10 columns whole, the batch as rows.
  const Tensor lin = randf({64, 100}, 20).matmul(randf({100, 10}, 21)) + randf({10}, 22);
  const Kernel kl = cpu_kernel(lin);
  ASSERT_GE(kl.opts.size(), 2u) << kl.str();
  EXPECT_EQ(kl.opts[0], (Opt{O::Upcast, 1, 0})) << kl.str();
  EXPECT_EQ(kl.opts[1].op, O::Upcast) << kl.str();
  expect_matches_reference(lin);
  // Wider ragged columns (a 6625-class text recognizer's head; 225 here): their largest divisor between
  // one and two vectors, 25 lanes (16 + 8 + 1) with AVX-512, 15 (8 + 4 + 2 + 1) with AVX2.
  const Tensor head = randf({16, 64}, 30).matmul(randf({64, 225}, 31));
  const Kernel kh = cpu_kernel(head);
  const std::vector<int> widths = device_target("CPU").caps.vector_widths;
  const int64_t vw = *std::max_element(widths.begin(), widths.end());
  ASSERT_GE(kh.opts.size(), 2u) << kh.str();
  EXPECT_EQ(kh.opts[0], (Opt{O::Upcast, 1, vw == 16 ? 25 : 15})) << kh.str();
  EXPECT_GT(count_if(kh, Op::MulAcc, true), 0u) << kh.str();
  // Rows grow while the accumulators (3 registers a row: 16 + 8 + 1 lanes) fit the registers.
  const size_t accumulators = count_if(kh, Op::DefineReg, true) + count_if(kh, Op::DefineReg, false);
  EXPECT_LE(accumulators, size_t(device_target("CPU").caps.vector_registers)) << kh.str();
  EXPECT_GE(accumulators, 3u * 4u) << kh.str();
  // The heuristic counted them as vectorize packs them: whole rows of registers_for_lanes each.
  const int64_t per_row = codegen::registers_for_lanes(vw == 16 ? 25 : 15, widths);
  EXPECT_EQ(per_row, 3);
  EXPECT_EQ(accumulators % size_t(per_row), 0u) << kh.str();
  expect_matches_reference(head);
}

TEST(Heuristic, CpuPaddedRowIsOneWorkGroupWithItsLoadsUnderOneGate) {
  // A padded copy (a large conv's input, runtime/tensor_conv.cpp) of 2 x 96 maps into 6 x 100: the output
  // row is upcast whole, the padding's test along it folds into constants per lane, and the loads left
  // under the row's own test are vector loads under that gate.
  const Tensor x = randf({2, 8, 2, 96}, 32);
  const Tensor padded = x.pad({{0, 0}, {0, 0}, {2, 2}, {2, 2}});
  const Kernel k = cpu_kernel(padded.contiguous());
  ASSERT_FALSE(k.opts.empty()) << k.str();
  EXPECT_EQ(k.opts[0], (Opt{O::Upcast, 3, 0})) << k.str();
  size_t gated = 0;
  for (const UOp& u : k.uops) gated += u.op() == Op::Load && u.dtype().is_vector() && u.src(0).num_src() == 3;
  EXPECT_GT(gated, 0u) << k.str();
  expect_matches_reference(padded.contiguous());
  // Read through a padding, rows wider than 8 vectors too: a 192-wide map padded by 1 (194 lanes, which
  // 4 does not divide) is not left scalar.
  const Tensor wide = randf({1, 4, 6, 192}, 35).pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}).contiguous();
  const Kernel kw = cpu_kernel(wide);
  ASSERT_FALSE(kw.opts.empty()) << kw.str();
  EXPECT_EQ(kw.opts[0], (Opt{O::Upcast, 2, 0})) << kw.str();  // (4, 8, 194): the batch of 1 is gone
  expect_matches_reference(wide);
}

TEST(Heuristic, CpuReductionRowsAreUpcastByFourWhenTheWholeRowWouldNotFit) {
  // A sum over 8 steps (unrolled whole by step 4) into rows of 64: the whole row would be 512 copies of
  // the body, past kMaxUpcast, so the row is upcast by 4 (vector stores), not left scalar.
  const Tensor s = randf({64, 8, 64}, 36).sum({1});
  const Kernel k = cpu_kernel(s);
  EXPECT_NE(std::find_if(k.opts.begin(), k.opts.end(), [](const Opt& o) { return o.op == O::Upcast; }),
            k.opts.end())
      << k.str();
  expect_matches_reference(s);
}

TEST(Heuristic, CpuDepthwiseConvCopiesItsInputPaddedAlongItsRowsOnly) {
  // The copy of a large depthwise conv's input pads the last axis (columns) only: 2 x 96 maps padded by
  // 2 are copied as 2 x 100, not 6 x 100; the rows' padding is a test per row of taps in the conv.
  const Tensor x = randf({6, 64, 2, 96}, 40), w = randf({64, 1, 5, 5}, 41);
  const Tensor conv = x.conv2d(w, {.groups = 64, .padding = {2}});
  const Schedule s = schedule({conv.uop()});
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].bufs[0].arg_as<int64_t>(), 6 * 64 * 2 * 100);
  const Kernel k = make_kernel(s.items[1].ast, device_target("CPU").caps);
  size_t gated = 0;  // vector loads under the row's test
  for (const UOp& u : k.uops) gated += u.op() == Op::Load && u.dtype().is_vector() && u.src(0).num_src() == 3;
  EXPECT_GT(gated, 0u) << k.str();
  expect_matches_reference(conv);
}

TEST(Heuristic, CpuDepthwiseConvKeepsSeveralVectorAccumulators) {
  // A 5x5 depthwise conv (large enough to read a padded copy) over 96 columns, which no later upcast by 4
  // of the columns left over follows (3 x 2 vectors): each vector accumulator is a chain of FMAs, so the
  // columns are upcast by up to 8 vectors, not 2.
  const Tensor x = randf({6, 64, 2, 96}, 33), w = randf({64, 1, 5, 5}, 34);
  const Tensor conv = x.conv2d(w, {.groups = 64, .padding = {2}});
  const Kernel k = cpu_kernel(conv);
  const std::vector<int> widths = device_target("CPU").caps.vector_widths;
  const int64_t vw = *std::max_element(widths.begin(), widths.end());
  EXPECT_EQ(count_if(k, Op::DefineReg, true) * size_t(vw), size_t(vw == 16 ? 96 : 48)) << k.str();
  expect_matches_reference(conv);
}

TEST(Heuristic, CpuMaxIsAVectorMaxThatKeepsNaNs) {
  // A hardswish as ONNX defines it (a clip: MAX against constants), a 2x2 max pool (MAX of loads) and an
  // elementwise maximum pack into vector MAX, not a per-lane select; NaNs stay NaN, as in the reference.
  const Tensor x = with_nans({2, 8, 16, 64}, 37);
  for (Tensor t : {x * (x / 6 + 0.5).clip(0, 1), x.max_pool2d(), x.maximum(x.flip({3}))}) {
    const Kernel k = cpu_kernel(t);
    EXPECT_GT(count_if(k, Op::Max, true), 0u) << k.str();
    EXPECT_EQ(count_if(k, Op::Max, false), 0u) << k.str();
    EXPECT_GT(expect_matches_reference(t), 0);
  }
}

TEST(Heuristic, CpuMatrixVectorSplitsTheReductionIntoVectorLanes) {
  // x @ W^T with W row-major (a PyTorch Linear's weight, batch 1): no output axis is read contiguously, the
  // reduce axis is; GROUP on a CPU splits it into partial sums (Split pieces) packed into vector
  // accumulators, combined after the loop.
  const Tensor x = randf({1, 256}, 23), w = randf({96, 256}, 24);
  const Tensor y = x.matmul(w.transpose(0, 1));
  const Kernel k = cpu_kernel(y);
  const std::vector<int> widths = device_target("CPU").caps.vector_widths;
  const int64_t vw = *std::max_element(widths.begin(), widths.end());
  ASSERT_FALSE(k.opts.empty()) << k.str();
  EXPECT_EQ(k.opts[0], (Opt{O::Group, 1, 2 * vw})) << k.str();
  EXPECT_GT(count_if(k, Op::DefineReg, true), 0u) << k.str();
  EXPECT_GT(count_if(k, Op::MulAcc, true), 0u) << k.str();
  expect_matches_reference(y);
  // A max over a contiguous row (not split), and a sum whose reduce axis no vector width divides, stay
  // right.
  expect_matches_reference(randf({64, 320}, 25).max({1}));
  expect_matches_reference(randf({1, 200}, 26).matmul(randf({40, 200}, 27).transpose(0, 1)));
}

TEST(Heuristic, CpuStftConvSplitsItsReductionOverPhases) {
  // An STFT as a strided conv1d (258 filters of 256 taps, hop 128, 4 frames: Silero VAD's): its phase copy
  // is laid out channels last (runtime/tensor_conv.cpp), so the reduction over the 128 phases reads input
  // and weight contiguously and takes the partial sums in vector lanes, as a matrix-vector product does.
  const Tensor x = randf({1, 1, 640}, 28), w = randf({258, 1, 256}, 29);
  const Tensor y = x.conv2d(w, {.stride = {128}});
  const Kernel k = cpu_kernel(y);
  bool group = false;
  for (const Opt& o : k.opts) group |= o.op == O::Group;
  EXPECT_TRUE(group) << k.str();
  EXPECT_GT(count_if(k, Op::MulAcc, true), 0u) << k.str();
  expect_matches_reference(y);
}

TEST(Heuristic, CpuOddMatmulMatchesTheReference) {
  // 517 columns take no vector tile: the scalar heuristic path, on sizes no tile divides.
  const Tensor a = randf({131, 129}, 8), b = randf({129, 517}, 9);
  expect_matches_reference(a.matmul(b));
  expect_matches_reference(randf({7, 33}, 10).matmul(randf({33, 5}, 11)));
}

}  // namespace
}  // namespace sluice::codegen
