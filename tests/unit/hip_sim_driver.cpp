// A simulated libamdhip64 for hip_driver_test.cpp: the HIP entry points the HIP backend loads
// (backends/hip/driver.cpp), with HIP's own signatures and struct layouts as hip_runtime_api.h declares
// them (ROCm 5 and 6), written here independently of the backend's declarations, so the backend's
// adapters (hipKernelNodeParams, hipStreamWaitValue64's mask, signal memory) are checked against them.
//
// Like the CUDA simulation in cuda_queue_test.cpp, streams run every operation when it is enqueued on the
// host: kernels are host functions looked up by name, device memory is host memory, events complete when
// recorded. Calls the real library would reject are rejected the same way (hipErrorInvalidValue,
// hipErrorInvalidDeviceFunction, ...) and counted, so a test sees a wrong argument as a failure.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/hip_sim_driver.h"

namespace {

// --- HIP's ABI (hip_runtime_api.h) ---
using hipError_t = int;
constexpr hipError_t hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorInvalidMemcpyDirection = 21,
                     hipErrorInvalidDeviceFunction = 98, hipErrorInvalidDevice = 101, hipErrorNotFound = 500,
                     hipErrorNotReady = 600;
constexpr int hipMemcpyDefault = 4;
constexpr unsigned hipMallocSignalMemory = 0x2;
constexpr unsigned hipStreamWaitValueGte = 0x0;
struct dim3 {
  uint32_t x, y, z;
};
struct hipKernelNodeParams {
  dim3 blockDim;
  void** extra;
  void* func;
  dim3 gridDim;
  void** kernelParams;
  unsigned int sharedMemBytes;
};
static_assert(offsetof(hipKernelNodeParams, gridDim) == 32 && sizeof(hipKernelNodeParams) == 64);
using hipStream_t = struct Stream*;
using hipEvent_t = struct Event*;
using hipModule_t = struct Module*;
using hipFunction_t = struct Function*;
using hipGraph_t = struct Graph*;
using hipGraphNode_t = struct Node*;
using hipGraphExec_t = struct Graph*;

// --- The simulation ---
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
struct Kernel {
  HostKernel fn;
  size_t nargs;
};
const std::map<std::string, Kernel> kKernels = {{"fill", {fill, 2}}, {"add", {add, 3}}};

struct Event {
  std::chrono::steady_clock::time_point at;
};
struct NodeState {
  const Kernel* k;
  dim3 grid, block;
  std::vector<uint64_t> args;  // copies of the argument values, as the driver keeps them
};
struct Graph {
  std::vector<NodeState> nodes;
};

sim_hip::State state;
std::mutex mu;
std::set<void*> signal_memory;

hipError_t reject(hipError_t e) {
  ++state.rejected;
  return e;
}
const Kernel* kernel_of(void* f) {
  for (const auto& [name, k] : kKernels)
    if (&k == f) return &k;
  return nullptr;
}
bool is_signal(void* p) {
  std::lock_guard lk(mu);
  return signal_memory.count(p) != 0;
}
// A kernel node as the runtime validates it: a known function, launch sizes, no extra, no shared memory.
hipError_t node_state(const hipKernelNodeParams* p, NodeState& out) {
  if (!p || !(out.k = kernel_of(p->func))) return reject(hipErrorInvalidDeviceFunction);
  if (p->extra || !p->kernelParams || p->sharedMemBytes != 0 || !p->gridDim.x || !p->gridDim.y ||
      !p->gridDim.z || !p->blockDim.x || !p->blockDim.y || !p->blockDim.z)
    return reject(hipErrorInvalidValue);
  out.grid = p->gridDim;
  out.block = p->blockDim;
  out.args.assign(out.k->nargs, 0);
  for (size_t a = 0; a < out.k->nargs; ++a) std::memcpy(&out.args[a], p->kernelParams[a], 8);
  state.last_grid[0] = p->gridDim.x, state.last_grid[1] = p->gridDim.y, state.last_grid[2] = p->gridDim.z;
  state.last_block[0] = p->blockDim.x, state.last_block[1] = p->blockDim.y,
  state.last_block[2] = p->blockDim.z;
  return hipSuccess;
}
void run(const NodeState& n) {
  std::vector<uint64_t> args = n.args;
  std::vector<void*> ptrs;
  for (uint64_t& a : args) ptrs.push_back(&a);
  n.k->fn(ptrs.data(), uint64_t(n.grid.x) * n.grid.y * n.grid.z * n.block.x * n.block.y * n.block.z);
}

}  // namespace

extern "C" {

sim_hip::State* sim_hip_state() { return &state; }

hipError_t hipInit(unsigned) { return hipSuccess; }
hipError_t hipDriverGetVersion(int* v) {
  *v = 60032830;
  return hipSuccess;
}
const char* hipGetErrorName(hipError_t e) {
  switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorInvalidDeviceFunction: return "hipErrorInvalidDeviceFunction";
    case hipErrorNotReady: return "hipErrorNotReady";
    default: return "hipErrorUnknown";
  }
}
const char* hipGetErrorString(hipError_t e) {
  return e == hipErrorInvalidDeviceFunction ? "invalid device function" : hipGetErrorName(e);
}
hipError_t hipGetDeviceCount(int* n) {
  *n = 1;
  return hipSuccess;
}
hipError_t hipDeviceGet(int* d, int ordinal) {
  if (ordinal != 0) return reject(hipErrorInvalidDevice);
  *d = ordinal;
  return hipSuccess;
}
hipError_t hipDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "Simulated AMD GPU", size_t(len));
  return hipSuccess;
}
hipError_t hipDeviceTotalMem(size_t* bytes, int) {
  *bytes = size_t(1) << 30;
  return hipSuccess;
}
// hipDeviceAttribute_t values (the same in ROCm 5 and 6).
hipError_t hipDeviceGetAttribute(int* v, int attr, int) {
  switch (attr) {
    case 56: *v = 1024; return hipSuccess;             // MaxThreadsPerBlock
    case 29: *v = 65535; return hipSuccess;            // MaxGridDimX
    case 30: *v = 65535; return hipSuccess;            // MaxGridDimY
    case 31: *v = 65535; return hipSuccess;            // MaxGridDimZ
    case 74: *v = 65536; return hipSuccess;            // MaxSharedMemoryPerBlock
    case 23: *v = 9; return hipSuccess;                // ComputeCapabilityMajor
    case 61: *v = 0; return hipSuccess;                // ComputeCapabilityMinor
    case 10013: *v = state.memops; return hipSuccess;  // CanUseStreamWaitValue
    default: return reject(hipErrorInvalidValue);
  }
}
// hipDeviceProp_t of ROCm 5 (what hipGetDevicePropertiesR0000 fills): gcnArchName at byte 396.
hipError_t hipGetDevicePropertiesR0000(void* props, int) {
  std::memset(props, 0, 792);
  std::strcpy(static_cast<char*>(props) + 396, "gfx90a:sramecc+:xnack-");
  return hipSuccess;
}
hipError_t hipSetDevice(int d) {
  if (d != 0) return reject(hipErrorInvalidDevice);
  ++state.set_device;
  return hipSuccess;
}
hipError_t hipMalloc(void** p, size_t n) {
  *p = std::calloc(1, n);
  return hipSuccess;
}
hipError_t hipExtMallocWithFlags(void** p, size_t n, unsigned flags) {
  // The runtime hands out signal memory 8 bytes at a time.
  if (flags != hipMallocSignalMemory || n != 8) return reject(hipErrorInvalidValue);
  *p = std::calloc(1, n);
  std::lock_guard lk(mu);
  signal_memory.insert(*p);
  ++state.signal_words;
  return hipSuccess;
}
hipError_t hipFree(void* p) {
  {
    std::lock_guard lk(mu);
    signal_memory.erase(p);
  }
  std::free(p);
  return hipSuccess;
}
hipError_t hipHostMalloc(void** p, size_t n, unsigned) {
  *p = std::calloc(1, n);
  return hipSuccess;
}
hipError_t hipHostFree(void* p) {
  if (is_signal(p)) return reject(hipErrorInvalidValue);  // signal memory goes with hipFree
  std::free(p);
  return hipSuccess;
}
hipError_t hipHostGetDevicePointer(void** d, void* h, unsigned flags) {
  if (flags != 0) return reject(hipErrorInvalidValue);
  *d = h;
  return hipSuccess;
}
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t n, int kind, hipStream_t) {
  if (kind != hipMemcpyDefault) return reject(hipErrorInvalidMemcpyDirection);
  std::memmove(dst, src, n);
  return hipSuccess;
}
hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned) {
  *s = reinterpret_cast<hipStream_t>(new int);
  return hipSuccess;
}
hipError_t hipStreamDestroy(hipStream_t s) {
  delete reinterpret_cast<int*>(s);
  return hipSuccess;
}
hipError_t hipStreamSynchronize(hipStream_t) { return hipSuccess; }
hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned) { return hipSuccess; }
// Stream memory operations work on signal memory only. Operations run when enqueued, so a wait must find
// its value already written.
hipError_t hipStreamWriteValue64(hipStream_t, void* p, uint64_t v, unsigned flags) {
  if (!is_signal(p) || flags != 0) return reject(hipErrorInvalidValue);
  *static_cast<uint64_t*>(p) = v;
  return hipSuccess;
}
hipError_t hipStreamWaitValue64(hipStream_t, void* p, uint64_t v, unsigned flags, uint64_t mask) {
  if (!is_signal(p) || flags != hipStreamWaitValueGte) return reject(hipErrorInvalidValue);
  ++state.stream_waits;
  if (mask != ~uint64_t(0)) return reject(hipErrorInvalidValue);  // the backend compares every bit
  return (*static_cast<uint64_t*>(p) & mask) >= v ? hipSuccess : reject(hipErrorInvalidValue);
}
hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned) {
  *e = new Event;
  return hipSuccess;
}
hipError_t hipEventDestroy(hipEvent_t e) {
  delete e;
  return hipSuccess;
}
hipError_t hipEventRecord(hipEvent_t e, hipStream_t) {
  e->at = std::chrono::steady_clock::now();
  return hipSuccess;
}
hipError_t hipEventQuery(hipEvent_t) { return hipSuccess; }
hipError_t hipEventSynchronize(hipEvent_t) { return hipSuccess; }
hipError_t hipEventElapsedTime(float* ms, hipEvent_t a, hipEvent_t b) {
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return hipSuccess;
}
hipError_t hipModuleLoadData(hipModule_t* m, const void*) {
  *m = reinterpret_cast<hipModule_t>(uintptr_t(1));
  return hipSuccess;
}
hipError_t hipModuleUnload(hipModule_t) { return hipSuccess; }
hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t, const char* name) {
  auto it = kKernels.find(name);
  if (it == kKernels.end()) return hipErrorNotFound;
  *f = reinterpret_cast<hipFunction_t>(const_cast<Kernel*>(&it->second));
  return hipSuccess;
}
hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, hipStream_t, void** params,
                                 void** extra) {
  const Kernel* k = kernel_of(f);
  if (!k) return reject(hipErrorInvalidDeviceFunction);
  if (extra || shared) return reject(hipErrorInvalidValue);
  ++state.launches;
  k->fn(params, uint64_t(gx) * gy * gz * bx * by * bz);
  return hipSuccess;
}
hipError_t hipGraphCreate(hipGraph_t* g, unsigned flags) {
  if (flags != 0) return reject(hipErrorInvalidValue);
  *g = new Graph;
  return hipSuccess;
}
hipError_t hipGraphDestroy(hipGraph_t g) {
  delete g;
  return hipSuccess;
}
// Node handles are 1 + the node's index. The backend builds a chain: each node depends on the one before.
hipError_t hipGraphAddKernelNode(hipGraphNode_t* n, hipGraph_t g, const hipGraphNode_t* deps, size_t ndeps,
                                 const hipKernelNodeParams* p) {
  if (state.refuse_graphs) return reject(hipErrorInvalidDeviceFunction);
  const size_t i = g->nodes.size();
  if (i > 0 ? ndeps != 1 || uintptr_t(deps[0]) != i : ndeps != 0) return reject(hipErrorInvalidValue);
  NodeState s;
  if (hipError_t e = node_state(p, s); e != hipSuccess) return e;
  g->nodes.push_back(std::move(s));
  *n = reinterpret_cast<hipGraphNode_t>(uintptr_t(i + 1));
  ++state.nodes_added;
  return hipSuccess;
}
hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* e, hipGraph_t g, unsigned long long flags) {
  if (flags != 0) return reject(hipErrorInvalidValue);
  *e = new Graph(*g);
  return hipSuccess;
}
hipError_t hipGraphExecDestroy(hipGraphExec_t e) {
  delete e;
  return hipSuccess;
}
hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t e, hipGraphNode_t n, const hipKernelNodeParams* p) {
  const uintptr_t i = uintptr_t(n) - 1;
  if (i >= e->nodes.size()) return reject(hipErrorInvalidValue);
  NodeState s;
  if (hipError_t r = node_state(p, s); r != hipSuccess) return r;
  if (s.k != e->nodes[i].k) return reject(hipErrorInvalidDeviceFunction);  // a node keeps its function
  e->nodes[i] = std::move(s);
  ++state.nodes_updated;
  return hipSuccess;
}
hipError_t hipGraphLaunch(hipGraphExec_t e, hipStream_t) {
  ++state.graph_launches;
  for (const NodeState& n : e->nodes) run(n);
  return hipSuccess;
}

}  // extern "C"
