#pragma once
// The NULL device: accepts every command and completes it at once, on the submitting thread. Signals are
// written during submit, waits never block, kernels and copies do nothing (buffers have no contents).
// It measures the host-side cost of the stack and is the smallest complete backend: device (this file),
// allocator (addresses without memory), compiler (no compiler process); it needs no program, queue or
// signal files of its own, because hcq::Program, the recorded HwQueue and the host-word hcq::Signal serve.
#include <memory>

#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice::null {

// Named "NULL" for ordinal 0, "NULL:<n>" otherwise. One compute queue and one copy queue.
std::unique_ptr<hcq::Device> open_device(int ordinal = 0);
// How kernels for a device of this backend are built and rendered (the CPU's C: NULL compiles nothing, but
// the path to it is the real one).
render::Target target(const hcq::Device& dev);

}  // namespace sluice::null
