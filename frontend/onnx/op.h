#pragma once
// The op table (DESIGN.md §5a): each ONNX op is one row {name, since, fn}, where fn builds the node's
// outputs from its inputs with Tensor ops. Rows live in ops_<family>.cpp by op family; registry.cpp joins
// the families into the one table. An op's attribute defaults sit next to it, in its fn.
//
// An op function gets an OpContext: the node, its inputs (Values), the opset the model imports, typed
// attribute readers with defaults, and host_values() for inputs an op needs as numbers (a Reshape's shape).
// It returns one Value per node output (trailing optional outputs may be left out). It reports bad input
// with SLUICE_CHECK_IN(E, ctx.op(), cond) << "..."; the interpreter adds the model and node to the message.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/eval/evaluator.h"
#include "frontend/onnx/graph.h"
#include "frontend/onnx/interpreter.h"
#include "frontend/onnx/value.h"
#include "runtime/tensor.h"

namespace sluice::onnx {

class OpContext {
 public:
  OpContext(const Node& node, std::vector<Value> inputs, const Scope& scope, RunState& rs)
      : node_(node), inputs_(std::move(inputs)), scope_(scope), rs_(rs) {}

  const Node& node() const { return node_; }
  const char* op() const { return node_.op_type.c_str(); }
  int opset() const { return rs_.model->opset; }
  const std::string& device() const { return rs_.device; }
  RunState& run_state() { return rs_; }

  // ---- inputs
  size_t size() const { return inputs_.size(); }
  bool has(size_t i) const { return i < inputs_.size() && !inputs_[i].is_none(); }  // present, not None
  const Value& value(size_t i) const;                                               // None when absent
  const Tensor& in(size_t i) const;  // a required tensor input; ValueError when absent or not a tensor
  std::optional<Tensor> opt(size_t i) const;  // an optional tensor input
  const std::vector<Value>& inputs() const { return inputs_; }

  // Input i's values on the host (interpreter.h host_values), as an array, int64s or doubles.
  eval::HostArray host(size_t i);
  std::vector<int64_t> ints(size_t i);
  std::vector<double> floats(size_t i);
  eval::HostArray host(const Tensor& t) { return host_values(t, rs_); }

  // ---- attributes. Without a default, a missing attribute is a ValueError naming it.
  bool has_attr(const std::string& name) const { return node_.attrs.count(name) != 0; }
  int64_t attr_int(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t def) const;
  double attr_float(const std::string& name) const;
  double attr_float(const std::string& name, double def) const;
  std::string attr_str(const std::string& name) const;
  std::string attr_str(const std::string& name, std::string def) const;
  std::vector<int64_t> attr_ints(const std::string& name) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def) const;
  std::vector<double> attr_floats(const std::string& name) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> def) const;
  std::vector<std::string> attr_strs(const std::string& name, std::vector<std::string> def = {}) const;
  Tensor attr_tensor(const std::string& name);  // a TENSOR attribute on the run's device
  std::shared_ptr<const TensorData> attr_tensor_data(const std::string& name) const;
  const Graph& attr_graph(const std::string& name) const;
  // ONNX's `to`/`dtype` attributes: a TensorProto.DataType as a sluice dtype.
  DType attr_dtype(const std::string& name) const;
  DType attr_dtype(const std::string& name, DType def) const;

  // ---- helpers
  // The generator seed of a random op: its `seed` attribute (float) when it has one, so the numbers are
  // the same on every run and every device; else a fresh seed, and the run is not replayed (a replay
  // would repeat the numbers). ONNX Runtime instead continues one stream from run to run.
  uint64_t seed();
  // A subgraph run with this node's scope as the enclosing one (If, Loop, Scan).
  std::vector<Value> run_subgraph(const Graph& g, const std::vector<Value>& inputs) {
    return run_graph(g, inputs, &scope_, rs_);
  }
  // Host values as a tensor on the run's device (int64 shapes stay exact).
  Tensor tensor_of(const std::vector<int64_t>& values, const Shape& shape) const;
  Tensor tensor_of(const std::vector<int64_t>& values) const {
    return tensor_of(values, {int64_t(values.size())});
  }
  Tensor tensor_of(const eval::HostArray& a) const;

 private:
  template <class T>
  const T* attr(const std::string& name) const;

  const Node& node_;
  std::vector<Value> inputs_;
  const Scope& scope_;
  RunState& rs_;
};

using Values = std::vector<Value>;

// cat(parts, axis), at most 16 parts per kernel: a kernel may take only so many buffers (32 on lavapipe)
// and the scheduler does not split a concatenation that takes more, so past 16 each part becomes one
// buffer and they join in rounds. Concat and every op that stacks per-step results go through it.
Tensor bounded_cat(std::vector<Tensor> parts, int64_t axis);
using OpFn = Values (*)(OpContext&);

struct OpDef {
  const char* name;  // op_type of the default domain
  int since;         // the oldest opset version whose form of the op fn handles
  OpFn fn;
};

// The families (ops_<family>.cpp), joined by registry.cpp.
std::span<const OpDef> elementwise_ops();
std::span<const OpDef> reduce_ops();
std::span<const OpDef> movement_ops();
std::span<const OpDef> index_ops();
std::span<const OpDef> nn_ops();
std::span<const OpDef> loss_ops();
std::span<const OpDef> image_ops();
std::span<const OpDef> rnn_ops();
std::span<const OpDef> control_ops();
std::span<const OpDef> quant_ops();
std::span<const OpDef> signal_ops();
std::span<const OpDef> text_ops();
std::span<const OpDef> random_ops();

// The row for op_type (default domain), or null.
const OpDef* find_op(const std::string& op_type);
// Every row, sorted by name.
std::vector<const OpDef*> all_ops();

}  // namespace sluice::onnx
