#include "tests/cts/devices.h"

#include <mutex>

#include "backends/cpu/compiler.h"
#include "backends/cpu/device.h"
#include "backends/null/compiler.h"
#include "backends/null/device.h"

namespace sluice::cts {

const std::vector<const DeviceEntry*>& device_entries() {
  static const DeviceEntry cpu{
      "CPU",
      [](int ordinal) { return cpu::open_device(ordinal); },
      [](const std::filesystem::path& dir) { return cpu::make_compiler(dir); },
      {},
      load_c_kernels,
  };
  static const DeviceEntry null{
      "NULL",
      [](int ordinal) { return null::open_device(ordinal); },
      [](const std::filesystem::path&) { return null::make_compiler(); },
      {
          {Feature::Execution, "NULL runs no kernels and copies nothing: buffers have no contents to check"},
          {Feature::BlockingWaits,
           "NULL completes every command at submit: a queue's wait never holds anything back"},
          {Feature::DiskCache, "NULL's compiler runs no process and caches nothing"},
      },
      load_c_kernels,
  };
  static const std::vector<const DeviceEntry*> entries = {&cpu, &null};
  return entries;
}

std::string device_param_name(const testing::TestParamInfo<const DeviceEntry*>& info) {
  return info.param->name;
}

namespace {
struct Shared {
  std::unique_ptr<hcq::Device> dev;  // declared first: destroyed after the programs that refer to it
  Kernels kernels;
  std::string error;  // why the device could not be opened
};
}  // namespace

void DeviceTest::SetUp() {
  static std::mutex mu;
  static std::map<std::string, Shared> shared;
  std::lock_guard lk(mu);
  Shared& s = shared[entry().name];
  if (!s.dev && s.error.empty()) {
    try {
      s.dev = entry().open(0);
      s.kernels = entry().load_kernels(*s.dev);
    } catch (const std::exception& e) {
      s.error = e.what();
      s.dev.reset();
    }
  }
  if (!s.dev) GTEST_SKIP() << entry().name << " is absent: " << s.error;
  dev_ = s.dev.get();
  kernels_ = &s.kernels;
}

std::string DeviceTest::unsupported(Feature f) const {
  auto it = entry().unsupported.find(f);
  return it == entry().unsupported.end() ? std::string() : it->second;
}

}  // namespace sluice::cts
