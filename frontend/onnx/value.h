#pragma once
// A value of an ONNX graph: a tensor, a sequence of tensors, or nothing (an absent optional input or
// output, an empty optional). A cheap handle, as Tensor is.
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/tensor.h"

namespace sluice::onnx {

class Value {
 public:
  enum class Kind : uint8_t { None, Tensor, Sequence };

  Value() = default;  // None
  Value(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT: implicit, as in `return {x}`
  // A sequence of tensors of one dtype (`dtype` matters when it is empty).
  static Value sequence(std::vector<Tensor> items, DType dtype);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_sequence() const { return kind_ == Kind::Sequence; }
  // The tensor; ValueError naming `fn` when this is a sequence or nothing.
  const Tensor& tensor(const char* fn = "onnx") const;
  Tensor& tensor(const char* fn = "onnx");  // to read it (to_vector realizes the tensor in place)
  // The sequence's tensors and element dtype; ValueError naming `fn` when this is not a sequence.
  const std::vector<Tensor>& items(const char* fn = "onnx") const;
  DType sequence_dtype() const { return seq_dtype_; }
  // "tensor(float, (2, 3))", "sequence(int64, 3 items)", "none": for error messages.
  std::string str() const;

 private:
  Kind kind_ = Kind::None;
  std::optional<Tensor> tensor_;
  std::vector<Tensor> items_;
  DType seq_dtype_ = dtypes::float32;
};

}  // namespace sluice::onnx
