// sluice.onnx: ONNX models (frontend/onnx/model.h) and compiled models (compiled_model.h) from Python.
//   m = sluice.onnx.load("model.onnx", device="CPU"); y, = m.run({"x": numpy_array})
// Inputs may be Tensors, numpy arrays or lists (made on the model's device with their own dtype; the model
// checks it), or lists of tensors for sequence inputs. Outputs come back in declared order: a Tensor, a
// list (a sequence) or None (an empty optional).
#include "bindings.h"
#include "frontend/onnx/compiled_model.h"
#include "frontend/onnx/model.h"

namespace sluice::python {

namespace {

std::map<std::string, onnx::Value> inputs_of(const py::dict& feeds, const std::string& device) {
  std::map<std::string, onnx::Value> in;
  for (auto [k, v] : feeds) {
    std::string name = py::str(k);
    if (v.is_none()) {
      in.emplace(name, onnx::Value());
    } else if (py::isinstance<py::list>(v) && py::len(v) > 0 &&
               py::isinstance<Tensor>(v.cast<py::list>()[0])) {
      std::vector<Tensor> items = v.cast<std::vector<Tensor>>();
      in.emplace(name, onnx::Value::sequence(items, items[0].dtype()));
    } else {
      in.emplace(name, onnx::Value(to_tensor(v, std::nullopt, device, "onnx.run")));
    }
  }
  return in;
}

py::list outputs_of(const std::vector<onnx::Value>& out) {
  py::list l;
  for (const onnx::Value& v : out) {
    if (v.is_tensor())
      l.append(v.tensor());
    else if (v.is_sequence())
      l.append(py::cast(v.items()));
    else
      l.append(py::none());
  }
  return l;
}

py::list names(const std::vector<onnx::ValueInfo>& infos) {
  py::list l;
  for (const auto& i : infos) l.append(i.name);
  return l;
}

template <class M>
py::list run(M& model, const py::dict& feeds) {
  auto in = inputs_of(feeds, model.device());
  std::vector<onnx::Value> out;
  {
    py::gil_scoped_release nogil;
    out = model.run(in);
  }
  return outputs_of(out);
}

}  // namespace

void bind_onnx(py::module_& m) {
  py::module_ o = m.def_submodule("onnx", "ONNX models: load(path).run({name: array}).");
  py::class_<onnx::Model>(o, "Model", "An ONNX model loaded for one device (one thread at a time).")
      .def_property_readonly("name", &onnx::Model::name)
      .def_property_readonly("device", &onnx::Model::device)
      .def_property_readonly("opset", &onnx::Model::opset)
      .def_property_readonly("inputs", [](const onnx::Model& mo) { return names(mo.inputs()); })
      .def_property_readonly("outputs", [](const onnx::Model& mo) { return names(mo.outputs()); })
      .def(
          "run", &run<onnx::Model>, py::arg("inputs"),
          "Runs the model on {input name: Tensor or array}; the outputs in declared order. A second run with "
          "the same shapes replays the captured kernels.")
      .def_property_readonly("last_run",
                             [](const onnx::Model& mo) {
                               const onnx::RunInfo& r = mo.last_run();
                               py::dict d;
                               d["replayed"] = r.replayed;
                               d["captured"] = r.captured;
                               d["not_captured"] = r.not_captured;
                               d["kernels"] = r.kernels;
                               d["compiled"] = r.compiled;
                               d["total_ms"] = r.total_ms;
                               return d;
                             })
      .def("save", &onnx::Model::save, py::arg("path"),
           "Saves the last run's plan as a compiled model (load it with sluice.onnx.load_compiled).");
  o.def(
      "load",
      [](const std::string& path, py::handle device, bool capture) {
        onnx::ModelOptions options{.device = to_device(device), .capture = capture};
        py::gil_scoped_release nogil;
        return onnx::Model::load(path, options);
      },
      py::arg("path"), py::arg("device") = py::none(), py::arg("capture") = true);

  py::class_<onnx::CompiledModel>(o, "CompiledModel",
                                  "A compiled model: runs without importing or compiling.")
      .def_property_readonly("name", &onnx::CompiledModel::name)
      .def_property_readonly("device", &onnx::CompiledModel::device)
      .def_property_readonly("inputs", [](const onnx::CompiledModel& mo) { return names(mo.inputs()); })
      .def_property_readonly("outputs", [](const onnx::CompiledModel& mo) { return names(mo.outputs()); })
      .def("run", &run<onnx::CompiledModel>, py::arg("inputs"));
  o.def(
      "load_compiled",
      [](const std::string& path, py::handle device) {
        std::string dev = device.is_none() ? "" : to_device(device);
        py::gil_scoped_release nogil;
        return onnx::CompiledModel::load(path, dev);
      },
      py::arg("path"), py::arg("device") = py::none());
}

}  // namespace sluice::python
