#pragma once
// render::Renderer — a linear kernel (core/codegen/kernel.h) to what the device's compiler takes: source
// text (the C-style dialects, cstyle.h) or a binary module (SPIR-V words, little-endian bytes, spirv.h).
// A Target is a renderer plus the capabilities codegen assumes while building kernels for it: a backend
// describes each of its devices as one Target (backends/<x>/device.h `target`).
//
// Rendering is a pure function of the kernel; a renderer is immutable and usable from any thread.
// Failures: Error `[render] ...` for dtypes or ops the language cannot express.
#include <memory>
#include <string>

#include "core/codegen/kernel.h"

namespace sluice::render {

class Renderer {
 public:
  virtual ~Renderer() = default;
  // The program of one kernel, defining an entry point named k.name.
  virtual std::string render(const codegen::Kernel& k) const = 0;
};

struct Target {
  std::shared_ptr<const Renderer> renderer;
  codegen::DeviceCaps caps;
};

}  // namespace sluice::render
