#include "core/codegen/codegen.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/codegen/heuristic.h"
#include "core/codegen/linearize.h"
#include "core/codegen/lower.h"
#include "core/codegen/opts.h"
#include "core/codegen/transcendental.h"
#include "core/codegen/vectorize.h"

namespace sluice::codegen {
namespace {

// The reference design's name: "E_" (elementwise) or "r_" (reduction), then the pieces of the iteration
// shape, axis by axis, outer piece first. It colours a piece by its kind; a name has no colours, so a
// letter marks the pieces optimization actions made (l LOCAL, g GROUP, u UPCAST, r UNROLL): without
// actions "E_256_256", with UPCAST 4 on the last axis "E_256_64_4u".
std::string kernel_name(const Plan& p) {
  std::vector<Piece> pieces = p.pieces;
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return a.axis != b.axis ? a.axis < b.axis : a.stride > b.stride;
  });
  std::string name = std::find(p.reduced.begin(), p.reduced.end(), true) == p.reduced.end() ? "E" : "r";
  bool any = false;
  for (const Piece& c : pieces) {
    if (c.size == 1) continue;
    name += "_" + std::to_string(c.size), any = true;
    switch (c.kind) {
      case AxisKind::Local: name += 'l'; break;
      case AxisKind::GroupReduce: name += 'g'; break;
      case AxisKind::Split: name += 's'; break;
      case AxisKind::Upcast: name += 'u'; break;
      case AxisKind::Unroll: name += 'r'; break;
      case AxisKind::Global:
      case AxisKind::Loop: break;
    }
  }
  return any ? name : name + "_1";
}

bool noopt() {
  const char* v = std::getenv("SLUICE_NOOPT");
  return v && *v && std::strcmp(v, "0") != 0;
}

Kernel build(const UOp& ast, const DeviceCaps& caps, const std::vector<Opt>* opts) {
  const Analysis a = analyze(ast);
  Plan plan = make_plan(ast, a.full_shape, a.reduce_axes);
  plan.ast_name = kernel_name(plan);  // messages name the kernel as the AST makes it
  if (opts) {
    for (const Opt& o : *opts) apply_opt(plan, o, caps);
  } else if (!noopt()) {
    apply_heuristic(plan, ast, caps);
  }
  fit_loop_limit(plan, caps);
  Lowered l = lower(ast, plan, caps);
  Kernel k;
  k.name = kernel_name(plan);
  k.full_shape = a.full_shape;
  k.output_shape = a.output_shape;
  k.opts = plan.applied;
  for (size_t d = 0; d < l.global.dims.size() && d < 3; ++d) k.global_size[d] = l.global.dims[d];
  k.local_size = l.local_size;
  k.local_bytes = l.local_bytes;
  if (!caps.accurate_transcendentals) l.sink = rewrite_transcendentals(l.sink);
  // Consecutive accesses come from UPCAST / UNROLL / Split copies; without them the vector pass finds
  // nothing.
  const bool expanded = plan.copies() > 1;
  k.uops =
      linearize(caps.vector_widths.empty() || !expanded ? l.sink : vectorize(l.sink, caps.vector_widths));

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

  // Device limits (issue #4, bad input): the kernel could not be launched.
  SLUICE_CHECK_IN(Error, "make_kernel", int64_t(k.bufs.size()) <= caps.max_buffers)
      << "kernel " << k.name << " takes " << k.bufs.size() << " buffers, over the device's limit of "
      << caps.max_buffers << " (max_buffers)";
  SLUICE_CHECK_IN(Error, "make_kernel", k.local_bytes <= caps.local_bytes)
      << "kernel " << k.name << " needs " << k.local_bytes << " bytes of local memory, over the device's "
      << caps.local_bytes << " (local_bytes)";
  const int64_t items = int64_t(k.local_size[0]) * k.local_size[1] * k.local_size[2];
  SLUICE_CHECK_IN(Error, "make_kernel", items <= caps.max_local_size)
      << "kernel " << k.name << " has work-groups of " << items << " work-items, over the device's "
      << caps.max_local_size << " (max_local_size)";
  for (size_t d = 0; d < 3; ++d)
    SLUICE_CHECK_IN(Error, "make_kernel", k.local_size[d] <= caps.local_max[d])
        << "kernel " << k.name << " has " << k.local_size[d] << " work-items along local dimension " << d
        << ", over the device's " << caps.local_max[d] << " (local_max)";
  return k;
}

}  // namespace

Kernel make_kernel(const UOp& ast, const DeviceCaps& caps) { return build(ast, caps, nullptr); }

Kernel make_kernel(const UOp& ast, const DeviceCaps& caps, const std::vector<Opt>& opts) {
  return build(ast, caps, &opts);
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
