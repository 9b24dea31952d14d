#pragma once
// The op conformance sweep's cases: every op family of the Tensor API (runtime/tensor.h) x dtypes x
// shapes (odd and prime sizes, broadcasting, size-0 and size-1 dims, non-contiguous views), generated
// from the tables in op_sweep.cpp. Each case builds one tensor on a device; conformance.cpp realizes it
// and compares it with the reference evaluator (runtime/reference.h).
//
// Names: `ops/<op>/<dtype>/<shape>` (`ops/add/float32/7x13`, `ops/sum/int32/3x5x7@0,2`); a shape tag is
// the input shape with `x` between sizes, `scalar` for shape (), `_` between operands, `@axes` for
// reductions, and a view suffix: `.T` (transposed), `.step2` (every other element), `.flip` (reversed).
// Pure data; any thread may call op_cases (tensor building is thread-safe).
#include <functional>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace sluice::cli {

struct OpCase {
  std::string name;   // unique: the --filter path
  std::string group;  // "ops/unary", "ops/binary", ... (a row of the summary table)
  std::function<Tensor(const std::string& device)> build;
  double rtol = 0, atol = 0;  // floats: |got - want| <= atol + rtol * |want|; integers and bools exact
  bool quick = false;         // in the --quick subset (one representative case per op)
};

const std::vector<OpCase>& op_cases();

}  // namespace sluice::cli
