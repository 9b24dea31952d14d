#include "backends/hip/driver.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

namespace sluice::hip {
namespace {

using cuda::CUcontext;
using cuda::CUdevice;
using cuda::CUdeviceptr;
using cuda::CUevent;
using cuda::CUresult;
using cuda::CUstream;

// hipKernelNodeParams (hip_runtime_api.h, ROCm 5 and 6): the fields of CUDA_KERNEL_NODE_PARAMS in another
// order, launch sizes as dim3 {uint32 x, y, z}, no kern/ctx.
struct HipDim3 {
  uint32_t x = 1, y = 1, z = 1;
};
struct HipKernelNodeParams {
  HipDim3 blockDim;
  void** extra = nullptr;
  void* func = nullptr;
  HipDim3 gridDim;
  void** kernelParams = nullptr;
  unsigned sharedMemBytes = 0;
};
// The header's offsets: blockDim 0, extra 16, func 24, gridDim 32, kernelParams 48, sharedMemBytes 56;
// 64 bytes.
static_assert(sizeof(HipDim3) == 12);
static_assert(offsetof(HipKernelNodeParams, extra) == 16 && offsetof(HipKernelNodeParams, func) == 24);
static_assert(offsetof(HipKernelNodeParams, gridDim) == 32 &&
              offsetof(HipKernelNodeParams, kernelParams) == 48);
static_assert(offsetof(HipKernelNodeParams, sharedMemBytes) == 56 && sizeof(HipKernelNodeParams) == 64);

// The HIP entry points the adapters call, one row each: X(field, result, parameters, required, the
// Driver field it serves (for messages), HIP symbols newest first).
// clang-format off
#define SLUICE_HIP_RAW_CALLS(X) \
  X(get_error_name,          const char*, (CUresult),                           true,  "get_error_name",  "hipGetErrorName") \
  X(get_error_string,        const char*, (CUresult),                           true,  "get_error_string", "hipGetErrorString") \
  X(device_get_attribute,    CUresult, (int*, int, int),                        true,  "device_get_attribute", "hipDeviceGetAttribute") \
  X(set_device,              CUresult, (int),                                   true,  "ctx_set_current", "hipSetDevice") \
  X(malloc,                  CUresult, (void**, size_t),                        true,  "mem_alloc",       "hipMalloc") \
  X(free,                    CUresult, (void*),                                 true,  "mem_free",        "hipFree") \
  X(host_malloc,             CUresult, (void**, size_t, unsigned),              true,  "mem_host_alloc",  "hipHostMalloc") \
  X(host_free,               CUresult, (void*),                                 true,  "mem_free_host",   "hipHostFree") \
  X(host_get_device_pointer, CUresult, (void**, void*, unsigned),               true,  "mem_host_get_device_pointer", "hipHostGetDevicePointer") \
  X(memcpy_async,            CUresult, (void*, const void*, size_t, int kind, CUstream), true, "memcpy_async", "hipMemcpyAsync") \
  X(write_value64,           CUresult, (CUstream, void*, uint64_t, unsigned),   false, "stream_write_value64", "hipStreamWriteValue64") \
  X(wait_value64,            CUresult, (CUstream, void*, uint64_t, unsigned, uint64_t mask), false, "stream_wait_value64", "hipStreamWaitValue64") \
  X(ext_malloc_with_flags,   CUresult, (void**, size_t, unsigned),              false, "mem_host_alloc",  "hipExtMallocWithFlags") \
  X(get_device_properties,   CUresult, (void*, int),                            false, "",                "hipGetDevicePropertiesR0000", "hipGetDeviceProperties") \
  X(graph_add_kernel_node,   CUresult, (cuda::CUgraphNode*, cuda::CUgraph, const cuda::CUgraphNode*, size_t, const HipKernelNodeParams*), \
                                                                                false, "graph_add_kernel_node", "hipGraphAddKernelNode") \
  X(graph_exec_kernel_node_set_params, CUresult, (cuda::CUgraphExec, cuda::CUgraphNode, const HipKernelNodeParams*), \
                                                                                false, "graph_exec_kernel_node_set_params", "hipGraphExecKernelNodeSetParams")
// clang-format on
struct Raw {
#define SLUICE_HIP_RAW_FIELD(f, result, params, ...) result(*f) params = nullptr;
  SLUICE_HIP_RAW_CALLS(SLUICE_HIP_RAW_FIELD)
#undef SLUICE_HIP_RAW_FIELD
};
Raw raw;

constexpr int kMemcpyDefault = 4;        // hipMemcpyDefault
constexpr unsigned kSignalMemory = 0x2;  // hipMallocSignalMemory

// hipStreamWaitValue64 takes only "signal memory" (hipExtMallocWithFlags(hipMallocSignalMemory)), so the
// device words (allocated as mapped host memory: backends/cuda/queue.cpp) come from there; these are the
// pointers handed out that way, to free and map them accordingly.
std::mutex signal_mu;
std::set<void*> signal_words;

CUresult error_name(CUresult r, const char** out) {
  *out = raw.get_error_name ? raw.get_error_name(r) : nullptr;
  return 0;
}
CUresult error_string(CUresult r, const char** out) {
  *out = raw.get_error_string ? raw.get_error_string(r) : nullptr;
  return 0;
}
// CUdevice_attribute -> hipDeviceAttribute_t (the values of ROCm 5 and 6).
CUresult attribute(int* v, int attr, CUdevice dev) {
  int hip = -1;
  switch (attr) {
    case cuda::kMaxThreadsPerBlock: hip = 56; break;
    case cuda::kMaxGridDimX: hip = 29; break;
    case cuda::kMaxGridDimY: hip = 30; break;
    case cuda::kMaxGridDimZ: hip = 31; break;
    case cuda::kMaxSharedMemoryPerBlock: hip = 74; break;
    case cuda::kComputeCapabilityMajor: hip = 23; break;
    case cuda::kComputeCapabilityMinor: hip = 61; break;
    case cuda::kCanUse64BitStreamMemOps: hip = 10013; break;  // hipDeviceAttributeCanUseStreamWaitValue
    default: return 1;                                        // hipErrorInvalidValue
  }
  return raw.device_get_attribute(v, hip, dev);
}
// A HIP "context" is the device ordinal plus one (never null).
CUresult ctx_retain(CUcontext* ctx, CUdevice dev) {
  *ctx = reinterpret_cast<CUcontext>(uintptr_t(dev) + 1);
  return 0;
}
CUresult ctx_release(CUdevice) { return 0; }
CUresult ctx_set_current(CUcontext ctx) { return raw.set_device(int(reinterpret_cast<uintptr_t>(ctx)) - 1); }
CUresult mem_alloc(CUdeviceptr* p, size_t n) {
  void* v = nullptr;
  CUresult r = raw.malloc(&v, n);
  *p = CUdeviceptr(uintptr_t(v));
  return r;
}
CUresult mem_free(CUdeviceptr p) { return raw.free(reinterpret_cast<void*>(uintptr_t(p))); }
// Device words (mapped, 8 bytes: Driver::word_alloc_bytes) are signal memory, which HIP hands out only
// 8 bytes at a time (hipExtMallocWithFlags fails other sizes with hipErrorInvalidValue).
CUresult host_alloc(void** p, size_t n, unsigned flags) {
  if (!(flags & cuda::kHostAllocMapped) || n != 8 || !raw.ext_malloc_with_flags)
    return raw.host_malloc(p, n, flags);
  CUresult r = raw.ext_malloc_with_flags(p, n, kSignalMemory);
  if (r == 0) {
    std::lock_guard lk(signal_mu);
    signal_words.insert(*p);
  }
  return r;
}
CUresult host_free(void* p) {
  {
    std::lock_guard lk(signal_mu);
    if (signal_words.erase(p)) return raw.free(p);
  }
  return raw.host_free(p);
}
CUresult host_get_device_pointer(CUdeviceptr* d, void* h, unsigned flags) {
  {
    std::lock_guard lk(signal_mu);
    if (signal_words.count(h)) {  // signal memory is device memory already
      *d = CUdeviceptr(uintptr_t(h));
      return 0;
    }
  }
  void* v = nullptr;
  CUresult r = raw.host_get_device_pointer(&v, h, flags);
  *d = CUdeviceptr(uintptr_t(v));
  return r;
}
CUresult memcpy_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  return raw.memcpy_async(reinterpret_cast<void*>(uintptr_t(dst)),
                          reinterpret_cast<const void*>(uintptr_t(src)), n, kMemcpyDefault, s);
}
CUresult write_value64(CUstream s, CUdeviceptr p, uint64_t v, unsigned flags) {
  return raw.write_value64(s, reinterpret_cast<void*>(uintptr_t(p)), v, flags);
}
CUresult wait_value64(CUstream s, CUdeviceptr p, uint64_t v, unsigned flags) {
  return raw.wait_value64(s, reinterpret_cast<void*>(uintptr_t(p)), v, flags, ~uint64_t(0));
}
HipKernelNodeParams hip_params(const cuda::KernelNodeParams& p) {
  HipKernelNodeParams h;
  h.blockDim = {p.block[0], p.block[1], p.block[2]};
  h.extra = p.extra;
  h.func = p.func;  // a hipFunction_t from hipModuleGetFunction
  h.gridDim = {p.grid[0], p.grid[1], p.grid[2]};
  h.kernelParams = p.params;
  h.sharedMemBytes = p.shared_bytes;
  return h;
}
CUresult add_kernel_node(cuda::CUgraphNode* n, cuda::CUgraph g, const cuda::CUgraphNode* deps, size_t ndeps,
                         const cuda::KernelNodeParams* p) {
  const HipKernelNodeParams h = hip_params(*p);
  return raw.graph_add_kernel_node(n, g, deps, ndeps, &h);
}
CUresult exec_kernel_node_set_params(cuda::CUgraphExec e, cuda::CUgraphNode n,
                                     const cuda::KernelNodeParams* p) {
  const HipKernelNodeParams h = hip_params(*p);
  return raw.graph_exec_kernel_node_set_params(e, n, &h);
}

// The rows to load: the Driver fields HIP fills directly (SLUICE_DRIVER_CALLS rows with a HIP name), then
// the adapters' entry points.
struct Symbol {
  const char* field;  // the Driver field served (messages name the symbol for it)
  const char* symbols[2];
  bool required;
  void** (*slot)(cuda::Driver&, Raw&);
};
#define SLUICE_HIP_DIRECT_ROW(f, params, required, cuda_name, hip_name, ...) \
  {#f, {hip_name}, required, [](cuda::Driver& d, Raw&) { return reinterpret_cast<void**>(&d.f); }},
#define SLUICE_HIP_RAW_ROW(f, result, params, required, serves, ...) \
  {serves, {__VA_ARGS__}, required, [](cuda::Driver&, Raw& r) { return reinterpret_cast<void**>(&r.f); }},
const Symbol kSymbols[] = {SLUICE_DRIVER_CALLS(SLUICE_HIP_DIRECT_ROW)
                               SLUICE_HIP_RAW_CALLS(SLUICE_HIP_RAW_ROW)};
#undef SLUICE_HIP_DIRECT_ROW
#undef SLUICE_HIP_RAW_ROW

const char* name_of(const char* field) {
  for (const Symbol& s : kSymbols)
    if (s.symbols[0] && std::strcmp(s.field, field) == 0) return s.symbols[0];
  return field;
}

}  // namespace

std::string load_hip_driver(const std::string& library, cuda::Driver& out) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    return library + " not found: " + (e ? e : "dlopen failed");
  }
  out.api = "HIP";
  out.library = library;
  out.name_of = name_of;
  for (const Symbol& s : kSymbols) {
    if (!s.symbols[0]) continue;  // an adapter fills it (below)
    void* fn = nullptr;
    for (const char* name : s.symbols)
      if (name && !fn) fn = ::dlsym(lib, name);
    if (!fn && s.required) return library + " lacks " + s.symbols[0];
    *s.slot(out, raw) = fn;
  }
  if (raw.graph_add_kernel_node && raw.graph_exec_kernel_node_set_params) {
    out.graph_add_kernel_node = add_kernel_node;  // with the direct graph rows, has_graphs() (all or none)
    out.graph_exec_kernel_node_set_params = exec_kernel_node_set_params;
  }
  out.get_error_name = error_name;
  out.get_error_string = error_string;
  out.device_get_attribute = attribute;
  out.primary_ctx_retain = ctx_retain;
  out.primary_ctx_release = ctx_release;
  out.ctx_set_current = ctx_set_current;
  out.mem_alloc = mem_alloc;
  out.mem_free = mem_free;
  out.mem_host_alloc = host_alloc;
  out.mem_free_host = host_free;
  out.mem_host_get_device_pointer = host_get_device_pointer;
  out.memcpy_async = memcpy_async;
  if (raw.write_value64 && raw.wait_value64) {
    out.stream_write_value64 = write_value64;
    out.stream_wait_value64 = wait_value64;
  }
  out.word_alloc_bytes = raw.ext_malloc_with_flags ? 8 : 4096;
  return "";
}

const cuda::Driver* hip_driver(std::string* why) {
  static cuda::Driver drv;
  static std::string reason;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> names;
    if (const char* env = std::getenv("SLUICE_HIP_LIBRARY"); env && *env) {
      names = {env};
    } else {
      names = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
    }
    // The first name's reason is reported when none loads: the others are fallbacks.
    std::string first;
    for (const std::string& n : names) {
      reason = load_hip_driver(n, drv);
      if (first.empty()) first = reason;
      if (reason.empty() || reason.find(" not found: ") == std::string::npos) break;
    }
    if (!reason.empty()) {
      if (reason.find(" not found: ") != std::string::npos) reason = first;
      return;
    }
    if (CUresult r = drv.init(0); r != cuda::kSuccess) {
      reason = "hipInit failed: " + drv.error("init", r).substr(std::strlen("hipInit: "));
      return;
    }
    int n = 0;
    if (CUresult r = drv.device_get_count(&n); r != cuda::kSuccess) {
      reason = drv.error("device_get_count", r);
    } else if (n == 0) {
      reason = "no HIP device";
    }
  });
  if (why) *why = reason;
  return reason.empty() ? &drv : nullptr;
}

std::string gfx_name(unsigned v) {
  const char* hex = "0123456789abcdef";
  unsigned minor = v / 100 % 100, step = v % 100;
  if (v < 10000 || minor > 15 || step > 15) return "";
  return "gfx" + std::to_string(v / 10000) + hex[minor] + hex[step];
}

std::string gfx_arch(const cuda::Driver&, int ordinal) {
  // hipDeviceProp_t of ROCm 5 (hipGetDeviceProperties before ROCm 6's R0600 layout): gcnArchName is
  // char[256] at byte 396. ROCm 6 keeps that layout under hipGetDevicePropertiesR0000. The name is only
  // believed if it reads like an arch.
  if (raw.get_device_properties) {
    std::vector<char> props(8192, 0);
    if (raw.get_device_properties(props.data(), ordinal) == cuda::kSuccess) {
      std::string name(props.data() + 396, strnlen(props.data() + 396, 255));
      name = name.substr(0, name.find(':'));
      if (name.rfind("gfx", 0) == 0 && name.size() > 3) return name;
    }
  }
  // The KFD topology lists GPU nodes (gfx_target_version != 0) in the order HIP numbers them.
  int seen = 0;
  for (int node = 0; node < 256; ++node) {
    std::ifstream f("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/properties");
    if (!f) break;
    std::string key;
    unsigned long value = 0;
    while (f >> key >> value)
      if (key == "gfx_target_version") break;
    if (key != "gfx_target_version" || value == 0) continue;
    if (seen++ == ordinal) return gfx_name(unsigned(value));
  }
  return "";
}

}  // namespace sluice::hip
