#pragma once
// What a kernel does, estimated from its linear uops (kernel.h), for SLUICE_DEBUG's GFLOP/s and GB/s
// (base/debug.h) as the reference design estimates them.
//   flops  the ALU ops on the data path (what feeds a STORE or an accumulator, not index arithmetic), each
//          counted once per lane (MULACC twice), times the iterations of its enclosing loops, times the
//          work-items of a launch; masked-off (padded) elements count as well
//   bytes  every buffer the kernel takes, its whole size once (read, written or both)
// Pure; any thread.
#include <cstdint>

#include "core/codegen/kernel.h"

namespace sluice::codegen {

struct Estimate {
  uint64_t flops = 0, bytes = 0;
};

Estimate estimate(const Kernel& k);

}  // namespace sluice::codegen
