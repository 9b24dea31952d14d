#pragma once
// kernelize / schedule: the tensor graph cut into kernels (DESIGN.md §2, "Schedule").
//
// What becomes a kernel (the rules of the reference design's scheduler, v0.10):
// - Elementwise ops fuse into their consumer; a node read by two kernels is recomputed by each.
// - Realize points (a kernel stores them to memory): the outputs, CONTIGUOUS, ASSIGN, COPY (and the source
//   of a COPY); a computed node read through an EXPAND that makes it larger (realize before expand, so the
//   expanded read does not recompute it per element) unless it reads no memory at all (elementwise ops on
//   constants, such as an arange or a causal mask: a few ALU ops per element cost less than a store and a
//   load); a computed node read through a padding its ops cannot take (RECIP, LOG2, EXP2, FDIV, IDIV, MOD
//   would make the padded zeros nonzero).
// - One reduction shape per kernel: a reduce fuses with its elementwise consumers up to the next realize
//   point when every path there is a plain reshape of the reduce result; a path to another reduce, or a
//   view that is not a reshape, realizes the reduce (or the elementwise chain below it that ends in such a
//   view). Several realized consumers of one reduce share its kernel (a multi-output kernel) when no other
//   reduction feeds them. Reductions of the same input shape over the same axes that feed one stored node
//   share its kernel (a.sum() / b.sum() is one loop).
// - Before grouping, the graph is constant-folded (core/schedule/fold.h: x*1, x+0, ops on constants,
//   reduces of constants, DETACH, ...), and nothing unreachable from the outputs is scheduled.
// - An output that is a realized buffer, or a view of one, needs no kernel (as in the reference design: a
//   caller that needs it dense asks for .contiguous()); an output that is a constant is stored by a kernel
//   (the runtime needs memory to read it from).
// - Kernels are in topological order, and a kernel that reads a buffer comes before the kernel that ASSIGNs
//   to that buffer in place. A kernel that writes a buffer in place may read it only at the element it
//   writes (`a.assign(a + 1)`); any other read of it throws Error ("use .contiguous()").
//
// KERNEL AST FORMAT (what codegen consumes). A compute kernel is
//   SINK(STORE(DEFINE_GLOBAL, VIEW, value), ...)      one STORE per output, in the order of bufs
// - DEFINE_GLOBAL: dtype = the buffer's dtype .ptr(AddrSpace::Global, size in elements), arg = int64 i:
//   the kernel's i-th buffer (ScheduleItem::bufs[i]). Outputs are 0..n_out-1, inputs follow in the order
//   they are first read. A buffer written in place (ASSIGN) is read through its output DEFINE_GLOBAL.
// - VIEW: no sources, arg = a ShapeTracker (std::shared_ptr<const ArgObject> holding a ShapeTracker). Its
//   views.front() indexes the buffer (elements, not bytes); its shape is a kernel shape: every VIEW of a
//   kernel has the same number of axes. A kernel without a reduction has one shape (the output's). A
//   kernel with a reduction has a full shape F (the reduce input's) and an output shape O (F with the
//   reduced axes 1): VIEWs below a REDUCE_AXIS have shape F, the STORE's and everything above have O.
// - value is a tree of:
//     LOAD(DEFINE_GLOBAL, VIEW)      dtype = the buffer's dtype; where the VIEW's mask is false: 0
//     CONST(VIEW)                    dtype and arg as UOp::const_ (the value); where the VIEW's mask is
//                                    false: 0
//     ALU ops, CAST, BITCAST         as in the tensor graph (sources of one kernel shape)
//     REDUCE_AXIS(x)                 arg = ReduceArg{ADD|MUL|MAX, axes of F it reduces}; its source has
//                                    shape F, it has shape O. A kernel may hold several, all over the same
//                                    axes (their ops may differ): one loop computes them all.
//   Movement ops never appear: they are folded into the LOAD/CONST/STORE ShapeTrackers. Padding a
//   computed value pads its leaves: codegen computes the ops on the masked (zero) leaves, which the
//   realize rule above keeps exact.
// A COPY kernel is COPY(DEFINE_GLOBAL arg=0, DEFINE_GLOBAL arg=1), dtype = the element dtype, arg = int64
// byte count: copy all of bufs[1] (the source) into bufs[0] (the destination, on the destination device).
//
// Threading: functions of the graph, callable from any thread (the only state they keep is a per-thread
// memo of VIEW nodes, core/schedule/views.h); the BUFFERs they create are new UOps like any other.
// Errors: sluice::Error naming "[schedule]", for graphs that cannot be scheduled (an op that is not
// tensor-level, an assign to something that is not a buffer, an in-place write its own kernel reads
// elsewhere, a kernel that reads a buffer both before and after an in-place write to it).
#include <string>
#include <utility>
#include <vector>

#include "core/ir/uop.h"

namespace sluice {

struct ScheduleItem {
  UOp ast;                // SINK of STOREs (or a COPY), see above
  std::vector<UOp> bufs;  // BUFFER uops: outputs first, then inputs; DEFINE_GLOBAL arg i is bufs[i]
  std::vector<std::string> metadata;  // names of the tensor ops fused into it (the tags of its nodes,
                                      // deduped, sources before users; views of inputs are not ops of it)
};

struct Schedule {
  std::vector<ScheduleItem> items;  // topological order, reads before an in-place write
  // Each output that is not already in its realized form -> that form: the BUFFER it was stored into,
  // reshaped to the shape of the node that was stored, then viewed by the output's own movement ops (an
  // output that is a view of a computed node is that view of the node's buffer, as in the reference
  // design). An ASSIGN output becomes its target (the buffer, viewed as the target was).
  std::vector<std::pair<UOp, UOp>> becomes;
};

Schedule schedule(const std::vector<UOp>& outputs);

// The tensor graph with kernels made explicit, as the reference design's kernelize (seed 000): each output
// comes back in its realized form (as in Schedule::becomes) with every stored BUFFER replaced by
// ASSIGN(BUFFER, KERNEL(srcs...)). KERNEL's arg is a KernelInfo; its first num_bufs sources are the
// kernel's buffers (as ScheduleItem::bufs, where an input written by another kernel of the graph is that
// kernel's ASSIGN(BUFFER, KERNEL) node), the rest are ASSIGN(BUFFER, KERNEL) nodes of kernels that must run
// before it although it does not read their output (readers of a buffer before its in-place write).
// schedule() of a kernelized graph (or a graph holding one) schedules those KERNELs as they are.
std::vector<UOp> kernelize(const std::vector<UOp>& outputs);

// The arg of a KERNEL node.
struct KernelInfo final : ArgObject {
  UOp ast;
  std::vector<std::string> metadata;
  size_t num_bufs = 0;

  KernelInfo(UOp ast, std::vector<std::string> metadata, size_t num_bufs)
      : ast(std::move(ast)), metadata(std::move(metadata)), num_bufs(num_bufs) {}
  size_t hash() const override;
  bool equals(const ArgObject& other) const override;
  std::string str() const override;  // <Kernel 12 SINK(STORE, ...) (softmax, matmul)>
};

std::string ast_str(const ScheduleItem& item);  // for SLUICE_DEBUG=3: the AST in the tree notation (UOp::str)

}  // namespace sluice
