#pragma once
// Running a graph (DESIGN.md §5a): its nodes in order over a scope of named values, each node through its
// row of the op table (op.h); subgraphs (If, Loop, Scan) run in a scope whose parent is the node's, so
// they see the values of every enclosing graph. Every op builds lazy Tensor ops; nothing runs until the
// model realizes its outputs, except where an op needs concrete values (a Reshape's shape, an If's
// condition): host_values() computes those on the host when they are cheap (shape arithmetic folds to
// constants there and never becomes a kernel) and on the device otherwise.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/eval/evaluator.h"
#include "frontend/onnx/graph.h"
#include "frontend/onnx/value.h"

namespace sluice::onnx {

// What one run shares: the device, the model, the tensors of its initializers (made once per model and
// device, so their device copies persist from run to run) and what the run read on the host.
struct RunState {
  const ParsedModel* model = nullptr;
  std::string device;
  std::unordered_map<const TensorData*, Tensor>* constants = nullptr;
  std::unordered_map<UOp, size_t> input_buffers;  // each model input's BUFFER -> its input index
  std::set<size_t> inputs_read;                   // inputs whose values were read on the host
  bool device_reads = false;  // a value computed on the device was read: the run is data-dependent
  bool fresh_random = false;  // an unseeded random op drew new numbers, which a replay would repeat
  // Host reads whose graph computes at most this many elements run on the host (reference evaluator).
  int64_t host_eval_limit = int64_t(1) << 16;
};

// Named values, with the scope of the enclosing graph as parent.
class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent) {}
  const Value* find(const std::string& name) const;  // here, else in the enclosing scopes; null if none
  void set(const std::string& name, Value v) { values_[name] = std::move(v); }

 private:
  const Scope* parent_;
  std::unordered_map<std::string, Value> values_;
};

// Runs g with `inputs` bound to its inputs in order (missing trailing ones are None; an input that has an
// initializer of the same name takes it when None), seeing `outer`; returns the values of g's outputs.
// Errors from an op are rethrown with the model, node and op named: "[onnx] m.onnx: node 'n' (Conv): ...".
std::vector<Value> run_graph(const Graph& g, const std::vector<Value>& inputs, const Scope* outer,
                             RunState& rs);

// The tensor of an initializer or tensor attribute on rs's device, made once per model.
Tensor constant_tensor(const std::shared_ptr<const TensorData>& d, RunState& rs);

// t's values on the host: evaluated there (core/eval) when its graph computes little, else realized on
// the device and read back (rs.device_reads is set). Records the model inputs the values depend on.
eval::HostArray host_values(const Tensor& t, RunState& rs);
// Whether host_values(t) would read no model input and stay on the host: t is fixed by the model (its
// initializers and constants), so an op may specialize on its value and the run stays replayable.
bool fixed_by_model(const Tensor& t, const RunState& rs);

}  // namespace sluice::onnx
