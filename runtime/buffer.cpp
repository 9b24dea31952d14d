#include "runtime/buffer.h"

#include "base/error.h"

namespace sluice {

void attach_host_buffer(const UOp& buffer, std::shared_ptr<const HostBuffer> host) {
  SLUICE_ASSERT(buffer.op() == Op::Buffer && buffer.dtype() == host->dtype && buffer.numel() == host->size);
  SLUICE_ASSERT(int64_t(host->bytes.size()) == host->size * host->dtype.itemsize());
  // The payload slot is untyped and mutable; the HostBuffer stays const to every reader.
  buffer.buffer_identity().set_payload(std::const_pointer_cast<HostBuffer>(std::move(host)));
}

std::shared_ptr<const HostBuffer> host_buffer(const UOp& buffer) {
  SLUICE_ASSERT(buffer.op() == Op::Buffer);
  // HostBuffer is, for now, the only payload type (see buffer.h).
  return std::static_pointer_cast<const HostBuffer>(buffer.buffer_identity().payload());
}

}  // namespace sluice
