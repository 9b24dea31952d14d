#include "backends/cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sluice::cuda {
namespace {

// One row per table field: its CUDA name (what messages say) and the exported symbols, newest first.
struct Symbol {
  const char* field;
  const char* name;
  const char* symbols[3];
  bool required;
};
// clang-format off
const Symbol kSymbols[] = {
    {"init",                   "cuInit",                    {"cuInit"}, true},
    {"driver_get_version",     "cuDriverGetVersion",        {"cuDriverGetVersion"}, true},
    {"get_error_name",         "cuGetErrorName",            {"cuGetErrorName"}, true},
    {"get_error_string",       "cuGetErrorString",          {"cuGetErrorString"}, true},
    {"device_get_count",       "cuDeviceGetCount",          {"cuDeviceGetCount"}, true},
    {"device_get",             "cuDeviceGet",               {"cuDeviceGet"}, true},
    {"device_get_name",        "cuDeviceGetName",           {"cuDeviceGetName"}, true},
    {"device_get_attribute",   "cuDeviceGetAttribute",      {"cuDeviceGetAttribute"}, true},
    {"device_total_mem",       "cuDeviceTotalMem",          {"cuDeviceTotalMem_v2", "cuDeviceTotalMem"}, true},
    {"primary_ctx_retain",     "cuDevicePrimaryCtxRetain",  {"cuDevicePrimaryCtxRetain"}, true},
    {"primary_ctx_release",    "cuDevicePrimaryCtxRelease", {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, true},
    {"ctx_set_current",        "cuCtxSetCurrent",           {"cuCtxSetCurrent"}, true},
    {"mem_alloc",              "cuMemAlloc",                {"cuMemAlloc_v2"}, true},
    {"mem_free",               "cuMemFree",                 {"cuMemFree_v2"}, true},
    {"mem_host_alloc",         "cuMemHostAlloc",            {"cuMemHostAlloc"}, true},
    {"mem_free_host",          "cuMemFreeHost",             {"cuMemFreeHost"}, true},
    {"mem_host_get_device_pointer", "cuMemHostGetDevicePointer", {"cuMemHostGetDevicePointer_v2"}, true},
    {"memcpy_async",           "cuMemcpyAsync",             {"cuMemcpyAsync"}, true},
    {"stream_create",          "cuStreamCreate",            {"cuStreamCreate"}, true},
    {"stream_destroy",         "cuStreamDestroy",           {"cuStreamDestroy_v2", "cuStreamDestroy"}, true},
    {"stream_synchronize",     "cuStreamSynchronize",       {"cuStreamSynchronize"}, true},
    {"stream_wait_event",      "cuStreamWaitEvent",         {"cuStreamWaitEvent"}, true},
    // Only the _v2 memory operations: the unversioned ones are the v1 API, which CUDA 12 deprecates and
    // which needs memory operations enabled in the kernel module (CU_DEVICE_ATTRIBUTE_..._V1, 92-94), while
    // queue.cpp asks CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS (122) about the _v2 ones.
    {"stream_write_value64",   "cuStreamWriteValue64",      {"cuStreamWriteValue64_v2"}, false},
    {"stream_wait_value64",    "cuStreamWaitValue64",       {"cuStreamWaitValue64_v2"}, false},
    {"event_create",           "cuEventCreate",             {"cuEventCreate"}, true},
    {"event_destroy",          "cuEventDestroy",            {"cuEventDestroy_v2", "cuEventDestroy"}, true},
    {"event_record",           "cuEventRecord",             {"cuEventRecord"}, true},
    {"event_query",            "cuEventQuery",              {"cuEventQuery"}, true},
    {"event_synchronize",      "cuEventSynchronize",        {"cuEventSynchronize"}, true},
    {"event_elapsed_time",     "cuEventElapsedTime",        {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, true},
    {"module_load_data",       "cuModuleLoadData",          {"cuModuleLoadData"}, true},
    {"module_unload",          "cuModuleUnload",            {"cuModuleUnload"}, true},
    {"module_get_function",    "cuModuleGetFunction",       {"cuModuleGetFunction"}, true},
    {"launch_kernel",          "cuLaunchKernel",            {"cuLaunchKernel"}, true},
    {"graph_create",           "cuGraphCreate",             {"cuGraphCreate"}, false},
    {"graph_destroy",          "cuGraphDestroy",            {"cuGraphDestroy"}, false},
    // The _v2 entry points take KernelNodeParams (CUDA_KERNEL_NODE_PARAMS_v2); the unversioned ones do
    // not, so only _v2 is accepted.
    {"graph_add_kernel_node",  "cuGraphAddKernelNode",      {"cuGraphAddKernelNode_v2"}, false},
    {"graph_instantiate",      "cuGraphInstantiate",        {"cuGraphInstantiateWithFlags"}, false},
    {"graph_exec_destroy",     "cuGraphExecDestroy",        {"cuGraphExecDestroy"}, false},
    {"graph_exec_kernel_node_set_params", "cuGraphExecKernelNodeSetParams", {"cuGraphExecKernelNodeSetParams_v2"}, false},
    {"graph_launch",           "cuGraphLaunch",             {"cuGraphLaunch"}, false},
};
// clang-format on

// The table's field for a row. Listing the fields once more is the price of a plain struct of typed
// pointers; a row whose field is missing here would crash loading, which every test of a loaded driver
// would show.
void** slot(Driver& d, const char* field) {
#define SLUICE_FIELD(f) \
  if (std::strcmp(field, #f) == 0) return reinterpret_cast<void**>(&d.f)
  SLUICE_FIELD(init);
  SLUICE_FIELD(driver_get_version);
  SLUICE_FIELD(get_error_name);
  SLUICE_FIELD(get_error_string);
  SLUICE_FIELD(device_get_count);
  SLUICE_FIELD(device_get);
  SLUICE_FIELD(device_get_name);
  SLUICE_FIELD(device_get_attribute);
  SLUICE_FIELD(device_total_mem);
  SLUICE_FIELD(primary_ctx_retain);
  SLUICE_FIELD(primary_ctx_release);
  SLUICE_FIELD(ctx_set_current);
  SLUICE_FIELD(mem_alloc);
  SLUICE_FIELD(mem_free);
  SLUICE_FIELD(mem_host_alloc);
  SLUICE_FIELD(mem_free_host);
  SLUICE_FIELD(mem_host_get_device_pointer);
  SLUICE_FIELD(memcpy_async);
  SLUICE_FIELD(stream_create);
  SLUICE_FIELD(stream_destroy);
  SLUICE_FIELD(stream_synchronize);
  SLUICE_FIELD(stream_wait_event);
  SLUICE_FIELD(stream_write_value64);
  SLUICE_FIELD(stream_wait_value64);
  SLUICE_FIELD(event_create);
  SLUICE_FIELD(event_destroy);
  SLUICE_FIELD(event_record);
  SLUICE_FIELD(event_query);
  SLUICE_FIELD(event_synchronize);
  SLUICE_FIELD(event_elapsed_time);
  SLUICE_FIELD(module_load_data);
  SLUICE_FIELD(module_unload);
  SLUICE_FIELD(module_get_function);
  SLUICE_FIELD(launch_kernel);
  SLUICE_FIELD(graph_create);
  SLUICE_FIELD(graph_destroy);
  SLUICE_FIELD(graph_add_kernel_node);
  SLUICE_FIELD(graph_instantiate);
  SLUICE_FIELD(graph_exec_destroy);
  SLUICE_FIELD(graph_exec_kernel_node_set_params);
  SLUICE_FIELD(graph_launch);
#undef SLUICE_FIELD
  return nullptr;
}

// The table and context last made current on this thread: CUDA's and HIP's "contexts" are different
// things, and two tables may hand out equal values.
thread_local const Driver* tls_driver = nullptr;
thread_local CUcontext tls_current = nullptr;

}  // namespace

std::string format_error(const char* call, CUresult r, const char* name, const char* description) {
  std::string s = std::string(call) + ": ";
  s += name ? std::string(name) : "error " + std::to_string(r);
  if (description && *description && !(name && std::strcmp(name, description) == 0))
    s += std::string(" (") + description + ")";
  return s;
}

const char* Driver::call_name(const char* field) const {
  if (name_of) return name_of(field);
  for (const Symbol& s : kSymbols)
    if (std::strcmp(s.field, field) == 0) return s.name;
  return field;
}

std::string Driver::error(const char* field, CUresult r) const {
  const char* name = nullptr;
  const char* desc = nullptr;
  if (get_error_name && get_error_name(r, &name) != kSuccess) name = nullptr;
  if (get_error_string && get_error_string(r, &desc) != kSuccess) desc = nullptr;
  return format_error(call_name(field), r, name, desc);
}

std::string load_cuda_driver(const std::string& library, Driver& out) {
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    return library + " not found: " + (e ? e : "dlopen failed");
  }
  out.api = "CUDA";
  out.library = library;
  for (const Symbol& s : kSymbols) {
    void* fn = nullptr;
    for (const char* name : s.symbols)
      if (name && !fn) fn = ::dlsym(lib, name);
    if (!fn && s.required) return library + " lacks " + s.symbols[0] + " (a driver older than CUDA 12?)";
    void** field = slot(out, s.field);
    if (!field) return std::string("no table field for ") + s.name;  // a row without its slot line
    *field = fn;
  }
  // The library stays loaded for the life of the process: driver threads may run its code until exit.
  return "";
}

const Driver* cuda_driver(std::string* why) {
  static Driver drv;
  static std::string reason;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("SLUICE_CUDA_LIBRARY");
    reason = load_cuda_driver(env && *env ? env : "libcuda.so.1", drv);
    if (!reason.empty()) return;
    if (CUresult r = drv.init(0); r != kSuccess) {
      reason = "cuInit failed: " + drv.error("init", r).substr(std::strlen("cuInit: "));
      return;
    }
    int n = 0;
    if (CUresult r = drv.device_get_count(&n); r != kSuccess) {
      reason = drv.error("device_get_count", r);
    } else if (n == 0) {
      reason = "no CUDA device";
    }
  });
  if (why) *why = reason;
  return reason.empty() ? &drv : nullptr;
}

void make_current(const Driver& drv, CUcontext ctx) {
  if (tls_driver == &drv && tls_current == ctx) return;
  SLUICE_DRV("make_current", drv.api, drv, ctx_set_current, ctx);
  tls_driver = &drv;
  tls_current = ctx;
}

int device_attribute(const Driver& drv, const std::string& who, CUdevice dev, Attribute a) {
  int v = 0;
  SLUICE_DRV("open_device", who, drv, device_get_attribute, &v, a, dev);
  return v;
}

void KernelParams::pack(const uint64_t* bufs, uint32_t nbufs, const int32_t* vars, uint32_t nvars) {
  slots_.assign(size_t(nbufs) + nvars, 0);
  for (uint32_t i = 0; i < nbufs; ++i) slots_[i] = bufs[i];
  // An int parameter is read as 4 bytes from its pointer: the slot's first bytes.
  for (uint32_t i = 0; i < nvars; ++i) std::memcpy(&slots_[nbufs + i], &vars[i], sizeof(int32_t));
  ptrs_.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) ptrs_[i] = &slots_[i];
}

}  // namespace sluice::cuda
