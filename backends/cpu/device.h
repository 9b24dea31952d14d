#pragma once
// The CPU device: a real command-queue device in host memory (DESIGN.md §4). Each hardware queue is
// hcq's command processor, whose worker thread runs each command as it walks the packets (queue.h); kernels
// are C compiled by clang (compiler.h) and run on a pool of threads sized to the machine (program.h has the
// kernel ABI); buffers are host memory (allocator.h); signals are hcq's host-memory words.
//
// Queues: compute queue 0 (kernels, copies) and copy queue 0 (copies on their own thread), running
// concurrently. A kernel that never returns is handled as device.h describes: once it has run past
// hang_timeout() and a wait times out, its queue is abandoned and replaced; the stuck threads finish in
// the background (or never), and the process carries on.
#include <memory>
#include <string>

#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice::cpu {

// Named "CPU" for ordinal 0, "CPU:<n>" otherwise. Every ordinal is a separate device over the same
// host: its own queues, threads, timeline and allocator.
std::unique_ptr<hcq::Device> open_device(int ordinal = 0);
// Why the CPU device cannot run kernels here ("" when it can): no clang to compile them (compiler.h).
std::string absent_reason();
// How kernels for a device of this backend are built and rendered (renderers/cpu.h; codegen's defaults
// describe the CPU).
render::Target target(const hcq::Device& dev);

}  // namespace sluice::cpu
