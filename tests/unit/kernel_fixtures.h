#pragma once
// What the codegen tests build kernels from: random float tensors on the CPU device and the one compute
// kernel of a tensor's schedule.
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "core/schedule/schedule.h"
#include "runtime/tensor.h"

namespace sluice::testing_kernels {

// Values in [-2, 2), a fixed sequence per seed.
inline Tensor randf(const Shape& shape, uint32_t seed) {
  std::vector<float> v(size_t(prod(shape)));
  uint32_t x = seed * 2654435761u + 12345;
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    f = -2.0f + 4.0f * float(x % 10000) / 10000.0f;
  }
  return Tensor::from(v, shape, "CPU");
}

// The one compute item of t's schedule.
inline ScheduleItem item_of(const Tensor& t) {
  Schedule s = schedule({t.uop()});
  std::vector<ScheduleItem> compute;
  for (const ScheduleItem& it : s.items)
    if (it.ast.op() == Op::Sink) compute.push_back(it);
  SLUICE_CHECK(compute.size() == 1) << "expected one kernel, the schedule has " << compute.size();
  return compute[0];
}

}  // namespace sluice::testing_kernels
