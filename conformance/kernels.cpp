// The suite's kernels in C (the CPU ABI, backends/cpu/program.h; NULL loads them without looking), OpenCL
// C, CUDA C and HIP C. SPIR-V assembly is in kernels_spirv.cpp.
#include "conformance/kernels.h"

#include <vector>

#include "hcq/error.h"

namespace sluice::conformance {

// The five SPIR-V modules in the order of Kernels, assembled by spirv-as once per process
// (kernels_spirv.cpp).
const std::vector<std::string>& spirv_modules();

namespace {

// C: each core takes a contiguous share of the flattened grid (the ABI's intended split).
#define CONF_C_GRID                                                         \
  "  unsigned long n = (unsigned long)launch[0] * launch[1] * launch[2];\n" \
  "  unsigned long lo = n * core_id / n_cores, hi = n * (core_id + 1) / n_cores;\n"
#define CONF_C_SIGNATURE \
  "(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores)"

const std::vector<std::string> kC = {
    "void cts_fill" CONF_C_SIGNATURE " {\n" CONF_C_GRID
    "  int* out = (int*)bufs[0];\n"
    "  for (unsigned long g = lo; g < hi; ++g) out[g] = vars[0] + (int)g;\n"
    "}\n",
    "void cts_add" CONF_C_SIGNATURE " {\n" CONF_C_GRID
    "  int* out = (int*)bufs[0];\n"
    "  const int* in = (const int*)bufs[1];\n"
    "  for (unsigned long g = lo; g < hi; ++g) out[g] = in[g] + vars[0];\n"
    "}\n",
    "void cts_inc" CONF_C_SIGNATURE " {\n" CONF_C_GRID
    "  int* buf = (int*)bufs[0];\n"
    "  for (unsigned long g = lo; g < hi; ++g) buf[g] += 1;\n"
    "}\n",
    "void cts_empty" CONF_C_SIGNATURE
    " {\n"
    "  (void)bufs, (void)vars, (void)launch, (void)core_id, (void)n_cores;\n"
    "}\n",
    "void cts_spin" CONF_C_SIGNATURE
    " {\n"
    "  (void)vars, (void)launch, (void)core_id, (void)n_cores;\n"
    "  while (*(volatile int*)bufs[0] == 0) {}\n"
    "}\n",
};

// OpenCL C: each buffer is a base and a byte offset (backends/opencl/program.h), then the int variables.
#define CONF_CL_GID                                                                    \
  "  const int g = (int)(get_global_id(0) + get_global_size(0) * (get_global_id(1) + " \
  "get_global_size(1) * get_global_id(2)));\n"
#define CONF_CL_BUF(T, n) \
  "  __global " T "* " n " = (__global " T "*)((__global char*)" n "_base + " n "_off);\n"

const std::vector<std::string> kOpenCL = {
    "__kernel void cts_fill(__global int* out_base, ulong out_off, int base) {\n" CONF_CL_BUF("int", "out")
        CONF_CL_GID "  out[g] = base + g;\n}\n",
    "__kernel void cts_add(__global int* out_base, ulong out_off, __global int* in_base, ulong in_off, int "
    "k) "
    "{\n" CONF_CL_BUF("int", "out") CONF_CL_BUF("int", "in") CONF_CL_GID "  out[g] = in[g] + k;\n}\n",
    "__kernel void cts_inc(__global int* buf_base, ulong buf_off) {\n" CONF_CL_BUF("int", "buf") CONF_CL_GID
    "  buf[g] += 1;\n}\n",
    "__kernel void cts_empty(void) {}\n",
    "__kernel void cts_spin(__global int* flag_base, ulong flag_off) {\n" CONF_CL_BUF(
        "volatile int", "flag") "  while (*flag == 0) {}\n}\n",
};

// CUDA C for NVRTC (renderers/cuda.h ABI: buffers, then ints; `global` blocks of `local` threads).
#define CONF_CUDA_G                                                                                        \
  "  unsigned long g = ((unsigned long)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * " \
  "(blockDim.x * blockDim.y * blockDim.z) + (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + "      \
  "threadIdx.x;\n"

const std::vector<std::string> kCuda = {
    "extern \"C\" __global__ void cts_fill(int* out, int base) {\n" CONF_CUDA_G
    "  out[g] = base + (int)g;\n"
    "}\n",
    "extern \"C\" __global__ void cts_add(int* out, const int* in, int k) {\n" CONF_CUDA_G
    "  out[g] = in[g] + k;\n"
    "}\n",
    "extern \"C\" __global__ void cts_inc(int* buf) {\n" CONF_CUDA_G
    "  buf[g] += 1;\n"
    "}\n",
    "extern \"C\" __global__ void cts_empty() {}\n",
    "extern \"C\" __global__ void cts_spin(int* flag) {\n"
    "  while (*(volatile int*)flag == 0) {}\n"
    "}\n",
};

// HIP C for clang without headers (renderers/hip.h ABI: buffers, then ints). The group counts come from
// the HSA dispatch packet (grid_size in work-items at byte 12, workgroup_size at byte 4). compile_many
// joins a batch into one unit, so the prelude is guarded.
#define CONF_HIP_PRELUDE                                                                                     \
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

const std::vector<std::string> kHip = {
    CONF_HIP_PRELUDE
    "KERNEL cts_fill(int* out, int base) { unsigned long g = cts_g(); out[g] = base + (int)g; }\n",
    CONF_HIP_PRELUDE
    "KERNEL cts_add(int* out, const int* in, int k) { unsigned long g = cts_g(); out[g] = in[g] + k; }\n",
    CONF_HIP_PRELUDE "KERNEL cts_inc(int* buf) { unsigned long g = cts_g(); buf[g] += 1; }\n",
    CONF_HIP_PRELUDE "KERNEL cts_empty() {}\n",
    CONF_HIP_PRELUDE "KERNEL cts_spin(int* flag) { while (*(volatile int*)flag == 0) {} }\n",
};

const std::vector<std::string>& sources(Language lang) {
  switch (lang) {
    case Language::C: return kC;
    case Language::OpenCL: return kOpenCL;
    case Language::SpirvAsm: return spirv_modules();
    case Language::Cuda: return kCuda;
    case Language::Hip: return kHip;
  }
  SLUICE_FAIL(hcq::Error, "load_kernels") << "unknown language " << int(lang);
}

}  // namespace

Kernels load_kernels(hcq::Device& dev, Language lang) {
  std::vector<hcq::Binary> bins = dev.compiler().compile_many(sources(lang));
  Kernels k;
  k.fill = dev.load_program("cts_fill", bins.at(0), {1, 1});
  k.add = dev.load_program("cts_add", bins.at(1), {2, 1});
  k.inc = dev.load_program("cts_inc", bins.at(2), {1, 0});
  k.empty = dev.load_program("cts_empty", bins.at(3), {0, 0});
  k.spin = dev.load_program("cts_spin", bins.at(4), {1, 0});
  return k;
}

std::string store_kernel(Language lang, const std::string& name, int value) {
  const std::string v = std::to_string(value);
  switch (lang) {
    case Language::C: return "void " + name + CONF_C_SIGNATURE " { ((int*)bufs[0])[0] = " + v + "; }\n";
    case Language::OpenCL:
      return "__kernel void " + name + "(__global int* out, ulong off) { out[off / 4] = " + v + "; }\n";
    case Language::Cuda:
      return "extern \"C\" __global__ void " + name + "(int* out) { out[0] = " + v + "; }\n";
    case Language::Hip:
      return "extern \"C\" __attribute__((global)) void " + name + "(int* out) { out[0] = " + v + "; }\n";
    case Language::SpirvAsm: break;
  }
  SLUICE_FAIL(hcq::Error, "store_kernel") << "no store kernel in SPIR-V assembly";
}

}  // namespace sluice::conformance
