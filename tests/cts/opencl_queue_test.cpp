// OpenCL-only queue behaviour beyond the device-independent suite (backends/opencl/queue.h).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "backends/opencl/device.h"
#if __has_include(<CL/cl.h>)
#include "backends/opencl/driver.h"
#endif
#include "hcq/error.h"

using sluice::hcq::HwQueue;

namespace sluice {
namespace {

std::unique_ptr<hcq::Device> open_cl() {
  if (std::string why = opencl::absent_reason(); !why.empty()) return nullptr;
  return opencl::open_device(0);
}

// A timed-out wait on a queue held behind a host signal says so.
TEST(OpenCLQueue, TimedOutWaitNamesTheSignalABlockedQueueWaitsFor) {
  auto d = open_cl();
  if (!d) GTEST_SKIP() << "CL is absent: " << opencl::absent_reason();
  auto gate = d->new_signal("gate"), out = d->new_signal("out");
  HwQueue().wait(*gate, 1).signal(*out, 1).submit(*d);
  try {
    out->wait(1, std::chrono::milliseconds(20));
    FAIL() << "the wait should time out";
  } catch (const hcq::TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("compute:0 waits for signal 'gate' to reach 1 (value 0)"),
              std::string::npos)
        << e.what();
    // OpenCL cannot stop a kernel: its stalls are described, never reset (ProcessorDevice::why_no_reset).
    EXPECT_NE(std::string(e.what()).find("nothing is reset"), std::string::npos) << e.what();
  }
  gate->set(1);
  out->wait(1);
  d->synchronize();
}

#if __has_include(<CL/cl.h>)
// Driver errors name the code, OpenCL 2.x codes included; an unknown one still shows its number.
TEST(OpenCLLoader, ErrorNamesNameTheCode) {
  EXPECT_EQ(opencl::error_name(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE (-54)");
  EXPECT_EQ(opencl::error_name(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
            "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14)");
  EXPECT_EQ(opencl::error_name(CL_LINK_PROGRAM_FAILURE), "CL_LINK_PROGRAM_FAILURE (-17)");
  EXPECT_EQ(opencl::error_name(-70), "CL_INVALID_DEVICE_QUEUE (-70)");
  EXPECT_EQ(opencl::error_name(-9999), "error -9999");
}
#endif

}  // namespace
}  // namespace sluice
