// sluice.optim: SGD, Adam, AdamW and LAMB (runtime/optim.h). An optimizer holds pointers to the C++
// tensors inside the Python Tensor objects it was given, so it keeps those objects alive (keep_alive),
// and they keep their layers alive in turn (nn.cpp).
#include "runtime/optim.h"
#include "bindings.h"

namespace sluice::python {

void bind_optim(py::module_& m) {
  py::module_ o =
      m.def_submodule("optim", "Optimizers with PyTorch's update rules (LAMB: the reference design's).");
  py::class_<optim::Optimizer>(o, "Optimizer")
      .def("zero_grad", &optim::Optimizer::zero_grad)
      .def(
          "step",
          [](optim::Optimizer& opt) {
            py::gil_scoped_release nogil;
            opt.step();
          },
          "Writes every parameter's new value and realizes the writes (in place, on the device).")
      .def("step_lazy", &optim::Optimizer::step_lazy,
           "The step's writes, lazy: return them from a jitted step.")
      .def_property("lr", &optim::Optimizer::lr, &optim::Optimizer::set_lr)
      .def_property_readonly(
          "params", [](const optim::Optimizer& opt) { return opt.params(); },
          py::return_value_policy::reference);

  py::class_<optim::SGD, optim::Optimizer>(o, "SGD").def(
      py::init(
          [](std::vector<Tensor*> params, double lr, double momentum, double weight_decay, bool nesterov) {
            return new optim::SGD(std::move(params), {lr, momentum, weight_decay, nesterov});
          }),
      py::arg("params"), py::arg("lr") = 1e-3, py::arg("momentum") = 0.0, py::arg("weight_decay") = 0.0,
      py::arg("nesterov") = false, py::keep_alive<1, 2>());

  py::class_<optim::Adam, optim::Optimizer> adam(o, "Adam");
  auto make = [](optim::Adam::Kind kind) {
    return [kind](std::vector<Tensor*> params, double lr, double b1, double b2, double eps, double wd) {
      return new optim::Adam(std::move(params), {lr, b1, b2, eps, wd}, kind);
    };
  };
  adam.def(py::init(make(optim::Adam::Kind::Adam)), py::arg("params"), py::arg("lr") = 1e-3,
           py::arg("b1") = 0.9, py::arg("b2") = 0.999, py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.0,
           py::keep_alive<1, 2>());
  // AdamW and LAMB are Adam with another rule (runtime/optim.h): factories with their own defaults.
  o.def("AdamW", make(optim::Adam::Kind::AdamW), py::arg("params"), py::arg("lr") = 1e-3, py::arg("b1") = 0.9,
        py::arg("b2") = 0.999, py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.01, py::keep_alive<0, 1>(),
        py::return_value_policy::take_ownership);
  o.def("LAMB", make(optim::Adam::Kind::Lamb), py::arg("params"), py::arg("lr") = 1e-3, py::arg("b1") = 0.9,
        py::arg("b2") = 0.999, py::arg("eps") = 1e-6, py::arg("weight_decay") = 0.0, py::keep_alive<0, 1>(),
        py::return_value_policy::take_ownership);
}

}  // namespace sluice::python
