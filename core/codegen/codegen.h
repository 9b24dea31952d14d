#pragma once
// codegen: one ScheduleItem AST to a linear Kernel (kernel.h): lower (lower.h), linearize (linearize.h),
// then the launch description a runtime needs. Optimizations (opts) are not applied yet.
#include <string>

#include "core/codegen/kernel.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

// The kernel of a compute AST (SINK of STOREs). Its name follows the reference design: "E_" for
// elementwise kernels, "r_" for reductions, then the sizes of its full shape ("E_4_4", "r_64_128");
// names are unique only per call: see KernelNamer. Throws Error `[lower] ...` for a COPY or a bad AST.
Kernel make_kernel(const UOp& ast, const DeviceCaps& caps = {});

// Makes kernel names unique within one program (one compiled batch): the second "E_4" becomes "E_4n1".
class KernelNamer {
 public:
  std::string unique(const std::string& name);

 private:
  std::vector<std::pair<std::string, int>> seen_;
};

}  // namespace sluice::codegen
