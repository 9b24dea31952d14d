// The suite's kernels in OpenCL C (the ABI of backends/opencl/program.h: each buffer a base and a byte
// offset, then the int variables).
// A kernel covers the flattened global range, so a launch of any shape touches elements 0 .. count-1.
#include <string>
#include <vector>

#include "tests/cts/devices.h"

namespace sluice::cts {
namespace {

#define CTS_CL_GID                                                                     \
  "  const int g = (int)(get_global_id(0) + get_global_size(0) * (get_global_id(1) + " \
  "get_global_size(1) * get_global_id(2)));\n"

// Each buffer is a base and a byte offset (backends/opencl/program.h): CTS_CL_BUF binds it.
#define CTS_CL_BUF(T, n) \
  "  __global " T "* " n " = (__global " T "*)((__global char*)" n "_base + " n "_off);\n"

const std::vector<std::string> kSources = {
    "__kernel void cts_fill(__global int* out_base, ulong out_off, int base) {\n" CTS_CL_BUF("int", "out")
        CTS_CL_GID "  out[g] = base + g;\n}\n",
    "__kernel void cts_add(__global int* out_base, ulong out_off, __global int* in_base, ulong in_off, int "
    "k) "
    "{\n" CTS_CL_BUF("int", "out") CTS_CL_BUF("int", "in") CTS_CL_GID "  out[g] = in[g] + k;\n}\n",
    "__kernel void cts_inc(__global int* buf_base, ulong buf_off) {\n" CTS_CL_BUF("int", "buf") CTS_CL_GID
    "  buf[g] += 1;\n}\n",
    "__kernel void cts_empty(void) {}\n",
    "__kernel void cts_spin(__global int* flag_base, ulong flag_off) {\n" CTS_CL_BUF(
        "volatile int", "flag") "  while (*flag == 0) {}\n}\n",
};

}  // namespace

Kernels load_opencl_kernels(hcq::Device& dev) { return load_kernels(dev, kSources); }

std::string opencl_store_kernel(const std::string& name, int value) {
  return "__kernel void " + name +
         "(__global int* out, ulong off) { out[off / 4] = " + std::to_string(value) + "; }\n";
}

}  // namespace sluice::cts
