#pragma once
// The conformance suite's devices. To add a backend, add its entry in devices.cpp: how to open it, and
// every feature it does not support with the reason. Tests needing a feature start with
// CTS_REQUIRE(feature) and are skipped, with that reason, on devices that lack it.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::cts {

enum class Feature {
  Execution,      // kernels run and copies move bytes, so memory contents can be checked
  BlockingWaits,  // a queue's wait holds back the commands after it, and failures propagate through it
  DiskCache,      // the compiler runs a compiler process and caches binaries on disk
  HangRecovery,   // a kernel that never returns is abandoned past the hang timeout; the device goes on
};

struct DeviceEntry {
  std::string name;
  std::function<std::unique_ptr<hcq::Device>(int ordinal)> open;
  // A fresh compiler of the device's kind over `cache_dir` (tests of the disk cache).
  std::function<std::unique_ptr<hcq::Compiler>(const std::filesystem::path& cache_dir)> make_compiler;
  std::map<Feature, std::string> unsupported;
  // The suite's kernels (the Kernels struct below) in the device's language, compiled and loaded.
  std::function<struct Kernels(hcq::Device&)> load_kernels;
  // A kernel `name` in the device's language taking bufs {out} that stores `value` into out[0] (layout
  // {1, 0}); unset: the CPU C ABI.
  std::function<std::string(const std::string& name, int value)> store_kernel;
};

const std::vector<const DeviceEntry*>& device_entries();
std::string device_param_name(const testing::TestParamInfo<const DeviceEntry*>& info);

// The suite's kernels, loaded once per device by its entry's load_kernels. The CPU C versions are in
// kernels.cpp; a backend in another language puts its versions in kernels_<backend>.cpp.
struct Kernels {
  std::unique_ptr<hcq::Program> fill;   // bufs {out}, vars {base}: out[g] = base + g
  std::unique_ptr<hcq::Program> add;    // bufs {out, in}, vars {k}: out[g] = in[g] + k
  std::unique_ptr<hcq::Program> inc;    // bufs {buf}: buf[g] += 1
  std::unique_ptr<hcq::Program> empty;  // does nothing
  std::unique_ptr<hcq::Program> spin;   // bufs {flag}: returns once *flag != 0
};
// Compiles the five sources (fill, add, inc, empty, spin: the order of Kernels) on dev and loads them.
Kernels load_kernels(hcq::Device& dev, const std::vector<std::string>& sources);
Kernels load_c_kernels(hcq::Device& dev);       // CPU C (backends/cpu/program.h ABI); NULL loads them too
Kernels load_opencl_kernels(hcq::Device& dev);  // OpenCL C (kernels_opencl.cpp)
Kernels load_spirv_kernels(hcq::Device& dev);   // SPIR-V assembly (kernels_vulkan.cpp)
std::string opencl_store_kernel(const std::string& name, int value);  // DeviceEntry::store_kernel

// Base fixture: the device of the parameter, opened once per process and shared by every test.
class DeviceTest : public testing::TestWithParam<const DeviceEntry*> {
 protected:
  void SetUp() override;
  const DeviceEntry& entry() const { return *GetParam(); }
  hcq::Device& dev() const { return *dev_; }
  const Kernels& kernels() const { return *kernels_; }
  // Empty if the device supports f, else the reason it does not.
  std::string unsupported(Feature f) const;

 private:
  hcq::Device* dev_ = nullptr;
  const Kernels* kernels_ = nullptr;
};

}  // namespace sluice::cts

#define CTS_REQUIRE(feature)                                                            \
  do {                                                                                  \
    if (std::string why_ = unsupported(::sluice::cts::Feature::feature); !why_.empty()) \
      GTEST_SKIP() << entry().name << " does not support " #feature ": " << why_;       \
  } while (0)

#define CTS_INSTANTIATE(suite)                                                                 \
  INSTANTIATE_TEST_SUITE_P(Devices, suite, testing::ValuesIn(::sluice::cts::device_entries()), \
                           ::sluice::cts::device_param_name)
