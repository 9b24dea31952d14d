// The suite's kernels in CUDA C for NVRTC (renderers/cuda.h ABI: buffers, then ints; `global` blocks of
// `local` threads). g is the flattened global work-item index, as in the CPU versions (kernels.cpp).
#include <string>
#include <vector>

#include "backends/cuda/driver.h"
#include "tests/cts/devices.h"

namespace sluice::cts {
namespace {

#define CTS_CUDA_G                                                                                         \
  "  unsigned long g = ((unsigned long)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * " \
  "(blockDim.x * blockDim.y * blockDim.z) + (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + "      \
  "threadIdx.x;\n"

const std::vector<std::string> kSources = {
    "extern \"C\" __global__ void cts_fill(int* out, int base) {\n" CTS_CUDA_G
    "  out[g] = base + (int)g;\n"
    "}\n",
    "extern \"C\" __global__ void cts_add(int* out, const int* in, int k) {\n" CTS_CUDA_G
    "  out[g] = in[g] + k;\n"
    "}\n",
    "extern \"C\" __global__ void cts_inc(int* buf) {\n" CTS_CUDA_G
    "  buf[g] += 1;\n"
    "}\n",
    "extern \"C\" __global__ void cts_empty() {}\n",
    "extern \"C\" __global__ void cts_spin(int* flag) {\n"
    "  while (*(volatile int*)flag == 0) {}\n"
    "}\n",
};

}  // namespace

Kernels load_cuda_kernels(hcq::Device& dev) { return load_kernels(dev, kSources); }

std::string cuda_store_kernel(const std::string& name, int value) {
  return "extern \"C\" __global__ void " + name + "(int* out) { out[0] = " + std::to_string(value) + "; }\n";
}

std::string cuda_arch() {
  const cuda::Driver* drv = cuda::cuda_driver(nullptr);
  cuda::CUdevice d = 0;
  int major = 0, minor = 0;
  if (!drv || drv->device_get(&d, 0) != cuda::kSuccess ||
      drv->device_get_attribute(&major, cuda::kComputeCapabilityMajor, d) != cuda::kSuccess ||
      drv->device_get_attribute(&minor, cuda::kComputeCapabilityMinor, d) != cuda::kSuccess)
    return "";
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

}  // namespace sluice::cts
