#pragma once
// HostBuffer: the staging copy of a buffer created from host data (Tensor::from). It hangs on the BUFFER's
// Identity payload, so it lives exactly as long as some graph refers to the buffer. Until devices allocate
// memory (a later issue: lazy allocation and copy-in), this is the only storage a buffer has, and the
// reference evaluator reads inputs from it. Immutable once attached: any thread may read it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/uop.h"

namespace sluice {

struct HostBuffer {
  DType dtype;
  int64_t size = 0;              // elements
  std::vector<std::byte> bytes;  // size * dtype.itemsize() bytes, native layout (half/bf16 as their bits)
};

// Attaches `host` to `buffer` (a BUFFER node of the same dtype and size) as its payload.
void attach_host_buffer(const UOp& buffer, std::shared_ptr<const HostBuffer> host);
// The HostBuffer attached to a BUFFER node, or nullptr when it has none (an empty() buffer, or the output of
// a kernel). The shared_ptr keeps it alive independently of the graph.
std::shared_ptr<const HostBuffer> host_buffer(const UOp& buffer);

}  // namespace sluice
