#include "runtime/reference.h"

#include "base/error.h"
#include "runtime/buffer.h"

namespace sluice {

eval::HostArray read_host_buffer(const UOp& buffer) {
  return eval::HostArray::from_bytes(buffer.dtype(), {buffer.arg_as<int64_t>()},
                                     read_buffer_bytes(buffer, "reference"));
}

eval::HostArray reference(const Tensor& t) { return eval::evaluate(t.uop(), read_host_buffer); }

}  // namespace sluice
