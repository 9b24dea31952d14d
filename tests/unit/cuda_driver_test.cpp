// The CUDA and HIP backends without a GPU: absent reasons when the driver library is missing, the
// versioned entry points taken from the toolkit's stub driver, the driver-error format, make_current per
// driver table, cuLaunchKernel's argument packing, which submissions run as graphs, NVRTC's targets, gfx
// names.
// Runs as its own executable: the absent reasons are computed once per process, after the environment
// overrides below.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backends/cuda/compiler.h"
#include "backends/cuda/device.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/graph.h"
#include "backends/hip/device.h"
#include "backends/hip/driver.h"
#include "backends/null/device.h"
#include "hcq/queue.h"
#include "runtime/device.h"

namespace sluice {
namespace {

constexpr const char* kMissingCuda = "libsluice-missing-cuda.so.1";
constexpr const char* kMissingHip = "libsluice-missing-amdhip64.so";
// Before main: the registry (list_devices) asks every backend for its reason, which is then cached.
const bool kEnvironment = [] {
  ::setenv("SLUICE_CUDA_LIBRARY", kMissingCuda, 1);
  ::setenv("SLUICE_HIP_LIBRARY", kMissingHip, 1);
  return true;
}();

TEST(CudaDriver, AbsentWhenTheLibraryIsMissing) {
  ASSERT_TRUE(kEnvironment);
  const std::string why = cuda::absent_reason();
  EXPECT_EQ(why.rfind(std::string(kMissingCuda) + " not found: ", 0), 0u) << why;
  EXPECT_NE(why.find("cannot open shared object file"), std::string::npos) << why;  // dlerror's words
  try {
    cuda::open_device(0);
    FAIL() << "open_device must fail without a driver";
  } catch (const hcq::Error& e) {
    EXPECT_EQ(std::string(e.what()), "[open_device] CUDA is not available: " + why);
  }
  // The registry reports the device absent with the same reason.
  bool listed = false;
  for (const DeviceInfo& d : list_devices()) {
    if (d.name != "CUDA") continue;
    listed = true;
    EXPECT_FALSE(d.available);
    EXPECT_EQ(d.reason, why);
  }
  EXPECT_TRUE(listed);
}

TEST(HipDriver, AbsentWhenTheLibraryIsMissing) {
  ASSERT_TRUE(kEnvironment);
  const std::string why = hip::absent_reason();
  EXPECT_EQ(why.rfind(std::string(kMissingHip) + " not found: ", 0), 0u) << why;
  EXPECT_THROW(hip::open_device(0), hcq::Error);
}

TEST(CudaDriver, LoadingAMissingLibraryIsNotCached) {
  cuda::Driver d;
  EXPECT_EQ(cuda::load_cuda_driver("libsluice-nothing.so", d).rfind("libsluice-nothing.so not found: ", 0),
            0u);
  cuda::Driver h;
  EXPECT_EQ(hip::load_hip_driver("libsluice-nothing.so", h).rfind("libsluice-nothing.so not found: ", 0), 0u);
}

// The toolkit's stub libcuda exports every entry point and fails cuInit: the table loads whole (every
// symbol row has its field), and the failure names the call.
TEST(CudaDriver, StubDriverLoadsEveryEntryPoint) {
  const char* root = std::getenv("CUDA_PATH");
  const std::string stub = std::string(root && *root ? root : "/usr/local/cuda") + "/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  cuda::Driver d;
  ASSERT_EQ(cuda::load_cuda_driver(stub, d), "");
  EXPECT_TRUE(d.has_stream_mem_ops());
  EXPECT_TRUE(d.has_graphs());
  for (auto* fn : {(void*)d.init, (void*)d.mem_host_get_device_pointer, (void*)d.memcpy_async,
                   (void*)d.event_elapsed_time, (void*)d.launch_kernel, (void*)d.stream_wait_event})
    EXPECT_NE(fn, nullptr);
  // The versioned entry points whose ABI the table declares (cuda.h's macros pick the same ones).
  void* lib = ::dlopen(stub.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ((void*)d.mem_alloc, ::dlsym(lib, "cuMemAlloc_v2"));
  EXPECT_EQ((void*)d.mem_host_get_device_pointer, ::dlsym(lib, "cuMemHostGetDevicePointer_v2"));
  EXPECT_EQ((void*)d.stream_write_value64, ::dlsym(lib, "cuStreamWriteValue64_v2"));
  EXPECT_EQ((void*)d.stream_wait_value64, ::dlsym(lib, "cuStreamWaitValue64_v2"));
  EXPECT_EQ((void*)d.graph_add_kernel_node, ::dlsym(lib, "cuGraphAddKernelNode_v2"));
  EXPECT_EQ((void*)d.graph_exec_kernel_node_set_params, ::dlsym(lib, "cuGraphExecKernelNodeSetParams_v2"));
  EXPECT_EQ((void*)d.graph_instantiate, ::dlsym(lib, "cuGraphInstantiateWithFlags"));
  cuda::CUresult r = d.init(0);
  EXPECT_NE(r, cuda::kSuccess);
  EXPECT_EQ(d.error("init", r).rfind("cuInit: ", 0), 0u) << d.error("init", r);
}

TEST(CudaDriver, ErrorFormatNamesTheCallAndTheDriversStrings) {
  EXPECT_EQ(cuda::format_error("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"),
            "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(cuda::format_error("cuLaunchKernel", 999, nullptr, nullptr), "cuLaunchKernel: error 999");
  EXPECT_EQ(cuda::format_error("cuInit", 100, "CUDA_ERROR_NO_DEVICE", ""), "cuInit: CUDA_ERROR_NO_DEVICE");
  // HIP's string for some errors is its name again: said once.
  EXPECT_EQ(cuda::format_error("hipInit", 101, "hipErrorInvalidDevice", "hipErrorInvalidDevice"),
            "hipInit: hipErrorInvalidDevice");
}

// A table whose calls fail the way a driver does, to see what SLUICE_DRV throws.
cuda::CUresult fake_name(cuda::CUresult r, const char** s) {
  *s = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : nullptr;
  return r == 2 ? 0 : 1;  // CUDA_ERROR_INVALID_VALUE for codes it does not know, as the driver does
}
cuda::CUresult fake_string(cuda::CUresult r, const char** s) {
  *s = r == 2 ? "out of memory" : nullptr;
  return r == 2 ? 0 : 1;
}
cuda::CUresult fake_alloc(cuda::CUdeviceptr*, size_t) { return 2; }
cuda::CUresult fake_launch(cuda::CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, cuda::CUstream, void**, void**) {
  return 719;
}

void alloc_through(const cuda::Driver& drv) {
  cuda::CUdeviceptr p = 0;
  SLUICE_DRV("alloc", "CUDA:1", drv, mem_alloc, &p, 64);
}

TEST(CudaDriver, DriverCallErrorsNameTheCallAndTheError) {
  cuda::Driver drv;
  drv.api = "CUDA";
  drv.get_error_name = fake_name;
  drv.get_error_string = fake_string;
  drv.mem_alloc = fake_alloc;
  drv.launch_kernel = fake_launch;
  try {
    alloc_through(drv);
    FAIL();
  } catch (const hcq::Error& e) {
    EXPECT_STREQ(e.what(), "[alloc] CUDA:1: cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  }
  // A code the driver cannot name is printed as a number.
  EXPECT_EQ(drv.error("launch_kernel", 719), "cuLaunchKernel: error 719");
}

// CUDA's contexts are pointers, HIP's (backends/hip/driver.h) the device ordinal plus one: two tables may
// hand out equal values, and making one current says nothing about the other.
int sets_a = 0, sets_b = 0;
cuda::CUresult set_a(cuda::CUcontext) { return ++sets_a, 0; }
cuda::CUresult set_b(cuda::CUcontext) { return ++sets_b, 0; }

TEST(CudaDriver, MakeCurrentTellsDriverTablesApart) {
  cuda::Driver a, b;
  a.ctx_set_current = set_a;
  b.ctx_set_current = set_b;
  const auto ctx = reinterpret_cast<cuda::CUcontext>(uintptr_t(1));
  // The thread remembers what it made current last, also across --gtest_repeat: start from b.
  cuda::make_current(b, ctx);
  sets_a = sets_b = 0;
  cuda::make_current(a, ctx);
  cuda::make_current(a, ctx);  // already current: no call
  EXPECT_EQ(sets_a, 1);
  cuda::make_current(b, ctx);
  EXPECT_EQ(sets_b, 1);
  cuda::make_current(a, ctx);
  EXPECT_EQ(sets_a, 2);
}

TEST(CudaDriver, KernelParamsHoldBuffersThenInts) {
  const hcq::KernelArgs args{{0x1122334455667788ull, 0x7f0000001000ull}, {-5, 7}};
  cuda::KernelParams p;
  p.pack(args);
  void** params = p.params();
  ASSERT_NE(params, nullptr);
  ASSERT_EQ(p.slots().size(), 4u);
  uint64_t b0 = 0, b1 = 0;
  std::memcpy(&b0, params[0], 8);
  std::memcpy(&b1, params[1], 8);
  EXPECT_EQ(b0, 0x1122334455667788ull);
  EXPECT_EQ(b1, 0x7f0000001000ull);
  int32_t v0 = 0, v1 = 0;  // the driver reads an int parameter's 4 bytes from its pointer
  std::memcpy(&v0, params[2], 4);
  std::memcpy(&v1, params[3], 4);
  EXPECT_EQ(v0, -5);
  EXPECT_EQ(v1, 7);
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) EXPECT_NE(params[i], params[j]);
  cuda::KernelParams none;
  none.pack(hcq::KernelArgs{});
  EXPECT_EQ(none.params(), nullptr);  // a kernel without parameters takes a null list
}

// NVRTC (where installed) compiles a known arch to a CUBIN, an arch newer than it knows to PTX the driver
// can compile for the GPU, and refuses one older than it knows by name.
TEST(CudaCompiler, ArchNewerThanNvrtcGetsPtxOlderIsRefused) {
  if (std::string why = cuda::nvrtc_absent_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string src = "extern \"C\" __global__ void k(int* p) { p[0] = 1; }\n";
  const hcq::Binary cubin = cuda::make_compiler("sm_90", "")->compile(src);
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin[0], 0x7f);  // an ELF image
  EXPECT_EQ(std::string(cubin.begin() + 1, cubin.begin() + 4), "ELF");
  const hcq::Binary ptx = cuda::make_compiler("sm_999", "")->compile(src);
  const std::string text(ptx.begin(), ptx.end());
  EXPECT_NE(text.find(".target sm_"), std::string::npos) << text.substr(0, 400);
  EXPECT_EQ(text.back(), '\0');  // cuModuleLoadData reads PTX up to its NUL
  try {
    cuda::make_compiler("sm_10", "")->compile(src);
    FAIL() << "sm_10 predates every NVRTC that has nvrtcGetSupportedArchs";
  } catch (const hcq::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot compile for sm_10: its oldest architecture is sm_"),
              std::string::npos)
        << e.what();
  }
}

TEST(CudaGraph, OnlyGraphsOfKernelsAndBarriersWithTwoOrMoreKernelsRunAsDriverGraphs) {
  auto dev = null::open_device(0);
  hcq::Program p(*dev, "k", {1, 1});
  const hcq::KernelArgs args{{64}, {3}};
  hcq::HwQueue two;
  two.exec(p, args, {4}).memory_barrier().exec(p, args, {8});
  EXPECT_TRUE(cuda::GraphCache::supports(two.packets()));
  hcq::HwQueue one;
  one.exec(p, args, {4});
  EXPECT_FALSE(cuda::GraphCache::supports(one.packets()));
  auto s = dev->new_signal("s");
  hcq::HwQueue with_signal;
  with_signal.exec(p, args, {4}).exec(p, args, {4}).signal(*s, 1);
  EXPECT_FALSE(cuda::GraphCache::supports(with_signal.packets()));
  hcq::HwQueue with_copy;
  with_copy.exec(p, args, {4}).exec(p, args, {4}).copy(64, 128, 4);
  EXPECT_FALSE(cuda::GraphCache::supports(with_copy.packets()));
}

// Where libamdhip64 is installed (no GPU needed), its table loads whole and names calls the HIP way.
TEST(HipDriver, InstalledLibraryLoadsEveryEntryPoint) {
  cuda::Driver h;
  if (std::string why = hip::load_hip_driver("libamdhip64.so", h); !why.empty()) GTEST_SKIP() << why;
  for (auto* fn : {(void*)h.init, (void*)h.mem_alloc, (void*)h.mem_host_alloc, (void*)h.mem_free_host,
                   (void*)h.mem_host_get_device_pointer, (void*)h.memcpy_async, (void*)h.launch_kernel,
                   (void*)h.event_elapsed_time, (void*)h.ctx_set_current, (void*)h.get_error_name})
    EXPECT_NE(fn, nullptr);
  EXPECT_TRUE(h.has_graphs());
  EXPECT_TRUE(h.has_stream_mem_ops());
  EXPECT_EQ(h.word_alloc_bytes, 8u);  // hipExtMallocWithFlags(hipMallocSignalMemory) takes 8 bytes only
  EXPECT_STREQ(h.call_name("mem_alloc"), "hipMalloc");
  EXPECT_STREQ(h.call_name("launch_kernel"), "hipModuleLaunchKernel");
  EXPECT_EQ(h.error("init", 100).rfind("hipInit: hipErrorNoDevice", 0), 0u) << h.error("init", 100);
}

TEST(HipDriver, GfxNamesFromKfdTargetVersions) {
  EXPECT_EQ(hip::gfx_name(90010), "gfx90a");
  EXPECT_EQ(hip::gfx_name(90402), "gfx942");
  EXPECT_EQ(hip::gfx_name(110000), "gfx1100");
  EXPECT_EQ(hip::gfx_name(100300), "gfx1030");
  EXPECT_EQ(hip::gfx_name(0), "");
}

}  // namespace
}  // namespace sluice
