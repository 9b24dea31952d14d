#pragma once
// The search space of BEAM search (runtime/beam.h): the kernels one optimization action away from a list
// of actions already applied. The actions are the reference design's (every action below on every open
// axis), with the wider UPCASTs a CPU's 16-lane vectors use:
//
//   UPCAST    0 (whole axis), 2, 3, 4, 5, 7, 8, 16
//   UNROLL    0, 4, 7, 8
//   LOCAL     2, 3, 4, 8, 13, 16, 29, 32
//   GROUPTOP  13, 16, 28, 29, 32, 49, 64, 256
//   GROUP     0, 4, 8, 16
//   PADTO     32
//
// apply_opt (opts.h) rejects what a device cannot run (work-groups where it has none, too many upcasts,
// local memory), so one table serves every device. Pure; any thread.
#include <string>
#include <vector>

#include "core/codegen/kernel.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

// The action table above, for a kernel with `open_axes` open axes (opts.h, Plan::open).
std::vector<Opt> search_actions(size_t open_axes);

struct Candidate {
  std::vector<Opt> opts;  // `base` and one more action
  Kernel kernel;          // make_kernel(ast, caps, opts)
};

// Every kernel one action beyond `base` (which must be valid for ast and caps), in table order. Two
// action lists that split the kernel into the same pieces give one candidate (the first). Actions that
// apply_opt or make_kernel reject are left out.
std::vector<Candidate> next_candidates(const UOp& ast, const DeviceCaps& caps, const std::vector<Opt>& base);

// "UPCAST axis 1 arg 4, LOCAL axis 0 arg 16", or "no opts"; parse_opts reads it back (and "" as no
// actions), throwing ValueError `[parse_opts] ...` that quotes the text it cannot read.
std::string opts_str(const std::vector<Opt>& opts);
std::vector<Opt> parse_opts(const std::string& s);

}  // namespace sluice::codegen
