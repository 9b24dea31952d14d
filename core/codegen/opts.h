#pragma once
// Optimization actions (kernel.h Opt) on a kernel being built: a Plan says, for every piece of the
// kernel's iteration shape F, how it is executed. lower() (lower.h) builds the uops from a Plan.
//
// A Plan starts with one piece per axis of F of size > 1: Global for output axes, Loop for reduced axes.
// An action splits a piece in two: the piece keeps size/arg and a new piece of size arg gets the action's
// kind. The new piece is the inner part of the axis (index = outer * arg + inner), except for GROUPTOP
// where it is the outer part (each work-item reads one contiguous chunk).
//
//   action    on      new piece     meaning
//   UPCAST    Global  Upcast        arg outputs per work-item, unrolled: arg accumulators / stores
//   UNROLL    Loop    Unroll        arg iterations of the reduce loop unrolled into one
//   LOCAL     Global  Local         arg work-items of a work-group along a local dimension (lidxN)
//   GROUP     Loop    GroupReduce   the reduce split across arg work-items; partials in shared memory,
//   GROUPTOP  Loop    GroupReduce     a barrier, then a final reduction over them
//             Loop    Split         without work-groups (a CPU): arg partial accumulators in one work-item's
//                                     registers (vector lanes when the reduce axis is contiguous), summed
//                                     after the loop
//   PADTO     any     (none)        the axis padded up to a multiple of arg; padded elements masked
//
// opt.axis indexes the open pieces: the Global pieces in order, then the Loop pieces (axis numbers stay
// valid after a split, since a split piece keeps its place). arg 0 means the piece's whole size (not for
// PADTO). Rules checked (an invalid action throws OptError naming the action, the rule and the values):
// - the axis exists and has the kind the action applies to; arg > 1 divides the piece's size;
// - LOCAL needs DeviceCaps::has_local; at most 3 local dimensions (Local + GroupReduce pieces); their
//   product <= max_local_size and each <= local_max; GROUP's shared memory (one slot per work-item, per
//   output of a work-item, per reduce) fits local_bytes;
// - UPCAST, UNROLL and Split together expand a work-item at most kMaxUpcast times;
// - PADTO applies to an axis not split yet, pads by something, and at most doubles it.
//
// Pure values; any thread.
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "core/codegen/kernel.h"
#include "core/ir/uop.h"

namespace sluice::codegen {

class OptError : public Error {
 public:
  using Error::Error;
};

enum class AxisKind : uint8_t { Global, Local, Loop, GroupReduce, Split, Upcast, Unroll };

struct Piece {
  int64_t axis;    // the axis of F it indexes
  int64_t size;    // its extent
  int64_t stride;  // index along `axis` = sum over its pieces of piece index * stride
  AxisKind kind;
};

inline constexpr int64_t kMaxUpcast = 256;

struct Plan {
  std::string ast_name;         // for messages ("r_64_128")
  Shape full_shape;             // F
  std::vector<bool> reduced;    // per axis of F
  std::vector<int64_t> padded;  // per axis of F: its size after PADTO (== F's otherwise)
  std::vector<Piece> pieces;    // in creation order; see above
  std::vector<Opt> applied;     // the actions, in order
  int n_reduces = 0;            // REDUCE_AXIS nodes of the kernel (shared-memory slots)
  int itemsize = 4;             // widest reduce dtype (shared-memory slots)

  // The open pieces opt.axis indexes: Global ones, then Loop ones (indices into `pieces`).
  std::vector<size_t> open() const;
  int64_t product(AxisKind k) const;  // the product of the sizes of the pieces of one kind
  bool has(AxisKind k) const { return product(k) > 1; }
  int64_t copies() const;       // the copies of its body a work-item runs: Upcast x Unroll x Split
  int64_t local_bytes() const;  // shared memory GROUP needs
};

// The starting plan of a kernel AST (SINK of STOREs); full_shape and reduced from lower's analysis.
Plan make_plan(const UOp& ast, const Shape& full_shape, const std::vector<int64_t>& reduce_axes);

// Applies one action (see the table above); throws OptError `[opts] <kernel>: <ACTION> ...: <reason>`.
void apply_opt(Plan& plan, const Opt& opt, const DeviceCaps& caps);
// Keeps a work-item's loop iterations, all its loops together, within caps.max_loop: unrolls the innermost
// loop (padding it first, masked as PADTO, where no factor divides it). Throws when that cannot fit.
void fit_loop_limit(Plan& plan, const DeviceCaps& caps);

const char* opt_name(OptOp op);  // "UPCAST", "GROUPTOP", ...

}  // namespace sluice::codegen
