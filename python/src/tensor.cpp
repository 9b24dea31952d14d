// sluice.Tensor: the class, creation, and reading values back (numpy, lists, scalars, printing).
#include <pybind11/numpy.h>

#include <atomic>
#include <cstring>

#include "bindings.h"

namespace sluice::python {

namespace {

// Seeds for rand/randn/... called without one: drawn from a process-wide counter (manual_seed resets
// it), so two calls give different numbers while a program that sets its seed stays reproducible.
std::atomic<uint64_t> next_seed{0};
uint64_t seed_or_next(py::handle seed) {
  return seed.is_none() ? next_seed.fetch_add(1) : seed.cast<uint64_t>();
}

// Calls f(T{}) with the host type a dtype reads back as (float16 and bfloat16 read as float).
template <class F>
auto with_host_type(DType d, F&& f) {
  switch (d.scalar) {
    case Scalar::Bool: return f(bool{});
    case Scalar::Int8: return f(int8_t{});
    case Scalar::UInt8: return f(uint8_t{});
    case Scalar::Int16: return f(int16_t{});
    case Scalar::UInt16: return f(uint16_t{});
    case Scalar::Int32: return f(int32_t{});
    case Scalar::UInt32: return f(uint32_t{});
    case Scalar::Int64: return f(int64_t{});
    case Scalar::UInt64: return f(uint64_t{});
    case Scalar::Float64: return f(double{});
    default: return f(float{});
  }
}

py::array to_numpy(Tensor& t) {
  realize_and_wait(t);
  return with_host_type(t.dtype(), [&](auto zero) -> py::array {
    using T = decltype(zero);
    std::vector<T> v;
    {
      py::gil_scoped_release nogil;
      v = t.to_vector<T>();
    }
    py::array_t<T> a(std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < v.size(); i++) a.mutable_data()[i] = v[i];
    } else if (!v.empty()) {
      std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
    }
    if (t.dtype() == dtypes::float16) return a.attr("astype")(numpy_dtype(t.dtype()));
    return a;
  });
}

py::object item(Tensor& t) {
  realize_and_wait(t);
  return with_host_type(t.dtype(), [&](auto zero) -> py::object {
    using T = decltype(zero);
    T v;
    {
      py::gil_scoped_release nogil;
      v = t.item<T>();
    }
    return py::cast(v);
  });
}

std::string values(Tensor& t) {
  realize_and_wait(t);
  py::gil_scoped_release nogil;
  return t.values_str();
}

py::tuple shape_tuple(const Tensor& t) { return py::cast(t.shape()).cast<py::tuple>(); }

// The creation functions' common keyword arguments.
auto dtype_none() { return py::arg("dtype") = py::none(); }
auto device_arg() { return py::arg("device") = py::none(); }

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<Tensor> t(m, "Tensor",
                       "A lazy tensor on one device: ops build a graph, realize() or a read runs it.");
  t.def(py::init([](py::handle data, py::handle dtype, py::handle device, bool requires_grad) {
          Tensor out = to_tensor(data, to_dtype(dtype, "Tensor"), to_device(device), "Tensor");
          if (requires_grad) out.requires_grad(true);
          return out;
        }),
        py::arg("data"), dtype_none(), device_arg(), py::arg("requires_grad") = false,
        "A tensor from a numpy array, a (nested) list or tuple, a scalar or another tensor. Python floats "
        "and ints become float32 and int32 unless dtype says otherwise; numpy arrays keep their dtype.");

  // ------------------------------------------------------------------ creation
  t.def_static(
       "empty",
       [](py::args s, py::handle dtype, py::handle device) {
         return Tensor::empty(to_shape(s, "empty"), to_dtype(dtype, "empty").value_or(dtypes::float32),
                              to_device(device));
       },
       dtype_none(), device_arg())
      .def_static(
          "zeros",
          [](py::args s, py::handle dtype, py::handle device) {
            return Tensor::zeros(to_shape(s, "zeros"), to_dtype(dtype, "zeros").value_or(dtypes::float32),
                                 to_device(device));
          },
          dtype_none(), device_arg())
      .def_static(
          "ones",
          [](py::args s, py::handle dtype, py::handle device) {
            return Tensor::ones(to_shape(s, "ones"), to_dtype(dtype, "ones").value_or(dtypes::float32),
                                to_device(device));
          },
          dtype_none(), device_arg())
      .def_static(
          "full",
          [](py::handle shape, py::handle fill, py::handle dtype, py::handle device) {
            auto n = to_number(fill, "full");
            if (!n) SLUICE_FAIL(DTypeError, "full") << "fill_value must be a Python scalar";
            return Tensor::full(to_shape(py::make_tuple(shape), "full"), *n, to_dtype(dtype, "full"),
                                to_device(device));
          },
          py::arg("shape"), py::arg("fill_value"), dtype_none(), device_arg())
      .def_static(
          "arange",
          [](py::handle start, py::handle stop, py::handle step, py::handle dtype, py::handle device) {
            auto a = to_number(start, "arange"), b = to_number(stop, "arange"), c = to_number(step, "arange");
            if (stop.is_none()) b = a, a = Number(0);
            if (!a || !b || !c) SLUICE_FAIL(DTypeError, "arange") << "start, stop and step must be scalars";
            return Tensor::arange(*a, *b, *c, to_dtype(dtype, "arange"), to_device(device));
          },
          py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1, dtype_none(), device_arg())
      .def_static(
          "linspace",
          [](double start, double stop, int64_t steps, py::handle dtype, py::handle device) {
            return Tensor::linspace(start, stop, steps, to_dtype(dtype, "linspace").value_or(dtypes::float32),
                                    to_device(device));
          },
          py::arg("start"), py::arg("stop"), py::arg("steps"), dtype_none(), device_arg())
      .def_static(
          "eye",
          [](int64_t n, std::optional<int64_t> mcols, py::handle dtype, py::handle device) {
            return Tensor::eye(n, mcols, to_dtype(dtype, "eye").value_or(dtypes::float32), to_device(device));
          },
          py::arg("n"), py::arg("m") = py::none(), dtype_none(), device_arg())
      .def_static(
          "rand",
          [](py::args s, py::handle seed, py::handle dtype, py::handle device) {
            return Tensor::rand(to_shape(s, "rand"), seed_or_next(seed),
                                to_dtype(dtype, "rand").value_or(dtypes::float32), to_device(device));
          },
          py::arg("seed") = py::none(), dtype_none(), device_arg(), "Uniform in [0, 1).")
      .def_static(
          "randn",
          [](py::args s, py::handle seed, py::handle dtype, py::handle device) {
            return Tensor::randn(to_shape(s, "randn"), seed_or_next(seed),
                                 to_dtype(dtype, "randn").value_or(dtypes::float32), to_device(device));
          },
          py::arg("seed") = py::none(), dtype_none(), device_arg(), "Standard normal.")
      .def_static(
          "randint",
          [](py::args s, int64_t low, int64_t high, py::handle seed, py::handle dtype, py::handle device) {
            return Tensor::randint(to_shape(s, "randint"), low, high, seed_or_next(seed),
                                   to_dtype(dtype, "randint").value_or(dtypes::int32), to_device(device));
          },
          py::arg("low") = 0, py::arg("high") = 10, py::arg("seed") = py::none(), dtype_none(), device_arg())
      .def_static(
          "uniform",
          [](py::args s, double low, double high, py::handle seed, py::handle dtype, py::handle device) {
            return Tensor::uniform(to_shape(s, "uniform"), low, high, seed_or_next(seed),
                                   to_dtype(dtype, "uniform").value_or(dtypes::float32), to_device(device));
          },
          py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("seed") = py::none(), dtype_none(),
          device_arg())
      .def_static(
          "normal",
          [](py::args s, double mean, double std, py::handle seed, py::handle dtype, py::handle device) {
            return Tensor::normal(to_shape(s, "normal"), mean, std, seed_or_next(seed),
                                  to_dtype(dtype, "normal").value_or(dtypes::float32), to_device(device));
          },
          py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("seed") = py::none(), dtype_none(),
          device_arg())
      .def(
          "full_like",
          [](const Tensor& self, py::handle fill, py::handle dtype) {
            auto n = to_number(fill, "full_like");
            if (!n) SLUICE_FAIL(DTypeError, "full_like") << "fill_value must be a Python scalar";
            return self.full_like(*n, to_dtype(dtype, "full_like"));
          },
          py::arg("fill_value"), dtype_none())
      .def(
          "zeros_like",
          [](const Tensor& self, py::handle dtype) { return self.zeros_like(to_dtype(dtype, "zeros_like")); },
          dtype_none())
      .def(
          "ones_like",
          [](const Tensor& self, py::handle dtype) { return self.ones_like(to_dtype(dtype, "ones_like")); },
          dtype_none());
  m.def(
      "manual_seed", [](uint64_t seed) { next_seed = seed; }, py::arg("seed"),
      "Where the seeds of rand/randn/... calls that give none start counting.");

  // ------------------------------------------------------------------ queries (never realize)
  t.def_property_readonly("shape", &shape_tuple)
      .def_property_readonly("dtype", [](const Tensor& self) { return self.dtype(); })
      .def_property_readonly("device", [](const Tensor& self) { return self.device(); })
      .def_property_readonly("ndim", [](const Tensor& self) { return self.ndim(); })
      .def("numel", [](const Tensor& self) { return self.numel(); })
      .def("element_size", [](const Tensor& self) { return self.dtype().itemsize(); })
      .def("nbytes", [](const Tensor& self) { return self.numel() * self.dtype().itemsize(); })
      .def("__len__",
           [](const Tensor& self) {
             if (self.ndim() == 0) SLUICE_FAIL(DTypeError, "len") << "len() of a 0-d tensor";
             return self.shape(0);
           })
      .def("__hash__", [](py::handle self) { return std::hash<const void*>{}(self.ptr()); })
      .def("__repr__", &values, "The values, as the C++ printer writes them (realizes).")
      .def("__str__", &values)
      .def("__iter__",
           [](const Tensor& self) {
             if (self.ndim() == 0) SLUICE_FAIL(DTypeError, "iter") << "iteration over a 0-d tensor";
             py::list rows;
             for (int64_t i = 0; i < self.shape(0); i++) rows.append(self.select(0, i));
             return py::iter(rows);
           })
      .def("__bool__",
           [](Tensor& self) {
             if (self.numel() != 1)
               SLUICE_FAIL(ValueError, "bool")
                   << "the truth value of a tensor of " << self.numel() << " elements is ambiguous";
             return item(self).cast<bool>();
           })
      .def("__float__", [](Tensor& self) { return item(self).cast<double>(); })
      .def("__int__", [](Tensor& self) { return item(self).cast<int64_t>(); })
      .def("__index__",
           [](Tensor& self) {
             if (!self.dtype().is_int())
               SLUICE_FAIL(DTypeError, "index") << "only integer tensors are indices";
             return item(self).cast<int64_t>();
           })
      .def("schedule_str", [](const Tensor& self) { return self.str(); });

  // ------------------------------------------------------------------ realizing and reading
  t.def(
       "realize",
       [](Tensor& self) -> Tensor& {
         py::gil_scoped_release nogil;
         self.realize();
         return self;
       },
       py::return_value_policy::reference,
       "Schedules and runs this tensor's kernels (returns once they are submitted; reads wait).")
      .def_static(
          "realize_all",
          [](const std::vector<Tensor*>& tensors) {
            py::gil_scoped_release nogil;
            Tensor::realize_all(tensors);
          },
          py::arg("tensors"),
          "realize() for several tensors of one device in one schedule (shared work runs once).")
      .def("numpy", &to_numpy,
           "The values as a new numpy array (realizes and waits; bfloat16 reads as float32).")
      .def(
          "__array__",
          [](Tensor& self, py::handle dtype) {
            py::array a = to_numpy(self);
            return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none())
      .def("tolist", [](Tensor& self) { return to_numpy(self).attr("tolist")(); })
      .def("item", &item, "The value of a one-element tensor as a Python scalar.")
      .def(
          "to", [](const Tensor& self, py::handle device) { return self.to(to_device(device)); },
          py::arg("device"), "This tensor on another device (a lazy copy; itself when already there).")
      .def(
          "cast", [](const Tensor& self, py::handle dtype) { return self.cast(*to_dtype(dtype, "cast")); },
          py::arg("dtype"))
      .def(
          "bitcast",
          [](const Tensor& self, py::handle dtype) { return self.bitcast(*to_dtype(dtype, "bitcast")); },
          py::arg("dtype"))
      .def("contiguous", &Tensor::contiguous)
      .def("detach", &Tensor::detach)
      .def("clone", [](const Tensor& self) { return self.contiguous(); })
      .def(
          "assign",
          [](Tensor& self, py::handle value) -> Tensor& {
            return self.assign(to_tensor(value, self.dtype(), self.device(), "assign"));
          },
          py::return_value_policy::reference, py::arg("value"),
          "Writes `value` into this tensor's buffer when realized (this tensor becomes the write).");

  // ------------------------------------------------------------------ gradients
  t.def_property(
       "requires_grad", [](const Tensor& self) { return self.requires_grad(); },
       [](Tensor& self, bool on) { self.requires_grad(on); })
      .def(
          "requires_grad_", [](Tensor& self, bool on) -> Tensor& { return self.requires_grad(on); },
          py::arg("requires_grad") = true, py::return_value_policy::reference)
      .def_property_readonly(
          "grad", [](const Tensor& self) { return self.grad(); },
          "The gradient backward() accumulated; None before any.")
      .def("zero_grad", &Tensor::zero_grad)
      .def(
          "backward",
          [](Tensor& self, std::optional<Tensor> gradient) {
            if (gradient)
              self.backward(*gradient);
            else
              self.backward();
          },
          py::arg("gradient") = py::none(),
          "Adds d(self)/d(t) to t.grad for every tensor t that requires grad (lazy tensors).");
  m.def("gradients", &gradients, py::arg("y"), py::arg("xs"), py::arg("y_grad") = py::none(),
        "d(y)/d(x) for each x of xs, as lazy tensors.");

  py::class_<NoGrad>(m, "_NoGrad");
  m.def(
      "_no_grad_enter", []() { return new NoGrad(); }, py::return_value_policy::take_ownership);
  m.def("_no_grad_active", &NoGrad::active);
}

}  // namespace sluice::python
