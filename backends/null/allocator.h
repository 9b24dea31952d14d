#pragma once
// NULL's allocator: hands out distinct, aligned addresses with no memory behind them.
#include <memory>

#include "hcq/allocator.h"

namespace sluice::null {

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev);

}  // namespace sluice::null
