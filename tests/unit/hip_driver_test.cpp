// The HIP backend over a simulated libamdhip64 (hip_sim_driver.cpp, loaded through $SLUICE_HIP_LIBRARY
// like the real one): the table's adapters against HIP's own signatures and layouts (signal memory for
// stream waits, hipStreamWaitValue64's mask, hipKernelNodeParams), and hcq::Graph replays running as HIP
// graphs with parameters updated between replays, or as single launches where the runtime refuses one.
// Own executable: the HIP table is loaded once per process, after the environment override below.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "backends/cuda/queue.h"
#include "backends/hip/device.h"
#include "backends/hip/driver.h"
#include "hcq/graph.h"
#include "tests/unit/hip_sim_driver.h"

using namespace std::chrono_literals;

namespace sluice {
namespace {

const bool kEnvironment = [] {
  ::setenv("SLUICE_HIP_LIBRARY", SLUICE_HIP_SIM_LIBRARY, 1);
  return true;
}();

sim_hip::State& sim() {
  static sim_hip::State* s = [] {
    void* lib = ::dlopen(SLUICE_HIP_SIM_LIBRARY, RTLD_NOW | RTLD_LOCAL);  // the library HIP loaded
    auto get = reinterpret_cast<sim_hip::State* (*)()>(lib ? ::dlsym(lib, "sim_hip_state") : nullptr);
    return get ? get() : nullptr;
  }();
  if (!s) throw std::runtime_error("cannot load " SLUICE_HIP_SIM_LIBRARY);
  return *s;
}

TEST(HipSim, TableHasGraphsAndMemoryOperationsUnderHipNames) {
  ASSERT_TRUE(kEnvironment);
  std::string why;
  const cuda::Driver* drv = hip::hip_driver(&why);
  ASSERT_NE(drv, nullptr) << why;
  EXPECT_EQ(hip::absent_reason(), "");
  EXPECT_TRUE(drv->has_graphs());
  EXPECT_TRUE(drv->has_stream_mem_ops());
  EXPECT_EQ(drv->word_alloc_bytes, 8u);  // signal memory comes one word at a time
  EXPECT_STREQ(drv->call_name("graph_add_kernel_node"), "hipGraphAddKernelNode");
  EXPECT_STREQ(drv->call_name("graph_exec_kernel_node_set_params"), "hipGraphExecKernelNodeSetParams");
  EXPECT_STREQ(drv->call_name("graph_instantiate"), "hipGraphInstantiateWithFlags");
  EXPECT_STREQ(drv->call_name("graph_launch"), "hipGraphLaunch");
  EXPECT_EQ(hip::gfx_arch(*drv, 0), "gfx90a");  // gcnArchName without its feature suffix
}

class HipSimDevice : public testing::Test {
 protected:
  void SetUp() override {
    sim().reset();
    dev_ = hip::open_device(0);
    fill_ = dev_->load_program("fill", {1}, {1, 1});
    add_ = dev_->load_program("add", {1}, {2, 1});
  }
  void TearDown() override {
    fill_.reset();
    add_.reset();
    dev_.reset();
    EXPECT_EQ(sim().rejected, 0) << "a call the HIP runtime would have failed";
  }
  std::vector<int> read(const hcq::Buffer& b) {
    std::vector<int> v(b.size / 4);
    dev_->allocator().copyout(v.data(), b, b.size);
    return v;
  }
  std::unique_ptr<hcq::Device> dev_;
  std::unique_ptr<hcq::Program> fill_, add_;
};

TEST_F(HipSimDevice, DescribesItself) {
  const hcq::Properties p = dev_->properties();
  EXPECT_EQ(p.device_name, "Simulated AMD GPU");
  EXPECT_EQ(p.vendor, "AMD");
  EXPECT_NE(p.driver_version.find("gfx90a"), std::string::npos) << p.driver_version;
  EXPECT_EQ(p.max_workgroup_size, 1024u);
  EXPECT_EQ(p.local_memory_bytes, 65536u);
  EXPECT_TRUE(cuda::uses_stream_mem_ops(*dev_));
}

TEST_F(HipSimDevice, KernelCopyAndSignalThroughSignalMemory) {
  hcq::Buffer a = dev_->allocator().alloc(64 * 4), b = dev_->allocator().alloc(64 * 4);
  auto s = dev_->new_signal("s");
  // Submitted from a thread of its own: an idle queue records on the submitting thread, which makes the
  // device current there first (this process's main thread already did, in an earlier test).
  uint64_t v = 0;
  std::thread([&] {
    v = hcq::HwQueue()
            .exec(*fill_, {{a.addr}, {10}}, {16}, {4})
            .copy(b.addr, a.addr, 64 * 4)
            .signal(*s, 3)
            .submit(*dev_);
  }).join();
  s->wait(3, 5s);
  dev_->timeline().wait(v, 5s);
  std::vector<int> got = read(b);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], 10 + i);
  EXPECT_EQ(sim().launches, 1);
  EXPECT_GE(sim().signal_words, 1);  // each an 8-byte hipExtMallocWithFlags(hipMallocSignalMemory)
  EXPECT_GE(sim().set_device, 1);    // the "context" is made current with hipSetDevice
  a.last_use = b.last_use = v;
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

// A wait on the submission's own earlier write cannot have been published yet: it is always a stream
// wait, on signal memory, comparing every bit (the simulation rejects anything else).
TEST_F(HipSimDevice, WaitOnAPendingWriteIsAStreamWaitOnSignalMemory) {
  auto x = dev_->new_signal("x"), done = dev_->new_signal("done");
  hcq::HwQueue().signal(*x, 7).wait(*x, 7).signal(*done, 1).submit(*dev_);
  done->wait(1, 5s);
  dev_->synchronize(5s);
  EXPECT_EQ(x->value(), 7u);
  EXPECT_EQ(sim().stream_waits, 1);
}

TEST_F(HipSimDevice, GraphReplaysWithPatchedArgumentsRunAsOneHipGraph) {
  hcq::Buffer a = dev_->allocator().alloc(32 * 4), b = dev_->allocator().alloc(32 * 4);
  hcq::Graph g(*dev_, {hcq::GraphExec{fill_.get(), {{a.addr}, {0}}, {32}},
                       hcq::GraphExec{add_.get(), {{b.addr, a.addr}, {1}}, {8}, {4}}});
  for (int i = 0; i < 5; ++i) {
    g.set_var(0, 0, 100 * i);
    g.set_var(1, 0, i);
    a.last_use = b.last_use = g.replay();
    std::vector<int> got = read(b);
    for (int j = 0; j < 32; ++j) ASSERT_EQ(got[j], 100 * i + j + i) << "replay " << i;
  }
  EXPECT_EQ(cuda::graphs_unavailable(*dev_), "");
  EXPECT_EQ(sim().graph_launches, 5);
  EXPECT_EQ(sim().launches, 0);
  EXPECT_EQ(sim().nodes_added, 2);
  EXPECT_EQ(sim().nodes_updated, 8);  // both nodes changed in each of the 4 replays after the first
  // The second node's launch sizes reached hipKernelNodeParams' gridDim and blockDim.
  EXPECT_EQ(sim().last_grid[0], 8u);
  EXPECT_EQ(sim().last_block[0], 4u);
  // A replay that changes nothing updates nothing.
  a.last_use = b.last_use = g.replay();
  dev_->synchronize(5s);
  EXPECT_EQ(sim().nodes_updated, 8);
  EXPECT_EQ(sim().graph_launches, 6);
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

TEST_F(HipSimDevice, RefusedGraphFallsBackToSingleLaunches) {
  sim().refuse_graphs = true;
  hcq::Buffer a = dev_->allocator().alloc(32 * 4), b = dev_->allocator().alloc(32 * 4);
  hcq::Graph g(*dev_, {hcq::GraphExec{fill_.get(), {{a.addr}, {0}}, {32}},
                       hcq::GraphExec{add_.get(), {{b.addr, a.addr}, {1}}, {32}}});
  for (int i = 0; i < 3; ++i) {
    g.set_var(1, 0, i);
    a.last_use = b.last_use = g.replay();
    std::vector<int> got = read(b);
    for (int j = 0; j < 32; ++j) ASSERT_EQ(got[j], j + i) << "replay " << i;
  }
  EXPECT_EQ(sim().graph_launches, 0);
  EXPECT_EQ(sim().launches, 6);
  const std::string why = cuda::graphs_unavailable(*dev_);
  EXPECT_NE(why.find("hipGraphAddKernelNode: hipErrorInvalidDeviceFunction (invalid device function)"),
            std::string::npos)
      << why;
  sim().rejected = 0;  // the refusal was the point
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

}  // namespace
}  // namespace sluice
