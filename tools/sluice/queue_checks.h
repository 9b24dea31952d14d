#pragma once
// The queue conformance checks (what tests/cts checks, as a table a command line can run on any device):
// signals on every compute and copy queue, waits, exec, resubmission, patching, copies, timestamps,
// barriers, 64-bit values past 2^32, cross-device waits, timeouts, failure propagation, concurrent
// submitters and graph replay. Each check throws on failure (the message says what was wrong) and
// throws SkipCheck when the device lacks what it needs (one copy queue, a second device).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hcq/device.h"
#include "tools/sluice/kernels.h"

namespace sluice::cli {

class SkipCheck : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckContext {
  std::string device;  // registry name
  hcq::Device& dev;
  const Add1Kernel& add1();  // n = kAdd1Elements, compiled on first use

  static constexpr uint32_t kAdd1Elements = 1024;
  std::unique_ptr<Add1Kernel> add1_;
};

struct QueueCheck {
  const char* name;  // "queue/signal_compute"
  void (*run)(CheckContext&);
};
const std::vector<QueueCheck>& queue_checks();

}  // namespace sluice::cli
