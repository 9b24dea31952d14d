// sluice.jit: a decorator over sluice::Jit. The decorated function takes tensors as positional arguments
// and returns a tensor or a tuple/list of tensors; from the third call on it is not called at all (its
// kernels replay as one graph), so the shape of what it returns is remembered from the calls that ran it.
#include "runtime/jit.h"
#include "bindings.h"

namespace sluice::python {

namespace {

class JitFunction {
 public:
  explicit JitFunction(py::function fn)
      : fn_(fn), jit_([this](const std::vector<Tensor>& inputs) { return call_python(inputs); }) {}

  py::object operator()(const py::args& args) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < args.size(); i++) {
      if (!py::isinstance<Tensor>(args[i]))
        SLUICE_FAIL(DTypeError, "jit") << "argument " << i << " is a "
                                       << py::str(py::type::of(args[i]).attr("__name__")).cast<std::string>()
                                       << ": a jitted function takes tensors only";
      inputs.push_back(args[i].cast<Tensor>());
    }
    std::vector<Tensor> out = jit_(inputs);
    if (kind_ == Kind::Single) return py::cast(out.at(0));
    py::list l = py::cast(out);
    return kind_ == Kind::Tuple ? py::object(py::tuple(l)) : py::object(l);
  }

  const Jit& jit() const { return jit_; }

 private:
  enum class Kind { Single, Tuple, List };

  std::vector<Tensor> call_python(const std::vector<Tensor>& inputs) {
    py::tuple args(inputs.size());
    for (size_t i = 0; i < inputs.size(); i++) args[i] = py::cast(inputs[i]);
    py::object r = fn_(*args);
    if (py::isinstance<Tensor>(r)) {
      kind_ = Kind::Single;
      return {r.cast<Tensor>()};
    }
    if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
      kind_ = py::isinstance<py::tuple>(r) ? Kind::Tuple : Kind::List;
      return r.cast<std::vector<Tensor>>();
    }
    SLUICE_FAIL(DTypeError, "jit")
        << "a jitted function must return a Tensor or a tuple/list of Tensors, got "
        << py::str(py::type::of(r).attr("__name__")).cast<std::string>();
  }

  py::function fn_;
  Kind kind_ = Kind::Single;
  Jit jit_;
};

}  // namespace

void bind_jit(py::module_& m) {
  // dynamic_attr: functools.update_wrapper gives each instance the wrapped function's name and doc.
  py::class_<JitFunction>(
      m, "JitFunction", py::dynamic_attr(),
      "A function whose kernels are captured on its second call and replayed from the third "
      "(sluice::jit). Outputs of a replay are overwritten by the next call.")
      .def(py::init<py::function>(), py::arg("fn"))
      .def("__call__", &JitFunction::operator())
      .def_property_readonly("calls", [](const JitFunction& f) { return f.jit().calls(); })
      .def_property_readonly("captured", [](const JitFunction& f) { return f.jit().captured(); })
      .def_property_readonly("kernel_count", [](const JitFunction& f) { return f.jit().kernel_count(); })
      .def_property_readonly(
          "why", [](const JitFunction& f) { return f.jit().why(); },
          "Why calls are not captured ('' while they may be).");
}

}  // namespace sluice::python
