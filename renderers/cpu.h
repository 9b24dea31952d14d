#pragma once
// The CPU dialect of C: one function per kernel in the ABI of backends/cpu/program.h, walking its core's
// share of the flattened grid. Only compiler builtins, no headers, so kernels of a batch concatenate into
// one translation unit (hcq::Compiler::compile_many).
#include <memory>

#include "renderers/cstyle.h"

namespace sluice::render {

std::unique_ptr<CStyleRenderer> make_cpu_renderer();

}  // namespace sluice::render
