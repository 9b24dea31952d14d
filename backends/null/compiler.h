#pragma once
// NULL's compiler: the "binary" is the source text; no process runs and nothing is cached.
#include <memory>

#include "hcq/compiler.h"

namespace sluice::null {

std::unique_ptr<hcq::Compiler> make_compiler();

}  // namespace sluice::null
