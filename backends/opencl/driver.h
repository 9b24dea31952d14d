#pragma once
// The OpenCL API, loaded at run time: libOpenCL.so.1 (the ICD loader) is dlopen'ed on first use, so one
// build runs with or without an OpenCL driver. CL/cl.h is used for the types only.
//
// - api() returns the entry points, or throws DeviceError `[opencl] ...` with the reason they are missing
//   (no libOpenCL.so.1, a symbol missing). load_error() is that reason without throwing ("" when loaded).
// - Every call goes through SLUICE_CL(call, func), which throws hcq::Error naming `func`, the call and
//   the driver's error string: `[submit] clEnqueueNDRangeKernel failed: CL_INVALID_WORK_GROUP_SIZE (-54)`.
// - devices() flattens every platform's devices (CL_DEVICE_TYPE_ALL) into one list, in platform order:
//   the ordinal of `CL:n`. It throws DeviceError when there is no platform or no device.
//
// Threading: everything here is thread-safe; loading happens once.
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <string>
#include <vector>

#include "hcq/error.h"

namespace sluice::opencl {

// clang-format off
#define SLUICE_CL_FUNCTIONS(X)                                                                    \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)                    \
  X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue)          \
  X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer)           \
  X(clCreateProgramWithSource) X(clCreateProgramWithBinary) X(clBuildProgram) X(clGetProgramInfo)  \
  X(clGetProgramBuildInfo) X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel)                \
  X(clSetKernelArg) X(clEnqueueNDRangeKernel) X(clEnqueueCopyBuffer) X(clFlush) X(clFinish)        \
  X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrierWithWaitList) X(clSetEventCallback)            \
  X(clRetainEvent) X(clReleaseEvent) X(clWaitForEvents) X(clGetEventProfilingInfo)
// clang-format on

struct Api {
#define SLUICE_X(f) decltype(&::f) f = nullptr;
  SLUICE_CL_FUNCTIONS(SLUICE_X)
#undef SLUICE_X
};

const Api& api();
std::string load_error();

// "CL_INVALID_VALUE (-30)"
std::string error_name(cl_int err);
[[noreturn]] void fail(const char* func, const char* call, cl_int err);

#define SLUICE_CL(call, func)                                                                                \
  do {                                                                                                       \
    if (cl_int e_ = ::sluice::opencl::api().call; e_ != CL_SUCCESS) ::sluice::opencl::fail(func, #call, e_); \
  } while (0)

struct DeviceId {
  cl_platform_id platform;
  cl_device_id device;
};
const std::vector<DeviceId>& devices();

// String and scalar queries; throw hcq::Error naming the call.
std::string device_string(cl_device_id d, cl_device_info what);
std::string platform_string(cl_platform_id p, cl_platform_info what);
template <class T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  SLUICE_CL(clGetDeviceInfo(d, what, sizeof v, &v, nullptr), "opencl");
  return v;
}

}  // namespace sluice::opencl

namespace sluice::opencl {

// One opened device: the context every object of a Device lives in. Owned by the Device (released last).
struct Context {
  explicit Context(int ordinal);  // throws DeviceError for an ordinal past devices()
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx = nullptr;
  std::string device_name, vendor, driver_version, platform_version;
};

}  // namespace sluice::opencl
