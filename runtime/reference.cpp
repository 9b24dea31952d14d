#include "runtime/reference.h"

#include "base/error.h"
#include "runtime/buffer.h"

namespace sluice {

eval::HostArray read_host_buffer(const UOp& buffer) {
  std::shared_ptr<const HostBuffer> host = host_buffer(buffer);
  SLUICE_CHECK_IN(ValueError, "reference", host)
      << "buffer " << buffer.buffer_identity().id() << " (" << buffer.numel() << " " << buffer.dtype().name()
      << " on " << buffer.device() << ") has no host data to read";
  return eval::HostArray::from_bytes(host->dtype, {host->size}, host->bytes);
}

eval::HostArray reference(const Tensor& t) { return eval::evaluate(t.uop(), read_host_buffer); }

}  // namespace sluice
