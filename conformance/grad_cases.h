#pragma once
// The gradient conformance cases: every differentiable op family of the Tensor API (runtime/tensor.h),
// each a function of a few float inputs whose gradient (core/gradient, Tensor::backward) is checked
// against central finite differences through the reference evaluator (tests/unit/gradient_test.cpp) and
// against PyTorch on every device (tests/ops/gradient_test.cpp, from the table scripts/grad_cases_torch.py
// writes). A case's name is its key in both. The functions take the inputs on any device and any float
// dtype; the index tensors some build live on the first input's device.
#include <functional>
#include <vector>

#include "runtime/tensor.h"

namespace sluice::conformance {

// Where an input's values are drawn from: away from the kinks and poles of the ops that read it.
enum class Domain { Any, Positive, Unit, Prob };

struct Input {
  Shape shape;
  Domain domain = Domain::Any;
};

struct GradCase {
  const char* name;
  std::vector<Input> inputs;
  std::function<Tensor(const std::vector<Tensor>&)> f;
};

// The cases, in a fixed order.
const std::vector<GradCase>& grad_cases();

// The values of a case's input: distinct, none on a kink (0, a tie), spread over the domain; `seed`
// picks the draw (the tests use the input's position + 1).
std::vector<double> grad_case_values(int64_t n, Domain d, uint64_t seed);

}  // namespace sluice::conformance
