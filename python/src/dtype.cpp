// sluice.dtype: the scalar dtypes as module attributes (sluice.float32, sluice.bool_ ...), named as numpy
// and PyTorch name them rather than by their C names ("float" in sluice::DType::name()).
#include <pybind11/numpy.h>

#include <array>
#include <utility>

#include "bindings.h"

namespace sluice::python {

namespace {

// The Python names, one per value scalar (dtypes::all()).
constexpr std::array<std::pair<Scalar, const char*>, 13> kNames{{
    {Scalar::Bool, "bool"},
    {Scalar::Int8, "int8"},
    {Scalar::UInt8, "uint8"},
    {Scalar::Int16, "int16"},
    {Scalar::UInt16, "uint16"},
    {Scalar::Int32, "int32"},
    {Scalar::UInt32, "uint32"},
    {Scalar::Int64, "int64"},
    {Scalar::UInt64, "uint64"},
    {Scalar::Float16, "float16"},
    {Scalar::BFloat16, "bfloat16"},
    {Scalar::Float32, "float32"},
    {Scalar::Float64, "float64"},
}};

}  // namespace

std::string dtype_name(DType d) {
  for (auto [s, name] : kNames)
    if (d == DType{s}) return name;
  return d.name();  // vectors and pointers never reach Python; keep their C++ spelling if one does
}

py::dtype numpy_dtype(DType d) {
  if (d.scalar == Scalar::BFloat16) return py::dtype("float32");
  return py::dtype(dtype_name(d));
}

std::optional<DType> to_dtype(py::handle o, const char* fn) {
  if (o.is_none()) return std::nullopt;
  if (py::isinstance<DType>(o)) return o.cast<DType>();
  std::string name;
  if (py::isinstance<py::str>(o)) {
    name = o.cast<std::string>();
  } else {
    // numpy dtypes, numpy scalar types (np.float32) and Python's float/int/bool, through numpy's own
    // reading of them.
    try {
      name = py::dtype::from_args(py::reinterpret_borrow<py::object>(o)).attr("name").cast<std::string>();
    } catch (py::error_already_set&) {
      SLUICE_FAIL(DTypeError, fn) << "expected a dtype (sluice.float32, 'float32', numpy.float32), got "
                                  << py::str(py::type::of(o)).cast<std::string>();
    }
  }
  for (auto [s, n] : kNames)
    if (name == n) return DType{s};
  if (auto d = dtypes::from_name(name)) return *d;
  SLUICE_FAIL(DTypeError, fn) << "unknown dtype '" << name << "'";
}

void bind_dtype(py::module_& m) {
  py::class_<DType>(m, "dtype", "A tensor element type: sluice.float32, sluice.int64, ...")
      .def(py::init([](py::handle o) { return *to_dtype(o, "dtype"); }), py::arg("name"))
      .def_property_readonly("name", &dtype_name)
      .def_property_readonly("itemsize", &DType::itemsize)
      .def_property_readonly("is_float", &DType::is_float)
      .def_property_readonly("is_int", &DType::is_int)
      .def_property_readonly("is_unsigned", &DType::is_unsigned)
      .def_property_readonly("is_bool", &DType::is_bool)
      .def_property_readonly("numpy", &numpy_dtype, "The numpy dtype values read back as.")
      .def("__eq__",
           [](DType a, py::handle b) {
             if (py::isinstance<DType>(b)) return a == b.cast<DType>();
             try {
               return to_dtype(b, "dtype") == a;  // sluice.float32 == 'float32' == numpy.float32
             } catch (const Error&) { return false; }
           })
      .def("__hash__", [](DType d) { return std::hash<DType>{}(d); })
      .def("__repr__", [](DType d) { return "sluice." + dtype_name(d); })
      .def("__str__", &dtype_name);

  for (auto [s, name] : kNames) m.attr(name == std::string("bool") ? "bool_" : name) = DType{s};
  m.attr("half") = dtypes::float16;
  m.attr("double") = dtypes::float64;
}

}  // namespace sluice::python
