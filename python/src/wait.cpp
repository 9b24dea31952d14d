// Waiting on a device from Python. A runtime wait (hcq::Device::synchronize()) blocks in C++ for as long
// as the work advances; holding the GIL there would stop every other Python thread, and with it released
// but never returning, Ctrl-C would only land once the kernel finished. So the wait here is the same wait
// cut into short timed slices: the GIL is released for each slice and taken back between them to run
// Python's signal handlers. The give-up rule stays the runtime's: a hang is declared by the device when a
// timed wait asks it to explain the stall, and a wait on work that shows no progress for
// max(kDefaultTimeout, hang timeout) while the device runs nothing it watches ends with the untimed wait's
// own TimeoutError.
#include <algorithm>
#include <chrono>

#include "bindings.h"
#include "hcq/device.h"
#include "hcq/error.h"
#include "runtime/device.h"

namespace sluice::python {

namespace {

constexpr std::chrono::milliseconds kSlice{50};

void wait_interruptibly(hcq::Device& dev) {
  const uint64_t target = dev.timeline_value();
  uint64_t seen = dev.timeline().value();
  auto last_progress = std::chrono::steady_clock::now();
  const auto give_up = std::max<std::chrono::nanoseconds>(hcq::kDefaultTimeout, dev.hang_timeout());
  for (;;) {
    {
      py::gil_scoped_release nogil;
      try {
        dev.timeline().wait(target, kSlice);
        return;
      } catch (const hcq::TimeoutError&) {
        // Not done yet. A stall long enough to give up on: let the untimed wait raise its own error.
        uint64_t now_value = dev.timeline().value();
        auto now = std::chrono::steady_clock::now();
        if (now_value != seen) {
          seen = now_value;
          last_progress = now;
        } else if (now - last_progress > give_up && !dev.busy()) {
          dev.synchronize();
          return;
        }
      }
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

}  // namespace

void wait_for_device(const std::string& device) { wait_interruptibly(open_device(device)); }

void realize_and_wait(Tensor& t) {
  {
    py::gil_scoped_release nogil;  // scheduling and compiling take a while; other threads run meanwhile
    t.realize();
  }
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  wait_for_device(t.device());
}

}  // namespace sluice::python
