#pragma once
// The few CUDA driver API types and calls the CUDA backend uses, declared here (no cuda.h needed to
// build), and the function table loaded from libcuda.so.1 at run time with dlopen, so one build runs
// with or without a driver. The HIP backend fills the same table from libamdhip64 (backends/hip/driver.h):
// the device, queues, allocator and programs of both backends are one implementation over this table.
//
// Symbols: the driver exports versioned entry points (cuMemAlloc_v2, cuStreamWriteValue64_v2, ...); the
// loader takes the newest name it knows that the library has, which is what cuda.h's macros pick.
// Optional entry points (stream memory operations, graphs) may be null: the device then falls back
// (queue.h says how).
//
// Library: $SLUICE_CUDA_LIBRARY if set (a file name or path; tests point it at a missing name to see the
// absent reason), else libcuda.so.1 from the loader's search path.
//
// Errors: calls go through SLUICE_DRV (bottom), which throws hcq::Error
//   `[<function>] <device>: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)`
// naming the call and the driver's error name and string (cuGetErrorName / cuGetErrorString).
//
// Threading: the table is immutable once loaded; the driver's calls are thread-safe, but each thread
// must make the device's context current first (make_current below).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hcq/error.h"
#include "hcq/program.h"

namespace sluice::cuda {

// --- Driver types (ABI of cuda.h) ---
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphNode = struct CUgraphNode_st*;
using CUgraphExec = struct CUgraphExec_st*;

// CUDA_KERNEL_NODE_PARAMS_v2 (cuGraphAddKernelNode_v2 / cuGraphExecKernelNodeSetParams_v2). HIP's
// hipKernelNodeParams orders its fields differently: backends/hip/driver.cpp converts.
struct KernelNodeParams {
  CUfunction func = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  void** params = nullptr;
  void** extra = nullptr;
  void* kern = nullptr;     // CUkernel: unused (func is set)
  CUcontext ctx = nullptr;  // ignored when func is set
};
// The offsets of cuda.h (CUDA 12 and 13): func 0, gridDimX 8, blockDimX 20, sharedMemBytes 32,
// kernelParams 40, extra 48, kern 56, ctx 64; 72 bytes.
static_assert(offsetof(KernelNodeParams, grid) == 8 && offsetof(KernelNodeParams, block) == 20);
static_assert(offsetof(KernelNodeParams, shared_bytes) == 32 && offsetof(KernelNodeParams, params) == 40);
static_assert(offsetof(KernelNodeParams, extra) == 48 && offsetof(KernelNodeParams, ctx) == 64);
static_assert(sizeof(KernelNodeParams) == 72);

inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kNotReady = 600;         // CUDA_ERROR_NOT_READY / hipErrorNotReady
inline constexpr unsigned kHostAllocPortable = 1;  // CU_MEMHOSTALLOC_PORTABLE / hipHostMallocPortable
inline constexpr unsigned kHostAllocMapped = 2;    // CU_MEMHOSTALLOC_DEVICEMAP / hipHostMallocMapped
inline constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING / hipStreamNonBlocking
inline constexpr unsigned kEventDefault = 0;       // timing enabled
// CU_STREAM_WAIT_VALUE_GEQ / hipStreamWaitValueGte. CUDA compares cyclically ((int64_t)(*addr - value)
// >= 0), HIP unsigned: the same for values less than 2^63 apart, which timeline values always are.
inline constexpr unsigned kWaitValueGeq = 0;
inline constexpr unsigned kWriteValueDefault = 0;  // CU_STREAM_WRITE_VALUE_DEFAULT (orders earlier writes)

// Device attributes (CUdevice_attribute); HIP's table translates them.
enum Attribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxGridDimX = 5,
  kMaxGridDimY = 6,
  kMaxGridDimZ = 7,
  kMaxSharedMemoryPerBlock = 8,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  // CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS (CUDA 12+: the _v2 memory operations; 93 is the
  // deprecated _V1 attribute of the v1 entry points, which we do not load).
  kCanUse64BitStreamMemOps = 122,
};

// The driver calls, one row each: X(field, parameters, required, CUDA name, HIP name, CUDA symbols...).
// The field is Driver's function pointer; the names are what messages say (Driver::call_name); the CUDA
// symbols are the exported entry points, newest first; the HIP name is also the symbol loaded into the
// field, or nullptr where an adapter of backends/hip/driver.cpp (which names its own symbols) fills it.
// Optional rows may be null after loading: the device then falls back (queue.h says how).
// clang-format off
#define SLUICE_DRIVER_CALLS(X) \
  X(init,                 (unsigned flags),                    true, "cuInit",                   "hipInit",             "cuInit") \
  X(driver_get_version,   (int* version),                      true, "cuDriverGetVersion",       "hipDriverGetVersion", "cuDriverGetVersion") \
  X(get_error_name,       (CUresult, const char**),            true, "cuGetErrorName",           nullptr,               "cuGetErrorName") \
  X(get_error_string,     (CUresult, const char**),            true, "cuGetErrorString",         nullptr,               "cuGetErrorString") \
  X(device_get_count,     (int*),                              true, "cuDeviceGetCount",         "hipGetDeviceCount",   "cuDeviceGetCount") \
  X(device_get,           (CUdevice*, int ordinal),            true, "cuDeviceGet",              "hipDeviceGet",        "cuDeviceGet") \
  X(device_get_name,      (char*, int len, CUdevice),          true, "cuDeviceGetName",          "hipDeviceGetName",    "cuDeviceGetName") \
  X(device_get_attribute, (int*, int attr, CUdevice),          true, "cuDeviceGetAttribute",     nullptr,               "cuDeviceGetAttribute") \
  X(device_total_mem,     (size_t*, CUdevice),                 true, "cuDeviceTotalMem",         "hipDeviceTotalMem",   "cuDeviceTotalMem_v2", "cuDeviceTotalMem") \
  X(primary_ctx_retain,   (CUcontext*, CUdevice),              true, "cuDevicePrimaryCtxRetain", nullptr,               "cuDevicePrimaryCtxRetain") \
  X(primary_ctx_release,  (CUdevice),                          true, "cuDevicePrimaryCtxRelease", nullptr,              "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease") \
  X(ctx_set_current,      (CUcontext),                         true, "cuCtxSetCurrent",          nullptr,               "cuCtxSetCurrent") \
  X(mem_alloc,            (CUdeviceptr*, size_t),              true, "cuMemAlloc",               nullptr,               "cuMemAlloc_v2") \
  X(mem_free,             (CUdeviceptr),                       true, "cuMemFree",                nullptr,               "cuMemFree_v2") \
  X(mem_host_alloc,       (void**, size_t, unsigned flags),    true, "cuMemHostAlloc",           nullptr,               "cuMemHostAlloc") \
  X(mem_free_host,        (void*),                             true, "cuMemFreeHost",            nullptr,               "cuMemFreeHost") \
  X(mem_host_get_device_pointer, (CUdeviceptr*, void*, unsigned flags), true, "cuMemHostGetDevicePointer", nullptr,  "cuMemHostGetDevicePointer_v2") \
  /* unified addresses */ \
  X(memcpy_async,         (CUdeviceptr dst, CUdeviceptr src, size_t, CUstream), true, "cuMemcpyAsync", nullptr,      "cuMemcpyAsync") \
  X(stream_create,        (CUstream*, unsigned flags),         true, "cuStreamCreate",           "hipStreamCreateWithFlags", "cuStreamCreate") \
  X(stream_destroy,       (CUstream),                          true, "cuStreamDestroy",          "hipStreamDestroy",    "cuStreamDestroy_v2", "cuStreamDestroy") \
  X(stream_synchronize,   (CUstream),                          true, "cuStreamSynchronize",      "hipStreamSynchronize", "cuStreamSynchronize") \
  X(stream_wait_event,    (CUstream, CUevent, unsigned flags), true, "cuStreamWaitEvent",        "hipStreamWaitEvent",  "cuStreamWaitEvent") \
  /* Only the _v2 memory operations: the unversioned ones are the v1 API, which CUDA 12 deprecates and  */ \
  /* which needs memory operations enabled in the kernel module (CU_DEVICE_ATTRIBUTE_..._V1, 92-94),    */ \
  /* while queue.cpp asks CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS (122) about the _v2 ones.  */ \
  X(stream_write_value64, (CUstream, CUdeviceptr, uint64_t, unsigned flags), false, "cuStreamWriteValue64", nullptr,  "cuStreamWriteValue64_v2") \
  X(stream_wait_value64,  (CUstream, CUdeviceptr, uint64_t, unsigned flags), false, "cuStreamWaitValue64",  nullptr,  "cuStreamWaitValue64_v2") \
  X(event_create,         (CUevent*, unsigned flags),          true, "cuEventCreate",            "hipEventCreateWithFlags", "cuEventCreate") \
  X(event_destroy,        (CUevent),                           true, "cuEventDestroy",           "hipEventDestroy",     "cuEventDestroy_v2", "cuEventDestroy") \
  X(event_record,         (CUevent, CUstream),                 true, "cuEventRecord",            "hipEventRecord",      "cuEventRecord") \
  X(event_query,          (CUevent),                           true, "cuEventQuery",             "hipEventQuery",       "cuEventQuery") \
  X(event_synchronize,    (CUevent),                           true, "cuEventSynchronize",       "hipEventSynchronize", "cuEventSynchronize") \
  X(event_elapsed_time,   (float* ms, CUevent start, CUevent end), true, "cuEventElapsedTime",   "hipEventElapsedTime", "cuEventElapsedTime_v2", "cuEventElapsedTime") \
  X(module_load_data,     (CUmodule*, const void*),            true, "cuModuleLoadData",         "hipModuleLoadData",   "cuModuleLoadData") \
  X(module_unload,        (CUmodule),                          true, "cuModuleUnload",           "hipModuleUnload",     "cuModuleUnload") \
  X(module_get_function,  (CUfunction*, CUmodule, const char*), true, "cuModuleGetFunction",     "hipModuleGetFunction", "cuModuleGetFunction") \
  X(launch_kernel,        (CUfunction, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
                           unsigned shared_bytes, CUstream, void** params, void** extra), \
                                                               true, "cuLaunchKernel",           "hipModuleLaunchKernel", "cuLaunchKernel") \
  /* Graphs: all or none (has_graphs). The _v2 kernel-node entry points take KernelNodeParams          */ \
  /* (CUDA_KERNEL_NODE_PARAMS_v2); the unversioned ones do not, so only _v2 is accepted.               */ \
  X(graph_create,         (CUgraph*, unsigned flags),          false, "cuGraphCreate",           "hipGraphCreate",      "cuGraphCreate") \
  X(graph_destroy,        (CUgraph),                           false, "cuGraphDestroy",          "hipGraphDestroy",     "cuGraphDestroy") \
  X(graph_add_kernel_node, (CUgraphNode*, CUgraph, const CUgraphNode* deps, size_t ndeps, const KernelNodeParams*), \
                                                               false, "cuGraphAddKernelNode",    nullptr,               "cuGraphAddKernelNode_v2") \
  X(graph_instantiate,    (CUgraphExec*, CUgraph, unsigned long long flags), false, "cuGraphInstantiate", "hipGraphInstantiateWithFlags", "cuGraphInstantiateWithFlags") \
  X(graph_exec_destroy,   (CUgraphExec),                       false, "cuGraphExecDestroy",      "hipGraphExecDestroy", "cuGraphExecDestroy") \
  X(graph_exec_kernel_node_set_params, (CUgraphExec, CUgraphNode, const KernelNodeParams*), \
                                                               false, "cuGraphExecKernelNodeSetParams", nullptr,        "cuGraphExecKernelNodeSetParams_v2") \
  X(graph_launch,         (CUgraphExec, CUstream),             false, "cuGraphLaunch",           "hipGraphLaunch",      "cuGraphLaunch")
// clang-format on

// The function table. `api` names the driver in messages ("CUDA", "HIP").
struct Driver {
  std::string api;
  std::string library;  // what was loaded
  // Bytes per mem_host_alloc of device words (queue.cpp): CUDA maps a page of words at once; HIP's
  // signal memory (hipExtMallocWithFlags(hipMallocSignalMemory)) comes one 8-byte word per allocation.
  size_t word_alloc_bytes = 4096;
  // The driver's name of a table field, for tables other than CUDA's (HIP); null: CUDA's names.
  const char* (*name_of)(const char* field) = nullptr;
  // The calls of SLUICE_DRIVER_CALLS.
#define SLUICE_DRIVER_FIELD(field, params, ...) CUresult(*field) params = nullptr;
  SLUICE_DRIVER_CALLS(SLUICE_DRIVER_FIELD)
#undef SLUICE_DRIVER_FIELD

  bool has_graphs() const {
    return graph_create && graph_add_kernel_node && graph_instantiate && graph_launch &&
           graph_exec_kernel_node_set_params && graph_exec_destroy && graph_destroy;
  }
  bool has_stream_mem_ops() const { return stream_write_value64 && stream_wait_value64; }

  // "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for table field "mem_alloc", from the driver's
  // own names of the call and the error.
  std::string error(const char* field, CUresult r) const;
  // The driver's name of a table field: "mem_alloc" -> "cuMemAlloc" (CUDA) or "hipMalloc" (HIP).
  const char* call_name(const char* field) const;
};

// "<call>: <name> (<description>)"; a null name prints the number ("error 999"); a null, empty or
// name-repeating description is left out. Pure: for unit tests and for drivers whose name lookup failed.
std::string format_error(const char* call, CUresult r, const char* name, const char* description);

// The CUDA table, loaded once per process. Null, with *why set ("libcuda.so.1 not found: <dlerror>",
// "libcuda.so.1 lacks cuInit", "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is
// detected)", "no CUDA device"), when no CUDA device can be used. cuInit has run on success.
const Driver* cuda_driver(std::string* why);
// Loads the table from `library` without caching (tests; cuda_driver uses it). Returns "" or the reason.
std::string load_cuda_driver(const std::string& library, Driver& out);

// Makes the device's context current on the calling thread (cheap when it already is). Every thread
// that calls the driver for a device calls it first: the submitting threads, the completion thread, and
// a host thread whose timed-out wait resets a queue.
void make_current(const Driver& drv, CUcontext ctx);

// One device attribute (CUDA and HIP); `who` names the device in the error when the call fails.
int device_attribute(const Driver& drv, const std::string& who, CUdevice dev, Attribute a);

// cuLaunchKernel's kernelParams for a kernel `(T0* data0, ..., int var0, ...)` (renderers/cuda.h,
// renderers/hip.h): one 8-byte slot per argument holding the buffer's device address or, in its first
// four bytes, the int; params[i] points at slot i. The pointers refer into `slots`: a KernelParams is
// neither copied nor moved once params() was taken.
class KernelParams {
 public:
  KernelParams() = default;
  KernelParams(const KernelParams&) = delete;
  KernelParams& operator=(const KernelParams&) = delete;
  void pack(const uint64_t* bufs, uint32_t nbufs, const int32_t* vars, uint32_t nvars);
  void pack(const hcq::KernelArgs& a) {
    pack(a.bufs.data(), uint32_t(a.bufs.size()), a.vars.data(), uint32_t(a.vars.size()));
  }
  void** params() { return ptrs_.empty() ? nullptr : ptrs_.data(); }
  const std::vector<uint64_t>& slots() const { return slots_; }

 private:
  std::vector<uint64_t> slots_;
  std::vector<void*> ptrs_;
};

}  // namespace sluice::cuda

// Calls drv.field(args...) and throws hcq::Error on failure, naming the driver's call and its error:
//   SLUICE_DRV("alloc", name(), drv, mem_alloc, &p, n);
//   // [alloc] CUDA:0: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)
#define SLUICE_DRV(func, who, drv, field, ...)                                             \
  do {                                                                                     \
    ::sluice::cuda::CUresult r_ = (drv).field(__VA_ARGS__);                                \
    if (r_ != ::sluice::cuda::kSuccess)                                                    \
      SLUICE_FAIL(::sluice::hcq::Error, func) << (who) << ": " << (drv).error(#field, r_); \
  } while (0)
