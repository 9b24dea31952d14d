#pragma once
// The reference value of a tensor: its graph evaluated on the host by the reference evaluator (core/eval),
// independent of scheduling, codegen and devices. Every op test of every device compares against it.
#include "core/eval/evaluator.h"
#include "runtime/tensor.h"

namespace sluice {

// t's value, reading each buffer from the host data it was created from (HostBuffer, runtime/buffer.h).
// Throws ValueError naming the buffer when one has no host data (Tensor::empty, or a kernel's output).
eval::HostArray reference(const Tensor& t);

// The reader reference() uses, for evaluating graphs built from tensors' UOps by hand.
eval::HostArray read_host_buffer(const UOp& buffer);

}  // namespace sluice
