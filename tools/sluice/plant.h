#pragma once
// TEST-ONLY fault injection for the conformance sweep's own tests (tests/cli): with
// $SLUICE_CONFORMANCE_PLANT set, every kernel the sweep renders gets a planted bug appended to its body,
// so the test can check that the sweep catches it and exits non-zero:
//   wrong  element 0 of output 0 gets a wrong value (its most significant byte set to 0x7f)
//   oob    the byte just past the end of output 0 is written (the guard bytes around it catch it)
// Only C-style CPU kernels (the CPU and NULL devices' renderer) can be planted; elsewhere the variable is
// an error. Never set it outside the tests.
#include <optional>
#include <string>

#include "renderers/renderer.h"

namespace sluice::cli {

// The target, decorated when $SLUICE_CONFORMANCE_PLANT asks for it. Throws std::runtime_error for an
// unknown value.
render::Target planted_target(render::Target target, const std::string& device);

}  // namespace sluice::cli
