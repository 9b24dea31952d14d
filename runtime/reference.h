#pragma once
// The reference value of a tensor: its graph evaluated on the host by the reference evaluator (core/eval),
// independent of scheduling, codegen and devices. Every op test of every device compares against it.
#include "core/eval/evaluator.h"
#include "runtime/tensor.h"

namespace sluice {

// t's value, reading each buffer from its device memory when it has some (a realized tensor), else from the
// host data it was created from (runtime/buffer.h). Throws ValueError naming the buffer when it has
// neither (Tensor::empty).
eval::HostArray reference(const Tensor& t);

// The reader reference() uses, for evaluating graphs built from tensors' UOps by hand.
eval::HostArray read_host_buffer(const UOp& buffer);

}  // namespace sluice
