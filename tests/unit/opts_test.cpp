// Optimization actions (core/codegen/opts.h) and the heuristic (heuristic.h): every action on
// elementwise, reduce, matmul, broadcast and conv kernels, run on the CPU device (or, for LOCAL and GROUP,
// on the OpenCL device when it is present) and compared with the reference evaluator; invalid actions
// and kernels over device limits rejected with their reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/codegen/codegen.h"
#include "core/codegen/estimate.h"
#include "core/codegen/opts.h"
#include "core/schedule/schedule.h"
#include "hcq/device.h"
#include "hcq/queue.h"
#include "renderers/cpu.h"
#include "renderers/cuda.h"
#include "renderers/opencl.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"
#include "tests/unit/kernel_fixtures.h"

namespace sluice::codegen {
namespace {

using O = OptOp;
using testing_kernels::item_of;
using testing_kernels::randf;

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

DeviceCaps gpu_caps() {
  DeviceCaps c;
  c.global_dims = 3;
  c.has_local = true;
  c.max_local_size = 256;
  c.local_max = {256, 256, 64};
  c.local_bytes = 32768;
  return c;
}

size_t count(const Kernel& k, Op op) {
  return size_t(std::count_if(k.uops.begin(), k.uops.end(), [&](const UOp& u) { return u.op() == op; }));
}
bool has_vector_access(const Kernel& k) {
  return std::any_of(k.uops.begin(), k.uops.end(), [](const UOp& u) {
    return (u.op() == Op::Load && u.dtype().is_vector()) ||
           (u.op() == Op::Store && u.src(1).dtype().is_vector());
  });
}

// Runs the kernel on dev (launching local_size work-items per group) and returns output 0 as floats.
std::vector<float> run_on(hcq::Device& dev, const render::Renderer& r, const ScheduleItem& it,
                          const Kernel& k) {
  const std::string src = r.render(k);
  std::vector<hcq::Binary> bins = dev.compiler().compile_many(std::vector<std::string>{src});
  auto prog = dev.load_program(k.name, bins.at(0), {uint32_t(it.bufs.size()), 0});
  hcq::Allocator& alloc = dev.allocator();
  std::vector<hcq::Buffer> mem;
  hcq::KernelArgs args;
  for (const UOp& b : it.bufs) {
    const uint64_t bytes = uint64_t(b.arg_as<int64_t>()) * uint64_t(b.dtype().itemsize());
    mem.push_back(alloc.alloc(std::max<uint64_t>(bytes, 1)));
    if (auto host = host_buffer(b)) alloc.copyin(mem.back(), host->bytes.data(), bytes);
    args.bufs.push_back(mem.back().addr);
  }
  hcq::HwQueue q;
  q.exec(*prog, args, {k.global_size[0], k.global_size[1], k.global_size[2]},
         {k.local_size[0], k.local_size[1], k.local_size[2]});
  const uint64_t done = q.submit(dev);
  dev.synchronize();
  std::vector<float> out(size_t(it.bufs[0].arg_as<int64_t>()));
  alloc.copyout(out.data(), mem[0], out.size() * sizeof(float));
  for (hcq::Buffer& b : mem) {
    b.last_use = done;
    alloc.free(b);
  }
  return out;
}

void expect_matches(const Tensor& t, const std::vector<float>& got, double tol = 1e-4) {
  eval::HostArray want = reference(t);
  ASSERT_EQ(int64_t(got.size()), want.numel());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want.f[i]) <= tol * (1 + std::fabs(want.f[i]))) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want.f[i];
  EXPECT_EQ(bad, 0);
}

// make_kernel with opts on the CPU caps (plain ones by default: no vector pass), run on the CPU device,
// compared with the reference.
Kernel check_cpu(const Tensor& t, const std::vector<Opt>& opts, const DeviceCaps& caps = DeviceCaps{}) {
  const ScheduleItem it = item_of(t);
  Kernel k = make_kernel(it.ast, caps, opts);
  EXPECT_EQ(k.opts, opts);
  auto r = render::make_cpu_renderer();
  expect_matches(t, run_on(open_device("CPU"), *r, it, k));
  return k;
}

Tensor ew() { return (randf({16, 32}, 1) + randf({16, 32}, 2)) * randf({16, 32}, 3); }
Tensor sum_rows() { return randf({64, 128}, 4).sum({1}); }
Tensor matmul() { return randf({32, 48}, 5).matmul(randf({48, 16}, 6)); }
Tensor bcast() { return randf({16, 1}, 7) * randf({1, 32}, 8); }
Tensor matvec() { return randf({256, 512}, 16).matmul(randf({512, 1}, 17)).reshape({256}); }
// A full sum as one kernel: Tensor::sum runs one this long as partials and their sum (two kernels).
Tensor one_kernel_sum(const Tensor& t) { return Tensor(t.uop().reduce(Op::Add, {0}), t.device()); }
Tensor big_sum() { return one_kernel_sum(randf({65536}, 18)); }

TEST(Opts, UpcastElementwiseUsesVectors) {
  Kernel k = check_cpu(ew(), {{O::Upcast, 1, 4}});
  EXPECT_EQ(k.global_count(), 16u * 8);
  EXPECT_TRUE(has_vector_access(k)) << k.str();
  Kernel k2 = check_cpu(ew(), {{O::Upcast, 0, 4}, {O::Upcast, 1, 2}});
  EXPECT_EQ(count(k2, Op::Store), 4u);  // 8 outputs per work-item as 4 float2 stores
}

TEST(Opts, UpcastBroadcastAxes) {
  Kernel k = check_cpu(bcast(), {{O::Upcast, 0, 4}, {O::Upcast, 1, 4}});
  EXPECT_EQ(k.global_count(), 4u * 8);
}

TEST(Opts, UnrollReduce) {
  Kernel k = check_cpu(sum_rows(), {{O::Unroll, 1, 4}});
  EXPECT_EQ(count(k, Op::Range), 1u);
  EXPECT_EQ(k.uops[size_t(std::find_if(k.uops.begin(), k.uops.end(),
                                       [](const UOp& u) { return u.op() == Op::Range; }) -
                          k.uops.begin())]
                .src(0)
                .const_int_value(),
            32);
  check_cpu(sum_rows(), {{O::Unroll, 1, 0}});  // whole axis: no loop
  check_cpu(sum_rows(), {{O::Upcast, 0, 4}, {O::Unroll, 1, 8}});
}

TEST(Opts, MatmulUpcastUnroll) {
  Kernel k = check_cpu(matmul(), {{O::Upcast, 0, 4}, {O::Upcast, 1, 4}, {O::Unroll, 2, 4}});
  EXPECT_EQ(count(k, Op::DefineReg), 16u);
  check_cpu(matmul(), {{O::Unroll, 2, 0}});
}

TEST(Opts, PadToMasksElementwiseAndReduce) {
  check_cpu(randf({10, 7}, 9) * 3 + 1, {{O::PadTo, 1, 4}, {O::Upcast, 1, 4}});
  check_cpu(randf({8, 30}, 10).sum({1}), {{O::PadTo, 1, 8}, {O::Unroll, 1, 8}});
  // The identity of MAX (not 0) fills the padding: all-negative rows still give their maximum.
  check_cpu((randf({8, 30}, 11) - 10).max({1}), {{O::PadTo, 1, 16}, {O::Unroll, 1, 16}});
}

TEST(Opts, LoopsFitTheDeviceLimit) {
  // llvmpipe counts all of a work-item's loop iterations against 65535; here the limit is 100. 1000 is
  // unrolled by 10; prime 1009 is padded to 1012 and unrolled by 11 (MAX's identity fills the padding).
  DeviceCaps caps;
  caps.max_loop = 100;
  auto r = render::make_cpu_renderer();
  for (const Tensor& t :
       {randf({1000}, 20).sum(), randf({3, 1009}, 21).sum({1}), (randf({1009}, 22) - 10).max()}) {
    const ScheduleItem it = item_of(t);
    for (const Kernel& k : {make_kernel(it.ast, caps, {}), make_kernel(it.ast, caps)}) {
      int64_t iterations = 1;
      for (const UOp& u : k.uops)
        if (u.op() == Op::Range) iterations *= u.src(0).const_int_value();
      EXPECT_LE(iterations, 100) << k.str();
      expect_matches(t, run_on(open_device("CPU"), *r, it, k), 1e-3);
    }
  }
  const Tensor wide = randf({5000}, 23).sum();  // 50 copies per iteration: within kMaxUpcast
  EXPECT_NO_THROW(make_kernel(item_of(wide).ast, caps, {}));
  caps.max_loop = 10;
  const Tensor huge = randf({100003}, 24).sum();  // 10001 copies would be needed
  try {
    make_kernel(item_of(huge).ast, caps, {});
    ADD_FAILURE() << "no error for a loop that cannot fit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_loop"), std::string::npos) << e.what();
  }
}

TEST(Opts, ConvFromTensorApi) {
  Tensor x = randf({1, 3, 10, 10}, 12), w = randf({4, 3, 3, 3}, 13);
  Tensor c = x.conv2d(w);
  const ScheduleItem it = item_of(c);
  // Upcast the output-channel axis (the input is broadcast along it) and unroll the kernel window.
  const Kernel k0 = make_kernel(it.ast, DeviceCaps{}, {});
  std::vector<Opt> opts = {{O::Upcast, 1, 4}, {O::Unroll, 5, 0}};
  expect_matches(c, run_on(open_device("CPU"), *render::make_cpu_renderer(), it,
                           make_kernel(it.ast, DeviceCaps{}, opts)));
  Kernel k = make_kernel(it.ast, DeviceCaps{});  // the heuristic's choice runs and matches too
  expect_matches(c, run_on(open_device("CPU"), *render::make_cpu_renderer(), it, k));
  EXPECT_FALSE(k.opts.empty());
}

TEST(Opts, HeuristicMatchesReference) {
  for (const Tensor& t : {ew(), sum_rows(), matmul(), bcast(), randf({4096}, 14).sum()}) {
    const ScheduleItem it = item_of(t);
    Kernel k = make_kernel(it.ast);
    expect_matches(t, run_on(open_device("CPU"), *render::make_cpu_renderer(), it, k), 1e-3);
  }
}

TEST(Opts, HeuristicOnlyUsesWhatTheDeviceSupports) {
  for (const Tensor& t : {sum_rows(), matmul(), one_kernel_sum(randf({65536}, 15))}) {
    Kernel k = make_kernel(item_of(t).ast);  // CPU caps: no work-groups
    for (const Opt& o : k.opts) EXPECT_TRUE(o.op != O::Local && o.op != O::Group && o.op != O::GroupTop);
    EXPECT_EQ(k.local_size, (std::array<uint32_t, 3>{1, 1, 1}));
  }
  Kernel big = make_kernel(item_of(big_sum()).ast, gpu_caps());
  EXPECT_TRUE(
      std::any_of(big.opts.begin(), big.opts.end(), [](const Opt& o) { return o.op == O::GroupTop; }));
  EXPECT_GT(big.local_bytes, 0);
  Kernel mv = make_kernel(item_of(matvec()).ast, gpu_caps());
  EXPECT_EQ(mv.opts, (std::vector<Opt>{{O::Group, 1, 8}, {O::Local, 0, 4}, {O::Upcast, 0, 4}})) << mv.str();
}

// The error of an invalid action names the reason.
std::string rejection(const Tensor& t, const std::vector<Opt>& opts, const DeviceCaps& caps = {}) {
  try {
    make_kernel(item_of(t).ast, caps, opts);
  } catch (const OptError& e) { return e.what(); }
  return "(accepted)";
}

TEST(Opts, InvalidActionsAreRejectedWithTheReason) {
  EXPECT_PRED2(contains, rejection(ew(), {{O::Upcast, 5, 4}}), "axis out of range");
  EXPECT_PRED2(contains, rejection(ew(), {{O::Upcast, 1, 5}}), "does not divide the axis size 32");
  EXPECT_PRED2(contains, rejection(sum_rows(), {{O::Upcast, 1, 4}}), "UNROLL");
  EXPECT_PRED2(contains, rejection(sum_rows(), {{O::Unroll, 0, 4}}), "applies to reduce axes");
  EXPECT_PRED2(contains, rejection(sum_rows(), {{O::Group, 0, 4}}, gpu_caps()), "GROUP on a non-reduce axis");
  EXPECT_PRED2(contains, rejection(sum_rows(), {{O::Local, 0, 4}}), "no local ids");
  EXPECT_PRED2(contains, rejection(ew(), {{O::Local, 1, 32}, {O::Local, 0, 16}}, gpu_caps()),
               "512 work-items exceeds the device's 256 (max_local_size)");
  DeviceCaps small = gpu_caps();
  small.local_bytes = 64;
  EXPECT_PRED2(contains, rejection(sum_rows(), {{O::Group, 1, 32}}, small), "(local_bytes)");
  EXPECT_PRED2(contains, rejection(ew(), {{O::Upcast, 1, 32}, {O::Upcast, 0, 16}}), "unrolled copies");
  EXPECT_PRED2(contains, rejection(ew(), {{O::Upcast, 1, 4}, {O::PadTo, 1, 16}}), "split or padded already");
  EXPECT_PRED2(contains, rejection(ew(), {{O::PadTo, 1, 8}}), "multiple already");
  EXPECT_PRED2(contains, rejection(sum_rows(), {{O::Upcast, 0, 3}}), "r_64_128");  // names the kernel
}

TEST(Opts, KernelOverADeviceLimitFailsNamingIt) {
  DeviceCaps c;
  c.max_buffers = 3;
  Tensor t = randf({8}, 1) + randf({8}, 2) + randf({8}, 3);  // 4 buffers
  try {
    make_kernel(item_of(t).ast, c, {});
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_PRED2(contains, std::string(e.what()),
                 "E_8 takes 4 buffers, over the device's limit of 3 (max_buffers)");
  }
}

// LOCAL and GROUP: the structure, OpenCL / CUDA source, and a real run where the CL device is present.
std::vector<Opt> group_opts() { return {{O::Group, 1, 16}, {O::Local, 0, 4}, {O::Upcast, 0, 2}}; }

TEST(Opts, GroupOnACpuSplitsTheReductionInRegisters) {
  // No work-groups: GROUP's partials are accumulators of one work-item (Split pieces, 's' in the name),
  // combined after the loop; no shared memory, no barrier, no local size.
  Kernel k = check_cpu(sum_rows(), {{O::Group, 1, 8}});
  EXPECT_EQ(k.name, "r_64_16_8s");
  EXPECT_EQ(count(k, Op::DefineReg), 8u);
  EXPECT_EQ(count(k, Op::DefineLocal) + count(k, Op::Barrier), 0u);
  EXPECT_EQ(k.local_size, (std::array<uint32_t, 3>{1, 1, 1}));
  check_cpu(sum_rows(), {{O::Upcast, 0, 4}, {O::Group, 1, 16}, {O::Unroll, 1, 2}});
  check_cpu(sum_rows(), {{O::GroupTop, 1, 4}});
  check_cpu(sum_rows(), {{O::Group, 1, 0}});  // every iteration its own partial: no loop
  check_cpu(randf({64, 128}, 9).max({1}), {{O::Group, 1, 16}});
  // With the CPU target's vector widths the partials of a contiguous reduce axis are vector accumulators.
  const DeviceCaps cpu = device_target("CPU").caps;
  Kernel v = check_cpu(matvec(), {{O::Group, 1, 32}, {O::Upcast, 0, 4}}, cpu);
  EXPECT_GT(std::count_if(v.uops.begin(), v.uops.end(),
                          [](const UOp& u) { return u.op() == Op::DefineReg && u.dtype().is_vector(); }),
            0)
      << v.str();
  check_cpu(sum_rows(), {{O::Group, 1, 16}, {O::Unroll, 1, 2}}, cpu);
  check_cpu(sum_rows(), {{O::GroupTop, 1, 16}}, cpu);
  check_cpu(randf({64, 120}, 10).sum({1}), {{O::PadTo, 1, 32}, {O::Group, 1, 16}}, cpu);
  const Tensor x = randf({64, 128}, 11);
  check_cpu((x * x).sum({1}) + x.sum({1}), {{O::Group, 1, 16}}, cpu);  // two reductions' partials
  EXPECT_PRED2(contains, rejection(sum_rows(), {{O::Group, 1, 32}, {O::Upcast, 0, 16}}), "unrolled copies");
}

TEST(Opts, GroupUsesSharedMemoryAndBarriers) {
  Kernel k = make_kernel(item_of(sum_rows()).ast, gpu_caps(), group_opts());
  EXPECT_EQ(k.local_size, (std::array<uint32_t, 3>{16, 4, 1}));
  EXPECT_EQ(k.global_size[0], 8u);
  EXPECT_EQ(k.local_bytes, 16 * 4 * 2 * 4);
  EXPECT_EQ(count(k, Op::DefineLocal), 1u);
  EXPECT_EQ(count(k, Op::Barrier), 2u);  // one per upcast output
  EXPECT_EQ(count(k, Op::Range), 2u);    // partial sums, then the reduction over shared memory
  const std::string cl = render::make_opencl_renderer()->render(k);
  EXPECT_NE(cl.find("__local float temp0[128];"), std::string::npos) << cl;
  EXPECT_NE(cl.find("barrier(CLK_LOCAL_MEM_FENCE);"), std::string::npos);
  EXPECT_NE(cl.find("get_local_id(1)"), std::string::npos);
  const std::string cu = render::make_cuda_renderer()->render(k);
  EXPECT_NE(cu.find("__syncthreads();"), std::string::npos);
  EXPECT_NE(cu.find("__shared__ float temp0[128];"), std::string::npos);
}

struct GpuCase {
  const char* name;
  Tensor (*make)();
  std::vector<Opt> opts;
};

TEST(Opts, LocalAndGroupRunOnOpenCL) {
  const char* absent = nullptr;
  hcq::Device* dev = nullptr;
  try {
    dev = &open_device("CL");
  } catch (const Error& e) { absent = e.what(); }
  if (!dev) GTEST_SKIP() << "no CL device: " << absent;
  auto r = render::make_opencl_renderer();
  const std::vector<GpuCase> cases = {
      {"local", ew, {{O::Local, 1, 8}, {O::Local, 0, 4}}},
      {"group", sum_rows, group_opts()},
      {"grouptop", sum_rows, {{O::GroupTop, 1, 32}}},
      {"group_unroll", sum_rows, {{O::Group, 1, 8}, {O::Unroll, 1, 4}, {O::Local, 0, 8}}},
      {"matmul", matmul, {{O::Local, 0, 4}, {O::Local, 1, 4}, {O::Upcast, 1, 4}, {O::Group, 2, 4}}},
      {"vectors", ew, {{O::Upcast, 1, 4}, {O::Local, 0, 8}}},
  };
  for (const GpuCase& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor t = c.make();
    const ScheduleItem it = item_of(t);
    Kernel k = make_kernel(it.ast, gpu_caps(), c.opts);
    expect_matches(t, run_on(*dev, *r, it, k));
  }
  // The heuristic's choices for a device with work-groups: matrix-vector, a big sum, matmul, elementwise.
  for (Tensor (*make)() : {matvec, big_sum, matmul, ew}) {
    Tensor t = make();
    const ScheduleItem it = item_of(t);
    Kernel k = make_kernel(it.ast, gpu_caps());
    SCOPED_TRACE(k.name);
    EXPECT_GT(k.local_size[0], 1u);
    expect_matches(t, run_on(*dev, *r, it, k), 1e-3);
  }
}

// The reference design colours the pieces of a kernel's name by kind; here a letter marks each piece an
// action made, so the name changes when opts are applied.
TEST(Opts, KernelNameShowsHowActionsSplitTheShape) {
  const UOp add = item_of(randf({256, 256}, 20) + randf({256, 256}, 21)).ast;
  EXPECT_EQ(make_kernel(add, {}, {}).name, "E_256_256");
  EXPECT_EQ(make_kernel(add, {}, {{O::Upcast, 1, 4}}).name, "E_256_64_4u");
  EXPECT_EQ(make_kernel(add, {}, {{O::Upcast, 0, 2}, {O::Upcast, 1, 4}}).name, "E_128_2u_64_4u");
  EXPECT_EQ(make_kernel(item_of(sum_rows()).ast, {}, {{O::Unroll, 1, 4}}).name, "r_64_32_4r");
  EXPECT_EQ(make_kernel(item_of(sum_rows()).ast, gpu_caps(), {{O::Local, 0, 16}, {O::Group, 1, 8}}).name,
            "r_4_16l_16_8g");  // GROUP splits off the inner part
}

// SLUICE_DEBUG's GFLOP/s and GB/s (estimate.h): the data path's ALU ops, not index arithmetic, however the
// kernel is unrolled; every buffer once.
TEST(Opts, EstimateCountsDataPathFlopsAndEachBufferOnce) {
  const UOp add = item_of(randf({256, 256}, 22) + randf({256, 256}, 23)).ast;
  for (const std::vector<Opt>& opts : {std::vector<Opt>{}, std::vector<Opt>{{O::Upcast, 1, 4}}}) {
    const Estimate e = estimate(make_kernel(add, {}, opts));
    EXPECT_EQ(e.flops, 65536u);
    EXPECT_EQ(e.bytes, 3u * 65536 * 4);
  }
  for (const std::vector<Opt>& opts : {std::vector<Opt>{}, std::vector<Opt>{{O::Unroll, 1, 4}}}) {
    const Estimate e = estimate(make_kernel(item_of(sum_rows()).ast, {}, opts));
    EXPECT_EQ(e.flops, 64u * 128);
    EXPECT_EQ(e.bytes, (64u * 128 + 64) * 4);
  }
}

}  // namespace
}  // namespace sluice::codegen
