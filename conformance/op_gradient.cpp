// The op cases' gradient group (op_cases.h, "ops/grad"): each gradient case of grad_cases.h as one op case
// whose tensor is the case's input gradients, flattened and joined, from backward graphs built on the
// device. op_runner compares them with the reference evaluator's reading of the same graphs, as it does a
// forward op, so a device runs every op's gradient kernels under the same checks (guards, expectations).
// The gradients' own correctness (the derivative rules) is checked elsewhere, against finite differences
// and PyTorch (grad_cases.h).
#include "conformance/grad_cases.h"
#include "conformance/op_cases.h"

namespace sluice::conformance {
namespace {

Tensor draw(const Shape& shape, Domain d, uint64_t seed, const std::string& device) {
  std::vector<float> v;
  for (double x : grad_case_values(prod(shape), d, seed)) v.push_back(static_cast<float>(x));
  return Tensor::from(v, shape, device);
}

}  // namespace

std::vector<OpCase> op_gradients() {
  std::vector<OpCase> out;
  const std::vector<GradCase>& cases = grad_cases();
  for (size_t n = 0; n < cases.size(); ++n) {
    const GradCase* c = &cases[n];
    auto build = [c](const std::string& device) {
      std::vector<Tensor> xs;
      for (size_t i = 0; i < c->inputs.size(); ++i)
        xs.push_back(draw(c->inputs[i].shape, c->inputs[i].domain, i + 1, device));
      const Tensor y = c->f(xs);
      std::vector<Tensor> flat;
      for (const Tensor& g : gradients(y, xs, draw(y.shape(), Domain::Any, 99, device)))
        flat.push_back(g.flatten());
      return cat(flat);
    };
    // The tolerance of the PyTorch comparison; every fourth case is in the --quick subset.
    out.push_back({std::string("ops/grad/") + c->name, "ops/grad", build, 1e-4, 1e-5, n % 4 == 0, ""});
  }
  return out;
}

}  // namespace sluice::conformance
