// The suite's kernels in HIP C for clang without headers (renderers/hip.h ABI: buffers, then ints).
// g is the flattened global work-item index, as in the CPU versions (kernels.cpp); the group counts
// come from the HSA dispatch packet (grid_size in work-items at byte 12, workgroup_size at byte 4).
#include <string>
#include <vector>

#include "backends/hip/driver.h"
#include "tests/cts/devices.h"

namespace sluice::cts {
namespace {

// compile_many joins a batch into one unit, so the prelude is guarded.
#define CTS_HIP_PRELUDE                                                                                      \
  "#ifndef CTS_HIP_G\n#define CTS_HIP_G\n"                                                                   \
  "#define KERNEL extern \"C\" __attribute__((global)) void "                                                \
  "__attribute__((amdgpu_flat_work_group_size(1, 1024)))\n"                                                  \
  "static __attribute__((device)) inline unsigned long cts_g() {\n"                                          \
  "  const __attribute__((address_space(4))) char* d = (const __attribute__((address_space(4))) char*)"      \
  "__builtin_amdgcn_dispatch_ptr();\n"                                                                       \
  "  const __attribute__((address_space(4))) unsigned short* wg = (const __attribute__((address_space(4))) " \
  "unsigned short*)(d + 4);\n"                                                                               \
  "  const __attribute__((address_space(4))) unsigned* gs = (const __attribute__((address_space(4))) "       \
  "unsigned*)(d + 12);\n"                                                                                    \
  "  unsigned long gx = gs[0] / wg[0], gy = gs[1] / wg[1];\n"                                                \
  "  unsigned long group = (__builtin_amdgcn_workgroup_id_z() * gy + __builtin_amdgcn_workgroup_id_y()) * "  \
  "gx "                                                                                                      \
  "+ __builtin_amdgcn_workgroup_id_x();\n"                                                                   \
  "  unsigned long local = (__builtin_amdgcn_workitem_id_z() * wg[1] + __builtin_amdgcn_workitem_id_y()) * " \
  "wg[0] + __builtin_amdgcn_workitem_id_x();\n"                                                              \
  "  return group * (unsigned long)(wg[0] * wg[1] * wg[2]) + local;\n"                                       \
  "}\n#endif\n"

const std::vector<std::string> kSources = {
    CTS_HIP_PRELUDE
    "KERNEL cts_fill(int* out, int base) { unsigned long g = cts_g(); out[g] = base + (int)g; }\n",
    CTS_HIP_PRELUDE
    "KERNEL cts_add(int* out, const int* in, int k) { unsigned long g = cts_g(); out[g] = in[g] + k; }\n",
    CTS_HIP_PRELUDE "KERNEL cts_inc(int* buf) { unsigned long g = cts_g(); buf[g] += 1; }\n",
    CTS_HIP_PRELUDE "KERNEL cts_empty() {}\n",
    CTS_HIP_PRELUDE "KERNEL cts_spin(int* flag) { while (*(volatile int*)flag == 0) {} }\n",
};

}  // namespace

Kernels load_hip_kernels(hcq::Device& dev) { return load_kernels(dev, kSources); }

std::string hip_store_kernel(const std::string& name, int value) {
  return "extern \"C\" __attribute__((global)) void " + name +
         "(int* out) { out[0] = " + std::to_string(value) + "; }\n";
}

std::string hip_arch() {
  const cuda::Driver* drv = hip::hip_driver(nullptr);
  return drv ? hip::gfx_arch(*drv, 0) : "";
}

}  // namespace sluice::cts
