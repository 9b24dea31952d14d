#pragma once
// The reference evaluator for one kernel AST (core/schedule/schedule.h, "KERNEL AST FORMAT"): the values a
// kernel must store, computed element by element from the AST and the host contents of its buffers. It
// shares nothing with codegen (no plan, no lowering, no index simplification, no renderer): a View maps
// an index to a buffer position by its own definition (offset + index . strides, valid inside the mask,
// each later view indexing the row-major elements of the one before), so a kernel built with any
// optimization actions can be checked against it (BEAM search checks its winners this way).
//
// Arithmetic is the evaluator's (evaluator.h): floats in double without rounding per op, a CAST rounds;
// integers wrap; an element computed from an undefined result (exec_alu/exec_cast give nullopt) is
// undefined. Masked loads and constants read 0.
//
// Cost: one walk of the value tree per reduce element per requested output element, so callers choose the
// output elements to check (all of a small kernel, a sample of a large one). Pure; any thread.
// Failures: ValueError `[evaluate_kernel] ...` for an AST outside the format, a missing or short buffer,
// or a position outside its buffer.
#include <cstdint>
#include <span>
#include <vector>

#include "core/eval/evaluator.h"
#include "core/ir/uop.h"

namespace sluice::eval {

struct KernelValue {
  size_t buffer = 0;     // the DEFINE_GLOBAL the STORE writes (an output: ScheduleItem::bufs index)
  int64_t position = 0;  // the element of that buffer
  Scalar64 value;        // in the buffer's dtype's kind (float: .f, else .i)
  bool defined = true;
};

// For each STORE of `ast` and each flat index into its output shape listed in `elements`: the value the
// kernel writes there, or nothing where the store's view is masked. `bufs[i]` is the flat contents of
// DEFINE_GLOBAL i (outputs may be empty unless the kernel reads them).
std::vector<KernelValue> evaluate_kernel(const UOp& ast, std::span<const HostArray> bufs,
                                         std::span<const int64_t> elements);

}  // namespace sluice::eval
