#pragma once
// Building one kernel's AST (internal to core/schedule; the format is documented in schedule.h).
#include <cstdint>
#include <string>
#include <vector>

#include "core/schedule/graph.h"
#include "core/schedule/grouping.h"

namespace sluice::sched {

struct KernelAst {
  UOp ast;
  std::vector<UOp> bufs;  // BUFFER uops, outputs first (DEFINE_GLOBAL arg i is bufs[i])
  size_t num_outputs = 0;
  std::vector<uint32_t> inputs;  // per input buffer (bufs[num_outputs + i]): the node whose value it holds
  std::vector<uint32_t> reads;   // every node it loads (a realized node, or a leaf), first read first
  std::vector<std::string> metadata;
};

// The AST of each kernel. buffer_of[n] is the BUFFER holding realized node (or leaf) n (null elsewhere).
// Throws Error for an in-place write whose kernel reads the buffer at another element, or an ASSIGN whose
// target is not a buffer.
std::vector<KernelAst> build_asts(Graph& g, const std::vector<KernelPlan>& plans,
                                  const std::vector<UOp>& buffer_of);

// How realized node (or leaf) n lies in its buffer: null for dense (a new buffer, a BUFFER leaf), else the
// VIEW of an ASSIGN's target on its buffer.
UOp layout(Graph& g, uint32_t n);

}  // namespace sluice::sched
