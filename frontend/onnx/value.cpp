#include "frontend/onnx/value.h"

#include "base/error.h"
#include "frontend/onnx/proto.h"

namespace sluice::onnx {

Value Value::sequence(std::vector<Tensor> items, DType dtype) {
  Value v;
  v.kind_ = Kind::Sequence;
  v.items_ = std::move(items);
  v.seq_dtype_ = dtype;
  return v;
}

const Tensor& Value::tensor(const char* fn) const {
  SLUICE_CHECK_IN(ValueError, fn, kind_ == Kind::Tensor) << "expected a tensor, got " << str();
  return *tensor_;
}

Tensor& Value::tensor(const char* fn) {
  SLUICE_CHECK_IN(ValueError, fn, kind_ == Kind::Tensor) << "expected a tensor, got " << str();
  return *tensor_;
}

const std::vector<Tensor>& Value::items(const char* fn) const {
  SLUICE_CHECK_IN(ValueError, fn, kind_ == Kind::Sequence) << "expected a sequence, got " << str();
  return items_;
}

std::string Value::str() const {
  switch (kind_) {
    case Kind::None: return "none";
    case Kind::Tensor: return "tensor(" + onnx_type_name(tensor_->dtype()) + ", " + tuple_str(tensor_->shape()) + ")";
    case Kind::Sequence:
      return "sequence(" + onnx_type_name(seq_dtype_) + ", " + std::to_string(items_.size()) + " items)";
  }
  return "?";
}

}  // namespace sluice::onnx
