#pragma once
// sluice::onnx::Model: an ONNX model loaded for one device (DESIGN.md §5a).
//
//   auto m = sluice::onnx::Model::load("mnist.onnx", {.device = "CPU"});
//   std::vector<sluice::onnx::Value> out = m.run({{"Input3", Tensor::from(pixels, {1, 1, 28, 28}, "CPU")}});
//   std::vector<float> scores = out[0].tensor().to_vector<float>();
//
// load() parses the file with the ONNX project's protobuf classes (proto.h) and checks the whole graph
// once: every op of every (sub)graph is in the op table (the error lists every unsupported op at once,
// with node names) and every value a node reads is made somewhere before it.
//
// run() binds the inputs by name and checks each against the declared type: dtype, rank, fixed sizes,
// and symbolic sizes ("batch") bound consistently across inputs. It builds the graph's Tensor ops
// (interpreter.h), realizes the outputs on the model's device and checks them against the declared
// output types. Shape arithmetic (Shape -> Gather -> Concat -> Reshape) folds on the host and never
// becomes a kernel. A run is captured as it runs (runtime/jit.h): the next run with inputs of the same
// shapes and dtypes (and the same values of any input the graph read on the host, such as a sample rate
// an If tests) replays the captured kernels as one graph, scheduling and compiling nothing. A graph that
// needs values computed on the device (NonZero of an activation, a Loop whose condition is computed)
// runs uncaptured; RunInfo says why.
//
// Outputs of a replayed run live in the captured buffers and are overwritten by the next run, as with
// sluice::jit: copy (`.contiguous().realize()`, or read) what must outlive it. Passing an output of one
// run as an input of the next (a recurrent state) is fine.
//
// Threading: one thread at a time per Model. Failures: ValueError/ShapeError/DTypeError naming the model,
// the node or input and the values; device errors as realize throws them.
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "frontend/onnx/graph.h"
#include "frontend/onnx/value.h"
#include "runtime/device_name.h"

namespace sluice::onnx {

struct ModelOptions {
  std::string device = default_device();
  bool capture = true;  // false: every run builds its graph (no replay)
};

// What the last run did.
struct RunInfo {
  bool replayed = false;     // a captured plan ran: nothing was built, scheduled or compiled
  bool captured = false;     // this run was captured for later replays
  std::string not_captured;  // why not, when neither
  size_t kernels = 0;        // kernels and copies the run launched
  size_t compiled = 0;       // kernels new to the device's Realizer in this run
  double build_ms = 0;       // building the Tensor graph (the importer)
  double schedule_ms = 0, codegen_ms = 0, compile_ms = 0;
  double total_ms = 0;  // the whole run() call
};

class Model {
 public:
  static Model load(const std::string& path, ModelOptions options = {});
  // A model from bytes; `name` labels messages, `base_dir` resolves external data ("" : none allowed).
  static Model from_bytes(std::span<const std::byte> bytes, const std::string& name,
                          const std::string& base_dir, ModelOptions options = {});
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  const std::string& name() const;
  const std::string& device() const;
  int opset() const;
  // The inputs a caller gives (graph inputs without an initializer of the same name), and the outputs.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const ParsedModel& parsed() const;

  // Runs the model; returns its outputs in declared order. Tensors on another device are copied over.
  std::vector<Value> run(const std::map<std::string, Value>& inputs);
  const RunInfo& last_run() const;
  // Saves the plan of the last run (for its input shapes, and the values of any input the graph read on
  // the host) as a compiled model that CompiledModel::load runs in a later process without importing,
  // scheduling or compiling (compiled_model.h). Written atomically. ValueError when nothing ran yet or the
  // last run was not captured (RunInfo::not_captured says why), or the file cannot be written.
  void save(const std::string& path) const;

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  static Model open(std::shared_ptr<const ParsedModel> parsed, ModelOptions options);
  std::unique_ptr<Impl> impl_;
};

// Every op of the graph and its subgraphs that the op table lacks, or that belongs to another domain:
// "Foo (nodes 'a', 'b'), com.microsoft.Bar (node 'c')"; empty when all are supported.
std::string unsupported_ops(const Graph& g);

}  // namespace sluice::onnx
