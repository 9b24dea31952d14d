#pragma once
// codegen: one ScheduleItem AST to a linear Kernel (kernel.h): analyze and plan (opts.h), apply
// optimization actions (given, or the hand-coded heuristic of heuristic.h), lower (lower.h), linearize
// (linearize.h), then the launch description a runtime needs.
#include <string>
#include <vector>

#include "core/codegen/kernel.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

// The kernel of a compute AST (SINK of STOREs) with the heuristic's actions for caps (none when the
// environment sets SLUICE_NOOPT=1). Its name follows the reference design: "E_" for elementwise kernels,
// "r_" for reductions, then the sizes of its full shape ("E_4_4", "r_64_128"), split as the optimization
// actions split it, each piece an action made marked by a letter (l LOCAL, g GROUP, u UPCAST, r UNROLL:
// "E_4_2_2u"); names are unique only per call: see KernelNamer. Throws Error `[lower] ...` for a COPY or a
// bad AST, and Error `[make_kernel] ...` naming the kernel, the limit and the value when the kernel exceeds
// a device limit (buffers, local memory, work-group size).
Kernel make_kernel(const UOp& ast, const DeviceCaps& caps = {});
// The same with exactly the given actions, applied in order; an invalid one throws OptError (opts.h).
Kernel make_kernel(const UOp& ast, const DeviceCaps& caps, const std::vector<Opt>& opts);

// Makes kernel names unique within one program (one compiled batch): the second "E_4" becomes "E_4n1".
class KernelNamer {
 public:
  std::string unique(const std::string& name);

 private:
  std::vector<std::pair<std::string, int>> seen_;
};

}  // namespace sluice::codegen
