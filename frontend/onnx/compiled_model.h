#pragma once
// sluice::onnx::CompiledModel: a model compiled for one device and saved (Model::save, `sluice compile`),
// then loaded in a later process and run without importing, scheduling or compiling (DESIGN.md §5b).
//
//   Model m = Model::load("cls.onnx", {.device = "VULKAN"});
//   m.run({{"x", x}});                                  // compiles the plan for x's shape
//   m.save("cls.sluice");
//   // later, in another process:
//   auto c = CompiledModel::load("cls.sluice");         // on the device it was compiled for
//   std::vector<Value> out = c.run({{"x", x}});
//
// load() reads the file (runtime/saved_plan.h: what it holds and what is checked), allocates the
// buffers, uploads the weights and loads the kernels from their binaries: no compiler runs. run() takes
// inputs of the names, dtypes and shapes it was compiled for (and, for an input the graph read on the
// host, such as a sample rate, the value it had then); anything else is an error naming the input, what
// it was compiled for and what it got. Outputs are as Model::run's: they live in the plan's buffers and
// the next run overwrites them; passing an output back as an input (a recurrent state) is fine.
//
// Threading: one thread at a time per CompiledModel. Failures: ValueError for a file that is missing, not
// a compiled model, from another sluice version, truncated or damaged; DeviceError for a device it was
// not compiled for; ValueError/ShapeError/DTypeError for inputs.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/onnx/graph.h"
#include "frontend/onnx/value.h"

namespace sluice::onnx {

class CompiledModel {
 public:
  // `device`: "" runs it on the device the file names.
  static CompiledModel load(const std::string& path, const std::string& device = "");
  ~CompiledModel();
  CompiledModel(CompiledModel&&) noexcept;
  CompiledModel& operator=(CompiledModel&&) noexcept;

  const std::string& name() const;    // the model's, as Model::name() was
  const std::string& device() const;  // where it runs
  // The inputs and outputs with the fixed dtypes and shapes it was compiled for.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;

  // Runs the plan; returns the outputs in declared order. Tensors on another device are copied over.
  std::vector<Value> run(const std::map<std::string, Value>& inputs);

 private:
  struct Impl;
  explicit CompiledModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::onnx
