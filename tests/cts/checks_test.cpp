// Every queue check of the conformance library (conformance/check.h) on every device of its table
// (conformance/devices.h), one GoogleTest test each, named `queue.<check>/<DEVICE>`: `ctest -L cts` runs
// exactly the checks `sluice conformance --suite queue` runs, with the same expectations table. Each
// device is opened once per process and its kernels loaded once, shared by every check; an absent device
// skips with the reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#if __has_include(<vulkan/vulkan.h>)
#include "backends/vulkan/driver.h"
#endif
#include "conformance/check.h"
#include "conformance/devices.h"

namespace sluice::conformance {
namespace {

// One device of each kind for the whole process, and the context its checks share.
struct Shared {
  std::unique_ptr<hcq::Device> dev;  // declared first: destroyed after the context's programs
  std::unique_ptr<Context> ctx;
  std::string error;  // why the device could not be opened
};

std::map<std::string, Shared> g_shared;

Context* context(const DeviceEntry& e, std::string& why) {
  Shared& s = g_shared[e.kind];
  if (!s.dev && s.error.empty()) {
    try {
      s.dev = e.open(0);
      s.ctx = std::make_unique<Context>(e, *s.dev, e.kind);
    } catch (const std::exception& x) { s.error = x.what(); }
  }
  why = s.error;
  return s.ctx.get();
}

class CheckTest : public testing::Test {
 public:
  CheckTest(const Check& check, const DeviceEntry& entry) : check_(check), entry_(entry) {}
  void TestBody() override {
    std::string why;
    Context* ctx = context(entry_, why);
    if (!ctx) GTEST_SKIP() << entry_.kind << " is absent: " << why;
    const Verdict v = run_check(check_, *ctx);
    if (v.status == CaseStatus::Skip || v.status == CaseStatus::XFail)
      GTEST_SKIP() << entry_.kind << ": " << v.detail;
    if (v.status != CaseStatus::Pass)
      FAIL() << entry_.kind << " " << check_.name << ": " << case_status_name(v.status) << ": " << v.detail;
  }

 private:
  const Check& check_;
  const DeviceEntry& entry_;
};

// Registered from main: the tables are other files' statics, which static
// initialization may not have reached yet.
}  // namespace

void register_checks() {
  // The suite runs VULKAN under the Khronos validation layer (SLUICE_VULKAN_VALIDATION=0 in the environment
  // turns it off), so it is set before any device opens.
  ::setenv("SLUICE_VULKAN_VALIDATION", "1", 0);
  for (const Check& c : checks())
    for (const DeviceEntry* e : device_entries()) {
      const std::string name = c.name;  // "queue/exec" -> queue.exec/CPU
      const size_t slash = name.find('/');
      testing::RegisterTest(name.substr(0, slash).c_str(), (name.substr(slash + 1) + "/" + e->kind).c_str(),
                            nullptr, nullptr, __FILE__, __LINE__,
                            [&c, e]() -> testing::Test* { return new CheckTest(c, *e); });
    }
}

namespace {

// Closes the devices once every test ran, while the drivers and layers they call are still loaded (at
// exit they may not be); then fails the run if the Vulkan validation layer reported any error (driver.h
// counts them; with the layer off the count stays 0).
class CloseDevices : public testing::Environment {
 public:
  void TearDown() override {
    g_shared.clear();
#if __has_include(<vulkan/vulkan.h>)
    EXPECT_EQ(vulkan::validation_errors(), 0u) << "Vulkan validation errors (printed above as they happened)";
#endif
  }
};
const auto* const kCloseDevices = testing::AddGlobalTestEnvironment(new CloseDevices);

}  // namespace
}  // namespace sluice::conformance

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  sluice::conformance::register_checks();
  return RUN_ALL_TESTS();
}
