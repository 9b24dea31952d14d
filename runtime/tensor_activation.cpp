// Activation functions, built from the elementwise ops (constants as in the reference design).
#include <cmath>
#include <numbers>

#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

Tensor Tensor::relu() const {
  OpScope scope("relu");
  return gt(0).where(*this, 0);
}
Tensor Tensor::relu6() const {
  OpScope scope("relu6");
  return relu() - (*this - 6).relu();
}
Tensor Tensor::leaky_relu(double neg_slope) const {
  OpScope scope("leaky_relu");
  return lt(0).where(*this * neg_slope, *this);
}
Tensor Tensor::elu(double alpha) const {
  OpScope scope("elu");
  return relu() - alpha * (1 - exp()).relu();
}
Tensor Tensor::celu(double alpha) const {
  OpScope scope("celu");
  return maximum(0) + (alpha * ((*this / alpha).exp() - 1)).minimum(0);
}
Tensor Tensor::selu(double alpha, double gamma) const {
  OpScope scope("selu");
  return gamma * ge(0).detach().where(*this, alpha * (exp() - 1));
}
Tensor Tensor::gelu() const {
  OpScope scope("gelu");
  return 0.5 * *this *
         (1 + (std::sqrt(2 / std::numbers::pi) * (*this + 0.044715 * *this * *this * *this)).tanh());
}
Tensor Tensor::quick_gelu() const {
  OpScope scope("quick_gelu");
  return *this * (*this * 1.702).sigmoid();
}
Tensor Tensor::silu() const {
  OpScope scope("silu");
  return *this * sigmoid();
}
Tensor Tensor::mish() const {
  OpScope scope("mish");
  return *this * softplus().tanh();
}
Tensor Tensor::softplus(double beta) const {
  OpScope scope("softplus");
  return (1 / beta) * (1 + (*this * beta).exp()).log();
}
Tensor Tensor::softsign() const {
  OpScope scope("softsign");
  return *this / (1 + abs());
}
// 1 / (1 + 2^(-x / ln 2)) = 1 / (1 + e^-x).
Tensor Tensor::sigmoid() const {
  OpScope scope("sigmoid");
  return (1 + (*this * (-1 / std::numbers::ln2)).exp2()).reciprocal();
}
// -softplus(-x), written as min(x, 0) - log(1 + e^-|x|) so large |x| neither overflows nor loses digits.
Tensor Tensor::logsigmoid() const {
  OpScope scope("logsigmoid");
  return minimum(0) - (1 + (-abs()).exp()).log();
}
Tensor Tensor::hardsigmoid(double alpha, double beta) const {
  OpScope scope("hardsigmoid");
  return (alpha * *this + beta).relu() - (alpha * *this + beta - 1).relu();
}
Tensor Tensor::hardswish() const {
  OpScope scope("hardswish");
  return *this * (*this + 3).relu6() * (1.0 / 6);
}
Tensor Tensor::hardtanh(double min_val, double max_val) const {
  OpScope scope("hardtanh");
  return clip(min_val, max_val);
}
Tensor Tensor::tanh() const {
  OpScope scope("tanh");
  return 2.0 * (2.0 * *this).sigmoid() - 1.0;
}
// Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7), as the reference design.
Tensor Tensor::erf() const {
  OpScope scope("erf");
  Tensor t = 1.0 / (1.0 + 0.3275911 * abs());
  Tensor poly = t.full_like(1.061405429);
  for (double c : {-1.453152027, 1.421413741, -0.284496736, 0.254829592}) poly = poly * t + c;
  return sign() * (1.0 - t * poly * (-square()).exp());
}

}  // namespace sluice
