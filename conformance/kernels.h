#pragma once
// The conformance suite's kernels, written once per source language (kernels.cpp; SPIR-V assembly in
// kernels_spirv.cpp). Every language's version computes the same thing over the flattened global
// work-item index g, so a launch of any shape touches elements 0 .. count-1 (int32 elements):
//   fill   bufs {out}, vars {base}: out[g] = base + g
//   add    bufs {out, in}, vars {k}: out[g] = in[g] + k
//   inc    bufs {buf}: buf[g] += 1
//   empty  does nothing
//   spin   bufs {flag}: returns once *flag != 0 (a host pointer; SPIR-V spins on the device clock instead)
//   store  (store_kernel) bufs {out}: out[0] = a value baked into the source
// Ownership: the programs belong to the caller and must be destroyed before their device.
// Failure: load_kernels throws the compiler's hcq::CompileError (SPIR-V: when spirv-as is missing too).
#include <memory>
#include <string>

#include "hcq/device.h"

namespace sluice::conformance {

// The source language a device's compiler takes (the ABI of its renderer, renderers/*.h).
enum class Language { C, OpenCL, SpirvAsm, Cuda, Hip };

struct Kernels {
  std::unique_ptr<hcq::Program> fill, add, inc, empty, spin;
};

// Compiles the five kernels in `lang` on dev (one compile_many) and loads them.
Kernels load_kernels(hcq::Device& dev, Language lang);

// A kernel `name` in `lang` taking bufs {out} that stores `value` into out[0] (layout {1, 0}). Throws
// hcq::Error for SPIR-V, which the suite assembles from text only for its own five kernels.
std::string store_kernel(Language lang, const std::string& name, int value);

}  // namespace sluice::conformance
