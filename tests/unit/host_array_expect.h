#pragma once
// gtest predicates comparing a HostArray (the reference evaluator's result) with hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/eval/evaluator.h"

namespace sluice::testing_eval {

// Floats within `rel` of the expected values (NaN matches NaN, infinities match exactly), no undefined
// elements, and the given dtype and shape.
inline testing::AssertionResult floats(const eval::HostArray& a, DType dt, const Shape& shape,
                                       const std::vector<double>& want, double rel = 1e-12) {
  if (a.dtype != dt || a.shape != shape || a.f.size() != want.size() || !a.undefined.empty())
    return testing::AssertionFailure()
           << "got " << a.str() << ", want " << dt.name() << " " << tuple_str(shape);
  for (size_t k = 0; k < want.size(); k++) {
    double x = a.f[k], w = want[k];
    bool ok = std::isnan(w) ? std::isnan(x) : std::isinf(w) ? x == w : std::abs(x - w) <= rel * std::abs(w);
    if (!ok)
      return testing::AssertionFailure()
             << "element " << k << ": got " << x << ", want " << w << " in " << a.str();
  }
  return testing::AssertionSuccess();
}

// Integers (or bools) exactly, no undefined elements, and the given dtype and shape.
inline testing::AssertionResult ints(const eval::HostArray& a, DType dt, const Shape& shape,
                                     const std::vector<int64_t>& want) {
  if (a.dtype != dt || a.shape != shape || a.i != want || !a.undefined.empty())
    return testing::AssertionFailure() << "got " << a.str() << ", want " << dt.name() << " "
                                       << tuple_str(shape) << " " << testing::PrintToString(want);
  return testing::AssertionSuccess();
}

}  // namespace sluice::testing_eval
