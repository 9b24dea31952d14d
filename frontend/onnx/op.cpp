// OpContext: what an op function reads (op.h).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <random>

#include "frontend/onnx/op.h"
#include "frontend/onnx/proto.h"

namespace sluice::onnx {

const Value& OpContext::value(size_t i) const {
  static const Value none;
  return i < inputs_.size() ? inputs_[i] : none;
}

const Tensor& OpContext::in(size_t i) const {
  SLUICE_CHECK_IN(ValueError, op(), has(i))
      << "input " << i << (i < node_.inputs.size() ? " ('" + node_.inputs[i] + "')" : std::string())
      << " is required";
  return inputs_[i].tensor(op());
}

std::optional<Tensor> OpContext::opt(size_t i) const {
  if (!has(i)) return std::nullopt;
  return inputs_[i].tensor(op());
}

eval::HostArray OpContext::host(size_t i) { return host_values(in(i), rs_); }

std::vector<int64_t> OpContext::ints(size_t i) {
  eval::HostArray a = host(i);
  SLUICE_CHECK_IN(DTypeError, op(), !a.dtype.is_float())
      << "input " << i << " ('" << node_.inputs[i] << "') must be integers, got " << onnx_type_name(a.dtype);
  return a.i;
}

std::vector<double> OpContext::floats(size_t i) {
  eval::HostArray a = host(i);
  std::vector<double> out(size_t(a.numel()));
  for (int64_t k = 0; k < a.numel(); ++k) out[size_t(k)] = a.value(k);
  return out;
}

template <class T>
const T* OpContext::attr(const std::string& name) const {
  auto it = node_.attrs.find(name);
  if (it == node_.attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  SLUICE_CHECK_IN(ValueError, op(), v) << "attribute '" << name << "' has the wrong type";
  return v;
}

#define SLUICE_ATTR_READERS(T, fname)                                                 \
  T OpContext::fname(const std::string& name) const {                                 \
    const T* v = attr<T>(name);                                                       \
    SLUICE_CHECK_IN(ValueError, op(), v) << "attribute '" << name << "' is required"; \
    return *v;                                                                        \
  }                                                                                   \
  T OpContext::fname(const std::string& name, T def) const {                          \
    const T* v = attr<T>(name);                                                       \
    return v ? *v : def;                                                              \
  }
SLUICE_ATTR_READERS(int64_t, attr_int)
SLUICE_ATTR_READERS(std::string, attr_str)
SLUICE_ATTR_READERS(std::vector<int64_t>, attr_ints)
SLUICE_ATTR_READERS(std::vector<double>, attr_floats)
#undef SLUICE_ATTR_READERS

// Floats may be stored as ints by hand-written models (alpha = 1): both read as a number.
double OpContext::attr_float(const std::string& name) const {
  if (const int64_t* i = has_attr(name) ? std::get_if<int64_t>(&node_.attrs.at(name)) : nullptr)
    return double(*i);
  const double* v = attr<double>(name);
  SLUICE_CHECK_IN(ValueError, op(), v) << "attribute '" << name << "' is required";
  return *v;
}
double OpContext::attr_float(const std::string& name, double def) const {
  return has_attr(name) ? attr_float(name) : def;
}

std::vector<std::string> OpContext::attr_strs(const std::string& name, std::vector<std::string> def) const {
  const auto* v = attr<std::vector<std::string>>(name);
  return v ? *v : def;
}

std::shared_ptr<const TensorData> OpContext::attr_tensor_data(const std::string& name) const {
  const auto* v = attr<std::shared_ptr<const TensorData>>(name);
  SLUICE_CHECK_IN(ValueError, op(), v) << "attribute '" << name << "' is required";
  return *v;
}

Tensor OpContext::attr_tensor(const std::string& name) {
  return constant_tensor(attr_tensor_data(name), rs_);
}

const Graph& OpContext::attr_graph(const std::string& name) const {
  const auto* v = attr<std::shared_ptr<const Graph>>(name);
  SLUICE_CHECK_IN(ValueError, op(), v) << "attribute '" << name << "' (a graph) is required";
  return **v;
}

DType OpContext::attr_dtype(const std::string& name) const {
  return dtype_from_onnx(int(attr_int(name)), std::string("attribute '") + name + "'");
}
DType OpContext::attr_dtype(const std::string& name, DType def) const {
  return has_attr(name) ? attr_dtype(name) : def;
}

uint64_t OpContext::seed() {
  if (has_attr("seed")) return std::bit_cast<uint64_t>(attr_float("seed"));
  // Unseeded: a new seed for every node and run (the generator hashes it, so consecutive seeds are fine).
  static std::atomic<uint64_t> next{(uint64_t(std::random_device{}()) << 32) | std::random_device{}()};
  rs_.fresh_random = true;
  return next.fetch_add(1);
}

Tensor OpContext::tensor_of(const std::vector<int64_t>& values, const Shape& shape) const {
  return Tensor::from(values, shape, rs_.device);
}

Tensor OpContext::tensor_of(const eval::HostArray& a) const {
  auto host = std::make_shared<HostBuffer>();
  host->dtype = a.dtype;
  host->size = a.numel();
  host->bytes = a.to_bytes();
  return Tensor::from_host(std::move(host), a.shape, rs_.device);
}

Tensor bounded_cat(std::vector<Tensor> parts, int64_t axis) {
  constexpr size_t kParts = 16;
  if (parts.size() <= kParts) return cat(parts, axis);
  for (Tensor& t : parts) t = t.contiguous();
  while (parts.size() > kParts) {
    std::vector<Tensor> joined;
    for (size_t i = 0; i < parts.size(); i += kParts) {
      const auto end = parts.begin() + long(std::min(parts.size(), i + kParts));
      joined.push_back(cat(std::vector<Tensor>(parts.begin() + long(i), end), axis).contiguous());
    }
    parts = std::move(joined);
  }
  return cat(parts, axis);
}

}  // namespace sluice::onnx
