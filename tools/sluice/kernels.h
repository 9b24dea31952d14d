#pragma once
// The kernel the queue checks and latency probes launch, built through the device's own pipeline (codegen
// + its backend's renderer + its compiler), so every backend runs it without hand-written sources:
// `out[i] = in[i] + 1` over n int32 elements. Launched with out == in it increments a buffer in place,
// which makes resubmission and graph replay countable.
// Ownership: the program belongs to the caller and must be destroyed before its device.
#include <memory>
#include <string>

#include "hcq/device.h"

namespace sluice::cli {

struct Add1Kernel {
  std::unique_ptr<hcq::Program> program;
  hcq::Dims global, local;
  uint32_t n = 0;
  uint32_t out_arg = 0, in_arg = 1;  // positions of the buffers in the kernel's arguments

  hcq::KernelArgs args(uint64_t out, uint64_t in) const;
};

// Compiles and loads the kernel for `device` (a registry name) over n elements.
Add1Kernel make_add1_kernel(const std::string& device, uint32_t n);

}  // namespace sluice::cli
