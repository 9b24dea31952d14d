// The CUDA/HIP device (backends/cuda/queue.h) over a simulated driver: a Driver table whose streams run
// every operation at once on the host (kernels are host functions, device memory is host memory, events
// complete when recorded). It checks the HCQ mapping without a GPU: kernels and copies, waits held on the
// host and on the "GPU" (stream memory operations and the event fallback), failure propagation, graphs
// with patched arguments (and single launches where the driver refuses a graph), timestamps, a kernel
// fault failing the signals with the driver's message, and that every thread that calls the driver has
// made the device's context current first.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backends/cuda/queue.h"
#include "backends/null/compiler.h"
#include "hcq/graph.h"

using namespace std::chrono_literals;

namespace sluice::cuda {
namespace {

// --- The simulated driver ---
struct Sim {
  bool memops = true;
  // A kernel fault: sticky in the context, as the driver's is: every event query returns it from then on
  // (whichever of the device's threads asks first, they all see it).
  std::atomic<CUresult> fault = 0;
  bool stuck = false;          // events never complete: a kernel that does not return
  bool refuse_graphs = false;  // cuGraphAddKernelNode fails
  std::atomic<int> launches = 0, graph_launches = 0, stream_waits = 0, event_waits = 0;
  std::atomic<int> graph_execs = 0;  // instantiated and not yet destroyed
  std::atomic<int> no_context = 0;   // calls made on a thread without the device's context current
};
Sim sim;

// The driver's per-thread current context: calls that need one fail with CUDA_ERROR_INVALID_CONTEXT.
const CUcontext kContext = reinterpret_cast<CUcontext>(uintptr_t(1));
thread_local CUcontext current = nullptr;
bool no_context() {
  if (current == kContext) return false;
  ++sim.no_context;
  return true;
}
constexpr CUresult kInvalidContext = 201;

using HostKernel = void (*)(void** params, uint64_t threads);
void fill(void** p, uint64_t n) {  // (int* out, int base): out[g] = base + g
  int* out = *static_cast<int**>(p[0]);
  int base = *static_cast<int*>(p[1]);
  for (uint64_t g = 0; g < n; ++g) out[g] = base + int(g);
}
void add(void** p, uint64_t n) {  // (int* out, const int* in, int k): out[g] = in[g] + k
  int* out = *static_cast<int**>(p[0]);
  const int* in = *static_cast<int**>(p[1]);
  int k = *static_cast<int*>(p[2]);
  for (uint64_t g = 0; g < n; ++g) out[g] = in[g] + k;
}
const std::map<std::string, HostKernel> kKernels = {{"fill", fill}, {"add", add}};

struct Event {
  std::chrono::steady_clock::time_point at;
};
struct Graph {
  std::vector<KernelNodeParams> nodes;
  std::vector<std::vector<uint64_t>> args;  // copies of the argument slots
};

CUresult ok() { return 0; }
CUresult name(CUresult r, const char** s) {
  *s = r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : nullptr;
  return r == 700 ? 0 : 1;
}
CUresult desc(CUresult r, const char** s) {
  *s = r == 700 ? "an illegal memory access was encountered" : nullptr;
  return r == 700 ? 0 : 1;
}
CUresult attribute(int* v, int attr, CUdevice) {
  *v = attr == kCanUse64BitStreamMemOps ? sim.memops : 1024;
  return 0;
}
CUresult retain(CUcontext* c, CUdevice) {
  *c = kContext;
  return 0;
}
CUresult release(CUdevice) { return 0; }
CUresult set_current(CUcontext c) {
  current = c;
  return 0;
}
CUresult alloc(CUdeviceptr* p, size_t n) {
  if (no_context()) return kInvalidContext;
  *p = CUdeviceptr(uintptr_t(std::calloc(1, n)));
  return 0;
}
CUresult free_mem(CUdeviceptr p) {
  std::free(reinterpret_cast<void*>(uintptr_t(p)));
  return 0;
}
CUresult host_alloc(void** p, size_t n, unsigned) {
  *p = std::calloc(1, n);
  return 0;
}
CUresult host_free(void* p) {
  std::free(p);
  return 0;
}
CUresult device_pointer(CUdeviceptr* d, void* h, unsigned) {
  *d = CUdeviceptr(uintptr_t(h));
  return 0;
}
CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  std::memmove(reinterpret_cast<void*>(uintptr_t(dst)), reinterpret_cast<void*>(uintptr_t(src)), n);
  return 0;
}
// Every stream made and not destroyed, as the driver keeps them: the device leaves the stream of a hung
// kernel alone for good (queue.h), which is not a leak of the process.
std::mutex streams_mu;
std::map<CUstream, std::unique_ptr<int>> streams;
CUresult stream_create(CUstream* s, unsigned) {
  if (no_context()) return kInvalidContext;
  auto stream = std::make_unique<int>();
  *s = reinterpret_cast<CUstream>(stream.get());
  std::lock_guard lk(streams_mu);
  streams[*s] = std::move(stream);
  return 0;
}
CUresult stream_destroy(CUstream s) {
  std::lock_guard lk(streams_mu);
  streams.erase(s);
  return 0;
}
CUresult stream_sync(CUstream) { return 0; }
CUresult wait_event(CUstream, CUevent, unsigned) {
  ++sim.event_waits;
  return 0;
}
// Operations run when enqueued, so a stream wait must find its value already written.
CUresult write64(CUstream, CUdeviceptr p, uint64_t v, unsigned) {
  *reinterpret_cast<uint64_t*>(uintptr_t(p)) = v;
  return 0;
}
CUresult wait64(CUstream, CUdeviceptr p, uint64_t v, unsigned) {
  ++sim.stream_waits;
  return *reinterpret_cast<uint64_t*>(uintptr_t(p)) >= v ? 0 : 1;
}
CUresult event_create(CUevent* e, unsigned) {
  if (no_context()) return kInvalidContext;
  *e = reinterpret_cast<CUevent>(new Event);
  return 0;
}
CUresult event_destroy(CUevent e) {
  if (no_context()) return kInvalidContext;
  delete reinterpret_cast<Event*>(e);
  return 0;
}
CUresult event_record(CUevent e, CUstream) {
  reinterpret_cast<Event*>(e)->at = std::chrono::steady_clock::now();
  return 0;
}
CUresult event_query(CUevent) {
  if (no_context()) return kInvalidContext;
  return sim.stuck ? 600 : sim.fault.load();
}
CUresult event_elapsed(float* ms, CUevent a, CUevent b) {
  *ms = std::chrono::duration<float, std::milli>(reinterpret_cast<Event*>(b)->at -
                                                 reinterpret_cast<Event*>(a)->at)
            .count();
  return 0;
}
CUresult module_load(CUmodule* m, const void*) {
  *m = reinterpret_cast<CUmodule>(uintptr_t(1));
  return 0;
}
CUresult module_unload(CUmodule) { return 0; }
CUresult get_function(CUfunction* f, CUmodule, const char* n) {
  auto it = kKernels.find(n);
  if (it == kKernels.end()) return 500;
  *f = reinterpret_cast<CUfunction>(it->second);
  return 0;
}
CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                unsigned, CUstream, void** params, void**) {
  if (no_context()) return kInvalidContext;
  ++sim.launches;
  reinterpret_cast<HostKernel>(f)(params, uint64_t(gx) * gy * gz * bx * by * bz);
  return 0;
}
CUresult graph_create(CUgraph* g, unsigned) {
  *g = reinterpret_cast<CUgraph>(new Graph);
  return 0;
}
CUresult graph_destroy(CUgraph g) {
  delete reinterpret_cast<Graph*>(g);
  return 0;
}
// Like the driver, nodes keep a copy of the argument values, not the caller's pointers.
void store(Graph& g, size_t i, const KernelNodeParams* p, size_t nargs) {
  g.nodes.resize(std::max(g.nodes.size(), i + 1));
  g.args.resize(g.nodes.size());
  g.nodes[i] = *p;
  g.args[i].assign(nargs, 0);
  for (size_t a = 0; a < nargs; ++a) std::memcpy(&g.args[i][a], p->params[a], 8);
}
size_t nargs(CUfunction f) { return reinterpret_cast<HostKernel>(f) == add ? 3 : 2; }
CUresult add_node(CUgraphNode* n, CUgraph g, const CUgraphNode*, size_t, const KernelNodeParams* p) {
  if (no_context()) return kInvalidContext;
  if (sim.refuse_graphs) return 98;  // an error the simulation does not name
  Graph& gr = *reinterpret_cast<Graph*>(g);
  *n = reinterpret_cast<CUgraphNode>(uintptr_t(gr.nodes.size() + 1));
  store(gr, gr.nodes.size(), p, nargs(p->func));
  return 0;
}
CUresult instantiate(CUgraphExec* e, CUgraph g, unsigned long long) {
  *e = reinterpret_cast<CUgraphExec>(new Graph(*reinterpret_cast<Graph*>(g)));
  ++sim.graph_execs;
  return 0;
}
CUresult exec_destroy(CUgraphExec e) {
  delete reinterpret_cast<Graph*>(e);
  --sim.graph_execs;
  return 0;
}
CUresult set_params(CUgraphExec e, CUgraphNode n, const KernelNodeParams* p) {
  store(*reinterpret_cast<Graph*>(e), uintptr_t(n) - 1, p, nargs(p->func));
  return 0;
}
CUresult graph_launch(CUgraphExec e, CUstream) {
  if (no_context()) return kInvalidContext;
  ++sim.graph_launches;
  Graph& g = *reinterpret_cast<Graph*>(e);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::vector<void*> ptrs;
    for (uint64_t& a : g.args[i]) ptrs.push_back(&a);
    const KernelNodeParams& p = g.nodes[i];
    reinterpret_cast<HostKernel>(p.func)(
        ptrs.data(), uint64_t(p.grid[0]) * p.grid[1] * p.grid[2] * p.block[0] * p.block[1] * p.block[2]);
  }
  return 0;
}

Driver make_driver() {
  Driver d;
  d.api = "CUDA";
  d.get_error_name = name;
  d.get_error_string = desc;
  d.device_get_attribute = attribute;
  d.primary_ctx_retain = retain;
  d.primary_ctx_release = release;
  d.ctx_set_current = set_current;
  d.mem_alloc = alloc;
  d.mem_free = free_mem;
  d.mem_host_alloc = host_alloc;
  d.mem_free_host = host_free;
  d.mem_host_get_device_pointer = device_pointer;
  d.memcpy_async = copy;
  d.stream_create = stream_create;
  d.stream_destroy = stream_destroy;
  d.stream_synchronize = stream_sync;
  d.stream_wait_event = wait_event;
  d.stream_write_value64 = write64;
  d.stream_wait_value64 = wait64;
  d.event_create = event_create;
  d.event_destroy = event_destroy;
  d.event_record = event_record;
  d.event_query = event_query;
  d.event_synchronize = [](CUevent) { return ok(); };
  d.event_elapsed_time = event_elapsed;
  d.module_load_data = module_load;
  d.module_unload = module_unload;
  d.module_get_function = get_function;
  d.launch_kernel = launch;
  d.graph_create = graph_create;
  d.graph_destroy = graph_destroy;
  d.graph_add_kernel_node = add_node;
  d.graph_instantiate = instantiate;
  d.graph_exec_destroy = exec_destroy;
  d.graph_exec_kernel_node_set_params = set_params;
  d.graph_launch = graph_launch;
  return d;
}
const Driver kDriver = make_driver();

class SimulatedGpu : public testing::TestWithParam<bool> {  // param: stream memory operations
 protected:
  void SetUp() override {
    sim.memops = GetParam();
    sim.fault = 0;
    sim.stuck = sim.refuse_graphs = false;
    for (std::atomic<int>* c : {&sim.launches, &sim.graph_launches, &sim.stream_waits, &sim.event_waits,
                                &sim.no_context, &sim.graph_execs})
      c->store(0);
    DeviceSpec spec;
    spec.drv = &kDriver;
    spec.name = "SIM";
    spec.make_compiler = [] { return null::make_compiler(); };
    dev_ = open_stream_device(std::move(spec));
    fill_ = dev_->load_program("fill", {1}, {1, 1});
    add_ = dev_->load_program("add", {1}, {2, 1});
  }
  void TearDown() override {
    fill_.reset();
    add_.reset();
    dev_.reset();
    EXPECT_EQ(sim.no_context, 0) << "a driver call on a thread without the device's context current";
  }
  std::vector<int> read(const hcq::Buffer& b) {
    std::vector<int> v(b.size / 4);
    dev_->allocator().copyout(v.data(), b, b.size);
    return v;
  }
  std::unique_ptr<hcq::Device> dev_;
  std::unique_ptr<hcq::Program> fill_, add_;
};

TEST_P(SimulatedGpu, KernelCopyAndSignal) {
  EXPECT_EQ(uses_stream_mem_ops(*dev_), GetParam());
  hcq::Buffer a = dev_->allocator().alloc(64 * 4), b = dev_->allocator().alloc(64 * 4);
  auto s = dev_->new_signal("s");
  const uint64_t t0 = hcq::now_ns();
  uint64_t v = hcq::HwQueue()
                   .exec(*fill_, {{a.addr}, {10}}, {16}, {4})
                   .copy(b.addr, a.addr, 64 * 4)
                   .signal(*s, 3)
                   .submit(*dev_);
  s->wait(3, 5s);
  dev_->timeline().wait(v, 5s);
  EXPECT_GE(s->timestamp_ns(), t0);
  EXPECT_LE(s->timestamp_ns(), hcq::now_ns());
  std::vector<int> got = read(b);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], 10 + i);
  a.last_use = b.last_use = v;
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

TEST_P(SimulatedGpu, WaitOnHostSignalIsHeldUntilSet) {
  auto a = dev_->new_signal("a"), b = dev_->new_signal("b");
  hcq::HwQueue().wait(*a, 2).signal(*b, 1).submit(*dev_);
  hcq::HwQueue().signal(*b, 5).submit(*dev_);  // behind the held one on the same queue
  EXPECT_THROW(b->wait(1, 30ms), hcq::TimeoutError);
  a->set(2);
  b->wait(5, 5s);
  EXPECT_EQ(b->value(), 5u);
  dev_->synchronize(5s);
}

TEST_P(SimulatedGpu, CrossQueueWaitStaysOnTheGpu) {
  auto x = dev_->new_signal("x"), done = dev_->new_signal("done");
  hcq::HwQueue(hcq::QueueKind::Copy).signal(*x, 7).submit(*dev_);
  hcq::HwQueue().wait(*x, 7).signal(*done, 1).submit(*dev_);
  done->wait(1, 5s);
  dev_->synchronize(5s);
  EXPECT_EQ(x->value(), 7u);
  // Either x was already published (no wait needed) or the stream waited on the GPU: never the host.
  // With memory operations the value wait follows an event wait that the driver's scheduler sees.
  EXPECT_EQ(sim.stream_waits, GetParam() ? sim.event_waits.load() : 0);
}

// A wait on the submission's own earlier write cannot have been published yet: always a GPU-side wait.
TEST_P(SimulatedGpu, WaitOnAPendingWriteIsOrderedForTheDriverToSee) {
  auto x = dev_->new_signal("x"), done = dev_->new_signal("done");
  hcq::HwQueue().signal(*x, 7).wait(*x, 7).signal(*done, 1).submit(*dev_);
  done->wait(1, 5s);
  dev_->synchronize(5s);
  EXPECT_EQ(sim.event_waits, 1);
  EXPECT_EQ(sim.stream_waits, GetParam() ? 1 : 0);
}

// A wait submitted before its writer (on the other stream) is held on the host only until the writer is
// recorded; from then on the stream waits on the GPU, so the hop costs no round trip through the host.
TEST_P(SimulatedGpu, AHeldWaitMovesToTheGpuOnceItsWriterIsRecorded) {
  auto x = dev_->new_signal("x"), done = dev_->new_signal("done");
  sim.stuck = true;  // nothing completes: x is never written while the test looks
  hcq::HwQueue().wait(*x, 7).signal(*done, 1).submit(*dev_);
  EXPECT_THROW(done->wait(1, 20ms), hcq::TimeoutError);
  EXPECT_EQ(sim.event_waits, 0) << "x has no writer yet: the wait is held on the host";
  hcq::HwQueue(hcq::QueueKind::Copy).signal(*x, 7).submit(*dev_);
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (sim.event_waits == 0 && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(sim.event_waits, 1) << "the compute stream did not take the wait over";
  EXPECT_EQ(x->value(), 0u);
  sim.stuck = false;
  done->wait(1, 5s);
  dev_->synchronize(5s);
  EXPECT_EQ(sim.stream_waits, GetParam() ? 1 : 0);
}

TEST_P(SimulatedGpu, FailedWaitFailsTheSubmissionsSignals) {
  auto bad = dev_->new_signal("bad"), out = dev_->new_signal("out"), later = dev_->new_signal("later");
  hcq::HwQueue().wait(*bad, 1).signal(*out, 1).submit(*dev_);
  bad->fail("[test] injected fault");
  try {
    out->wait(1, 5s);
    FAIL() << "the wait should rethrow the failure";
  } catch (const hcq::FaultError& e) { EXPECT_STREQ(e.what(), "[test] injected fault"); }
  dev_->synchronize(5s);
  hcq::HwQueue().signal(*later, 1).submit(*dev_);
  later->wait(1, 5s);
}

// Only what follows a held wait is held: the commands before it run and signal at once (found on an
// H100, where the whole submission used to wait for the host signal).
TEST_P(SimulatedGpu, CommandsBeforeAHeldWaitRunAtOnce) {
  auto gate = dev_->new_signal("gate"), first = dev_->new_signal("first"),
       second = dev_->new_signal("second");
  uint64_t v = hcq::HwQueue().signal(*first, 1).wait(*gate, 1).signal(*second, 1).submit(*dev_);
  first->wait(1, 5s);
  EXPECT_THROW(second->wait(1, 30ms), hcq::TimeoutError);
  gate->fail("[test] producer fault");
  EXPECT_THROW(second->wait(1, 5s), hcq::FaultError);
  dev_->timeline().wait(v, 5s);
  EXPECT_FALSE(first->failed());
}

// Profile records name their submission and packet, also for the part that ran before a held wait.
TEST_P(SimulatedGpu, ProfileRecordsNameTheirSubmissionAcrossAHeldWait) {
  hcq::Buffer a = dev_->allocator().alloc(64 * 4), b = dev_->allocator().alloc(64 * 4);
  auto gate = dev_->new_signal("gate");
  dev_->set_profiling(true);
  hcq::HwQueue::Cmd before, after, copy;
  hcq::HwQueue q;
  q.exec(*fill_, {{a.addr}, {1}}, {16}, {4}, &before)
      .wait(*gate, 1)
      .exec(*fill_, {{b.addr}, {2}}, {16}, {4}, &after)
      .copy(b.addr, a.addr, 64 * 4, &copy);
  const uint64_t v = q.submit(*dev_);
  gate->set(1);
  dev_->timeline().wait(v, 5s);
  dev_->set_profiling(false);
  std::vector<hcq::ProfileRecord> recs = dev_->take_profile();
  ASSERT_EQ(recs.size(), 3u);
  for (const auto& r : recs) EXPECT_EQ(r.submission, v) << r.name;
  EXPECT_EQ(recs[0].at, before.at);
  EXPECT_EQ(recs[1].at, after.at);
  EXPECT_EQ(recs[2].at, copy.at);
  EXPECT_EQ(recs[2].transfer, hcq::Transfer::DeviceToDevice);
  a.last_use = b.last_use = v;
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

// A device destroyed while a held wait can never be met: the submission fails, the destructor returns.
TEST_P(SimulatedGpu, DestroyedWhileAWaitIsHeldFailsItsSubmission) {
  hcq::Signal gate("gate"), out("out"), after("after");
  hcq::HwQueue().wait(gate, 1).signal(out, 1).submit(*dev_);
  hcq::HwQueue().signal(after, 1).submit(*dev_);
  auto t0 = std::chrono::steady_clock::now();
  fill_.reset();
  add_.reset();
  dev_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_TRUE(out.failed());
  EXPECT_EQ(out.error(), "[~Device] SIM was destroyed while compute:0 waited for signal 'gate' to reach 1");
  EXPECT_EQ(after.value(), 1u);
}

TEST_P(SimulatedGpu, GraphReplaysWithPatchedArgumentsRunAsOneDriverGraph) {
  hcq::Buffer a = dev_->allocator().alloc(32 * 4), b = dev_->allocator().alloc(32 * 4);
  hcq::Graph g(*dev_, {hcq::GraphExec{fill_.get(), {{a.addr}, {0}}, {32}},
                       hcq::GraphExec{add_.get(), {{b.addr, a.addr}, {1}}, {32}}});
  uint64_t v = 0;
  for (int i = 0; i < 5; ++i) {
    g.set_var(0, 0, 100 * i);
    g.set_var(1, 0, i);
    v = g.replay();
    a.last_use = b.last_use = v;
    std::vector<int> got = read(b);
    for (int j = 0; j < 32; ++j) ASSERT_EQ(got[j], 100 * i + j + i) << "replay " << i;
  }
  EXPECT_EQ(sim.graph_launches, 5);
  EXPECT_EQ(sim.launches, 0);
  EXPECT_EQ(graphs_unavailable(*dev_), "");
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

// The device is told which submissions are graph replays (Device::submit_graph): a submission shaped
// like one runs kernel by kernel, and a graph's driver graph goes when the hcq::Graph does.
TEST_P(SimulatedGpu, OnlyGraphReplaysRunAsDriverGraphs) {
  hcq::Buffer a = dev_->allocator().alloc(32 * 4), b = dev_->allocator().alloc(32 * 4);
  hcq::HwQueue q;
  q.exec(*fill_, {{a.addr}, {0}}, {32}).memory_barrier().exec(*add_, {{b.addr, a.addr}, {1}}, {32});
  for (int i = 0; i < 3; ++i) a.last_use = b.last_use = q.submit(*dev_);
  dev_->synchronize(5s);
  EXPECT_EQ(sim.graph_launches, 0);
  EXPECT_EQ(sim.launches, 6);
  {
    hcq::Graph g(*dev_, {hcq::GraphExec{fill_.get(), {{a.addr}, {0}}, {32}},
                         hcq::GraphExec{add_.get(), {{b.addr, a.addr}, {1}}, {32}}});
    for (int i = 0; i < 2; ++i) a.last_use = b.last_use = g.replay();
    dev_->synchronize(5s);
    EXPECT_EQ(sim.graph_launches, 2);
    EXPECT_EQ(sim.graph_execs, 1);
  }
  EXPECT_EQ(sim.graph_execs, 0) << "the driver graph outlived its hcq::Graph";
  EXPECT_EQ(read(b)[5], 6);
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

TEST_P(SimulatedGpu, RefusedGraphFallsBackToSingleLaunches) {
  sim.refuse_graphs = true;
  hcq::Buffer a = dev_->allocator().alloc(32 * 4), b = dev_->allocator().alloc(32 * 4);
  hcq::Graph g(*dev_, {hcq::GraphExec{fill_.get(), {{a.addr}, {0}}, {32}},
                       hcq::GraphExec{add_.get(), {{b.addr, a.addr}, {1}}, {32}}});
  for (int i = 0; i < 3; ++i) {
    g.set_var(1, 0, i);
    a.last_use = b.last_use = g.replay();
    std::vector<int> got = read(b);
    for (int j = 0; j < 32; ++j) ASSERT_EQ(got[j], j + i) << "replay " << i;
  }
  EXPECT_EQ(sim.graph_launches, 0);
  EXPECT_EQ(sim.launches, 6);
  EXPECT_EQ(graphs_unavailable(*dev_), "[replay] SIM: cuGraphAddKernelNode: error 98");
  dev_->allocator().free(a);
  dev_->allocator().free(b);
}

// A signal the caller gave up on (after a timed-out wait) and destroyed while its write is held on the
// host: the held submission, the stream's device word and the retire use the references taken at submit
// (queue.h, Signal lifetime), so the write is dropped (ASan: it was a heap-use-after-free) and the rest of
// the submission, and a submission held behind it on the other queue, still run.
TEST_P(SimulatedGpu, SignalDestroyedWhileItsWriteIsHeldIsNotWritten) {
  auto gate = dev_->new_signal("gate"), out = dev_->new_signal("out"), after = dev_->new_signal("after");
  auto behind = dev_->new_signal("behind");
  hcq::HwQueue().wait(*gate, 1).signal(*out, 1).timestamp(*out).signal(*after, 1).submit(*dev_);
  hcq::HwQueue(hcq::QueueKind::Copy).wait(*out, 1).signal(*behind, 1).submit(*dev_);
  EXPECT_THROW(out->wait(1, 20ms), hcq::TimeoutError);
  out.reset();
  gate->set(1);
  after->wait(1, 5s);
  behind->wait(1, 5s);
  dev_->synchronize(5s);
}

TEST_P(SimulatedGpu, KernelFaultFailsSignalsWithTheDriversMessage) {
  auto s = dev_->new_signal("s"), after = dev_->new_signal("after");
  sim.fault = 700;
  hcq::Buffer a = dev_->allocator().alloc(16);
  a.last_use = hcq::HwQueue().exec(*fill_, {{a.addr}, {0}}, {4}).signal(*s, 1).submit(*dev_);
  try {
    s->wait(1, 5s);
    FAIL() << "the fault must fail the signal";
  } catch (const hcq::FaultError& e) {
    EXPECT_STREQ(e.what(),
                 "[exec] SIM: kernel fault in submission 1 (kernel 'fill' on compute:0): cuEventQuery: "
                 "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
  }
  // Later work fails with the same message; the process goes on.
  hcq::HwQueue().signal(*after, 1).submit(*dev_);
  EXPECT_THROW(after->wait(1, 5s), hcq::FaultError);
  dev_->allocator().free(a);
}

// Past a second the calibration event moves to a retired submission's last event (queue.h, Timestamps).
TEST_P(SimulatedGpu, TimestampsStayInsideTheHostWindowAcrossRecalibration) {
  std::this_thread::sleep_for(1100ms);
  uint64_t prev = 0;
  for (int i = 0; i < 3; ++i) {
    auto t = dev_->new_signal("t"), s = dev_->new_signal("s");
    const uint64_t start = hcq::now_ns();
    hcq::HwQueue().timestamp(*t).signal(*s, 1).submit(*dev_);
    s->wait(1, 5s);
    const uint64_t end = hcq::now_ns();
    EXPECT_LE(start, t->timestamp_ns());
    EXPECT_LE(t->timestamp_ns(), s->timestamp_ns());
    EXPECT_LE(s->timestamp_ns(), end);
    EXPECT_LE(prev, t->timestamp_ns());
    prev = s->timestamp_ns();
  }
  dev_->synchronize(5s);
}

// A submission held on the host for a wait is described by that wait, in the words every device uses
// (hcq/queue_status.h).
TEST_P(SimulatedGpu, HeldSubmissionIsDescribedByItsWait) {
  auto gate = dev_->new_signal("gate"), out = dev_->new_signal("out");
  hcq::HwQueue().wait(*gate, 1).signal(*out, 1).submit(*dev_);
  try {
    out->wait(1, 30ms);
    FAIL() << "nothing sets the gate: the wait must time out";
  } catch (const hcq::TimeoutError& e) {
    EXPECT_NE(
        std::string(e.what()).find("compute:0 waits for signal 'gate' to reach 1 (value 0); copy:0 is idle"),
        std::string::npos)
        << e.what();
  }
  gate->set(1);
  out->wait(1, 5s);
  dev_->synchronize(5s);
}

TEST_P(SimulatedGpu, HungKernelIsResetAndTheDeviceGoesOn) {
  dev_->set_hang_timeout(20ms);
  auto done = dev_->new_signal("done"), after = dev_->new_signal("after"), again = dev_->new_signal("again");
  const hcq::Signal& old_timeline = dev_->timeline();
  hcq::Buffer a = dev_->allocator().alloc(16);
  sim.stuck = true;
  hcq::HwQueue().exec(*fill_, {{a.addr}, {0}}, {4}).signal(*done, 1).submit(*dev_);
  hcq::HwQueue().signal(*after, 1).submit(*dev_);
  // The wait that resets the queue runs on a thread that never called the driver: the reset makes the
  // context current there before it creates the fresh stream (TearDown checks).
  std::string m;
  bool timed_out = true;
  std::thread waiter([&] {
    for (int i = 0; i < 50 && m.find("reset") == std::string::npos; ++i) {
      try {
        done->wait(1, 30ms);
        timed_out = false;
      } catch (const hcq::TimeoutError& e) { m = e.what(); }
    }
  });
  waiter.join();
  EXPECT_TRUE(timed_out) << "the kernel never completes: the wait must time out";
  sim.stuck = false;
  EXPECT_NE(m.find("kernel 'fill' on compute:0 has run for"), std::string::npos) << m;
  EXPECT_NE(m.find("the queue was reset"), std::string::npos) << m;
  EXPECT_THROW(done->wait(1), hcq::FaultError);
  try {
    after->wait(1);
    FAIL() << "a signal of the dropped work should be failed";
  } catch (const hcq::FaultError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'fill' on compute:0 did not finish"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(old_timeline.failed());
  EXPECT_NE(&dev_->timeline(), &old_timeline);
  a.last_use = hcq::HwQueue().exec(*fill_, {{a.addr}, {0}}, {4}).signal(*again, 1).submit(*dev_);
  again->wait(1, 5s);
  dev_->synchronize(5s);
  dev_->allocator().free(a);
}

INSTANTIATE_TEST_SUITE_P(MemOps, SimulatedGpu, testing::Bool(), [](const testing::TestParamInfo<bool>& i) {
  return i.param ? "StreamMemOps" : "Events";
});

}  // namespace
}  // namespace sluice::cuda
