#pragma once
// The op conformance cases: each builds one tensor on a device, which op_runner.h realizes and compares
// with the reference evaluator (runtime/reference.h). Three tables, one list:
// - the sweep (op_sweep.cpp): every op family of the Tensor API (runtime/tensor.h) x dtypes x shapes (odd
//   and prime sizes, broadcasting, size-0 and size-1 dims, non-contiguous views). Names:
//   `ops/<op>/<dtype>/<shape>` (`ops/add/float32/7x13`, `ops/sum/int32/3x5x7@0,2`); a shape tag is the
//   input shape with `x` between sizes, `scalar` for shape (), `_` between operands, `@axes` for
//   reductions, and a view suffix: `.T` (transposed), `.step2` (every other element), `.flip` (reversed);
// - the composite cases (op_composite.cpp, group "ops/composite"): chains of ops over a few shared inputs
//   (broadcasting, C integer semantics, casts, long loops, NaN handling, whole layers). Names: `ops/<name>`.
// - the gradient cases (op_gradient.cpp, group "ops/grad"): every case of grad_cases.h, its input
//   gradients computed by backward graphs on the device. Names: `ops/grad/<case>`.
// Pure data; any thread may call op_cases (tensor building is thread-safe).
#include <functional>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace sluice::conformance {

struct OpCase {
  std::string name;   // unique: the --filter path
  std::string group;  // "ops/unary", "ops/binary", ... (a row of the summary table)
  std::function<Tensor(const std::string& device)> build;
  double rtol = 0, atol = 0;  // floats: |got - want| <= atol + rtol * |want|; integers and bools exact
  bool quick = false;         // in the --quick subset (one representative case per op)
  std::string needs;  // a dtype the device must report in its Properties (float64, float16, int64), or ""
};

// The sweep, the composite cases, then the gradient cases.
const std::vector<OpCase>& op_cases();
std::vector<OpCase> op_sweep();       // op_sweep.cpp
std::vector<OpCase> op_composites();  // op_composite.cpp
std::vector<OpCase> op_gradients();   // op_gradient.cpp

}  // namespace sluice::conformance
