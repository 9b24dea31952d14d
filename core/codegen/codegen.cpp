#include "core/codegen/codegen.h"

#include <algorithm>

#include "core/codegen/linearize.h"
#include "core/codegen/lower.h"

namespace sluice::codegen {

Kernel make_kernel(const UOp& ast, const DeviceCaps& caps) {
  Lowered l = lower(ast, caps);
  Kernel k;
  k.full_shape = l.full_shape;
  k.output_shape = l.output_shape;
  for (size_t d = 0; d < l.global.dims.size() && d < 3; ++d) k.global_size[d] = l.global.dims[d];
  k.uops = linearize(l.sink);

  for (const UOp& u : k.uops) {
    if (u.op() == Op::DefineGlobal) {
      const size_t i = size_t(u.arg_as<int64_t>());
      if (k.bufs.size() <= i) k.bufs.resize(i + 1);
      k.bufs[i].dtype = u.dtype().deref();
      k.bufs[i].size = u.dtype().ptr_size;
    } else if ((u.op() == Op::Load || u.op() == Op::Store) && u.src(0).src(0).op() == Op::DefineGlobal) {
      KernelBuffer& b = k.bufs[size_t(u.src(0).src(0).arg_as<int64_t>())];
      (u.op() == Op::Load ? b.read : b.written) = true;
    }
  }

  k.name = l.reduce_axes.empty() ? "E" : "r";
  bool any = false;
  for (int64_t s : k.full_shape)
    if (s != 1) k.name += "_" + std::to_string(s), any = true;
  if (!any) k.name += "_1";
  return k;
}

std::string KernelNamer::unique(const std::string& name) {
  auto it = std::find_if(seen_.begin(), seen_.end(), [&](const auto& p) { return p.first == name; });
  if (it == seen_.end()) {
    seen_.emplace_back(name, 0);
    return name;
  }
  return name + "n" + std::to_string(++it->second);
}

}  // namespace sluice::codegen
