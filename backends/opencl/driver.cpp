#include "backends/opencl/driver.h"

#include <dlfcn.h>

#include <mutex>

namespace sluice::opencl {
namespace {

struct Loaded {
  Api api;
  std::string error;
};

const Loaded& loaded() {
  static const Loaded* l = [] {
    auto* out = new Loaded;  // leaked: callbacks may run during static destruction
    void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      out->error = std::string("libOpenCL.so.1 not found (") + (e ? e : "dlopen failed") + ")";
      return out;
    }
#define SLUICE_X(f)                                                                           \
  if (!(out->api.f = reinterpret_cast<decltype(&::f)>(dlsym(lib, #f))) && out->error.empty()) \
    out->error = "libOpenCL.so.1 lacks " #f;
    SLUICE_CL_FUNCTIONS(SLUICE_X)
#undef SLUICE_X
    return out;
  }();
  return *l;
}

}  // namespace

const Api& api() {
  const Loaded& l = loaded();
  if (!l.error.empty()) SLUICE_FAIL(DeviceError, "opencl") << l.error;
  return l.api;
}

std::string load_error() { return loaded().error; }

std::string error_name(cl_int err) {
  // clang-format off
  static constexpr std::pair<cl_int, const char*> kNames[] = {
#define SLUICE_E(e) {e, #e},
      SLUICE_E(CL_DEVICE_NOT_FOUND) SLUICE_E(CL_DEVICE_NOT_AVAILABLE) SLUICE_E(CL_COMPILER_NOT_AVAILABLE)
      SLUICE_E(CL_MEM_OBJECT_ALLOCATION_FAILURE) SLUICE_E(CL_OUT_OF_RESOURCES) SLUICE_E(CL_OUT_OF_HOST_MEMORY)
      SLUICE_E(CL_PROFILING_INFO_NOT_AVAILABLE) SLUICE_E(CL_MEM_COPY_OVERLAP) SLUICE_E(CL_BUILD_PROGRAM_FAILURE)
      SLUICE_E(CL_MISALIGNED_SUB_BUFFER_OFFSET) SLUICE_E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) SLUICE_E(CL_INVALID_VALUE)
      SLUICE_E(CL_INVALID_DEVICE_TYPE) SLUICE_E(CL_INVALID_PLATFORM) SLUICE_E(CL_INVALID_DEVICE)
      SLUICE_E(CL_INVALID_CONTEXT) SLUICE_E(CL_INVALID_QUEUE_PROPERTIES) SLUICE_E(CL_INVALID_COMMAND_QUEUE)
      SLUICE_E(CL_INVALID_HOST_PTR) SLUICE_E(CL_INVALID_MEM_OBJECT) SLUICE_E(CL_INVALID_BINARY)
      SLUICE_E(CL_INVALID_BUILD_OPTIONS) SLUICE_E(CL_INVALID_PROGRAM) SLUICE_E(CL_INVALID_PROGRAM_EXECUTABLE)
      SLUICE_E(CL_INVALID_KERNEL_NAME) SLUICE_E(CL_INVALID_KERNEL_DEFINITION) SLUICE_E(CL_INVALID_KERNEL)
      SLUICE_E(CL_INVALID_ARG_INDEX) SLUICE_E(CL_INVALID_ARG_VALUE) SLUICE_E(CL_INVALID_ARG_SIZE)
      SLUICE_E(CL_INVALID_KERNEL_ARGS) SLUICE_E(CL_INVALID_WORK_DIMENSION) SLUICE_E(CL_INVALID_WORK_GROUP_SIZE)
      SLUICE_E(CL_INVALID_WORK_ITEM_SIZE) SLUICE_E(CL_INVALID_GLOBAL_OFFSET) SLUICE_E(CL_INVALID_EVENT_WAIT_LIST)
      SLUICE_E(CL_INVALID_EVENT) SLUICE_E(CL_INVALID_OPERATION) SLUICE_E(CL_INVALID_BUFFER_SIZE)
      SLUICE_E(CL_INVALID_GLOBAL_WORK_SIZE) SLUICE_E(CL_INVALID_PROPERTY)
      SLUICE_E(CL_IMAGE_FORMAT_MISMATCH) SLUICE_E(CL_IMAGE_FORMAT_NOT_SUPPORTED) SLUICE_E(CL_MAP_FAILURE)
      SLUICE_E(CL_COMPILE_PROGRAM_FAILURE) SLUICE_E(CL_LINKER_NOT_AVAILABLE) SLUICE_E(CL_LINK_PROGRAM_FAILURE)
      SLUICE_E(CL_DEVICE_PARTITION_FAILED) SLUICE_E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
      SLUICE_E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) SLUICE_E(CL_INVALID_IMAGE_SIZE) SLUICE_E(CL_INVALID_SAMPLER)
      SLUICE_E(CL_INVALID_GL_OBJECT) SLUICE_E(CL_INVALID_MIP_LEVEL) SLUICE_E(CL_INVALID_IMAGE_DESCRIPTOR)
      SLUICE_E(CL_INVALID_COMPILER_OPTIONS) SLUICE_E(CL_INVALID_LINKER_OPTIONS)
      SLUICE_E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef SLUICE_E
      // Past OpenCL 1.2 (the headers of CL_TARGET_OPENCL_VERSION 120 lack them).
      {-69, "CL_INVALID_PIPE_SIZE"}, {-70, "CL_INVALID_DEVICE_QUEUE"}, {-71, "CL_INVALID_SPEC_ID"},
      {-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED"},
      {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
  };
  // clang-format on
  for (const auto& [e, n] : kNames)
    if (e == err) return std::string(n) + " (" + std::to_string(err) + ")";
  return "error " + std::to_string(err);
}

void fail(const char* func, const char* call, cl_int err) {
  std::string c = call;
  SLUICE_FAIL(hcq::Error, func) << c.substr(0, c.find('(')) << " failed: " << error_name(err);
}

const std::vector<DeviceId>& devices() {
  static std::mutex mu;
  static std::vector<DeviceId> out;
  static bool done = false;
  std::lock_guard lk(mu);
  if (done) return out;
  const Api& cl = api();
  cl_uint np = 0;
  cl_int err = cl.clGetPlatformIDs(0, nullptr, &np);
  SLUICE_CHECK_AS(DeviceError, err == CL_SUCCESS || err == -1001)
      << "clGetPlatformIDs failed: " << error_name(err);
  SLUICE_CHECK_AS(DeviceError, np > 0) << "no OpenCL platform: the ICD loader found no driver";
  std::vector<cl_platform_id> ps(np);
  SLUICE_CL(clGetPlatformIDs(np, ps.data(), nullptr), "opencl");
  for (cl_platform_id p : ps) {
    cl_uint nd = 0;
    if (cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ds(nd);
    SLUICE_CL(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr), "opencl");
    for (cl_device_id d : ds) out.push_back({p, d});
  }
  SLUICE_CHECK_AS(DeviceError, !out.empty()) << "no OpenCL device on " << np << " platform(s)";
  done = true;
  return out;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  SLUICE_CL(clGetDeviceInfo(d, what, 0, nullptr, &n), "opencl");
  std::string s(n, '\0');
  SLUICE_CL(clGetDeviceInfo(d, what, n, s.data(), nullptr), "opencl");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  SLUICE_CL(clGetPlatformInfo(p, what, 0, nullptr, &n), "opencl");
  std::string s(n, '\0');
  SLUICE_CL(clGetPlatformInfo(p, what, n, s.data(), nullptr), "opencl");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace sluice::opencl

namespace sluice::opencl {

Context::Context(int ordinal) {
  const auto& ds = devices();
  SLUICE_CHECK_IN(DeviceError, "open_device", ordinal >= 0 && size_t(ordinal) < ds.size())
      << "no OpenCL device " << ordinal << ": " << ds.size() << " present";
  platform = ds[ordinal].platform;
  device = ds[ordinal].device;
  cl_int err = CL_SUCCESS;
  ctx = api().clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  if (!ctx) fail("open_device", "clCreateContext", err);
  device_name = device_string(device, CL_DEVICE_NAME);
  vendor = device_string(device, CL_DEVICE_VENDOR);
  driver_version = device_string(device, CL_DRIVER_VERSION);
  platform_version = platform_string(platform, CL_PLATFORM_VERSION);
}

Context::~Context() {
  if (ctx) api().clReleaseContext(ctx);
}

}  // namespace sluice::opencl
