// Printing a tensor's values (Tensor::values_str, operator<<): nested lists in row-major order, numpy style.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "runtime/device.h"
#include "runtime/realize.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

std::string element(const eval::HostArray& a, int64_t k) {
  if (a.dtype == dtypes::bool_) return a.i[size_t(k)] ? "True" : "False";
  if (a.dtype.is_unsigned()) return std::to_string(uint64_t(a.i[size_t(k)]));
  if (!a.dtype.is_float()) return std::to_string(a.i[size_t(k)]);
  const double v = a.f[size_t(k)];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", a.dtype.itemsize() >= 8 ? 12 : 6, v);
  return buf;
}

void nested(std::ostream& os, const eval::HostArray& a, size_t axis, int64_t& k) {
  if (axis == a.shape.size()) {
    os << element(a, k++);
    return;
  }
  os << '[';
  for (int64_t i = 0; i < a.shape[axis]; ++i) {
    if (i) os << ", ";
    nested(os, a, axis + 1, k);
  }
  os << ']';
}

}  // namespace

std::string Tensor::values_str(int64_t max_elements) {
  if (numel() > max_elements) return str();
  realize();
  const eval::HostArray a =
      eval::HostArray::from_bytes(dtype(), shape(), realizer(device()).read(*this, "print"));
  std::ostringstream os;
  os << "Tensor(";
  int64_t k = 0;
  nested(os, a, 0, k);
  os << ", dtype=" << dtype().name() << ", device=" << device() << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, Tensor& t) { return os << t.values_str(); }
std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << Tensor(t).values_str(); }

}  // namespace sluice
