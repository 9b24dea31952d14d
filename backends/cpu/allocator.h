#pragma once
// The CPU allocator: host memory, 64-byte aligned; a buffer's address is its host pointer.
#include <memory>

#include "hcq/allocator.h"

namespace sluice::cpu {

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev);

}  // namespace sluice::cpu
