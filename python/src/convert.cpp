// Python values into the C++ API's arguments. Data goes through numpy: a list, a scalar or an array
// becomes one C-contiguous numpy array, whose bytes are copied once into the HostBuffer a new tensor is
// made from (Tensor::from_host), whatever the dtype.
#include <pybind11/numpy.h>

#include <cstring>

#include "bindings.h"
#include "runtime/buffer.h"

namespace sluice::python {

namespace {

const py::module_& numpy() {
  static py::module_* np = new py::module_(py::module_::import("numpy"));  // kept for the process
  return *np;
}

bool is_instance(py::handle o, const char* numpy_type) {
  return PyObject_IsInstance(o.ptr(), numpy().attr(numpy_type).ptr()) == 1;
}

std::string type_name(py::handle o) { return py::str(py::type::of(o).attr("__name__")).cast<std::string>(); }

// The dtype a Python list or scalar of this numpy kind becomes: Python floats and ints take the default
// dtypes of their kind (float32, int32), as they do in the reference design and in the C++ API's Number.
py::dtype default_for(const py::array& a) {
  char kind = a.dtype().kind();
  if (kind == 'f') return py::dtype("float32");
  if (kind == 'i' || kind == 'u') return py::dtype("int32");
  return a.dtype();
}

}  // namespace

std::optional<Number> to_number(py::handle o, const char* fn) {
  if (PyBool_Check(o.ptr()) || is_instance(o, "bool_")) return Number(bool(PyObject_IsTrue(o.ptr())));
  if (PyLong_Check(o.ptr()) || is_instance(o, "integer")) {
    int overflow = 0;
    long long v =
        PyLong_AsLongLongAndOverflow(py::int_(py::reinterpret_borrow<py::object>(o)).ptr(), &overflow);
    if (overflow != 0)
      SLUICE_FAIL(ValueError, fn) << "integer " << py::str(o).cast<std::string>() << " does not fit in int64";
    return Number(int64_t(v));
  }
  if (PyFloat_Check(o.ptr()) || is_instance(o, "floating"))
    return Number(PyFloat_AsDouble(py::float_(py::reinterpret_borrow<py::object>(o)).ptr()));
  return std::nullopt;
}

Operand to_operand(py::handle o, const char* fn) {
  if (py::isinstance<Tensor>(o)) return o.cast<Tensor>();
  if (auto n = to_number(o, fn)) return *n;
  SLUICE_FAIL(DTypeError, fn) << "expected a Tensor or a Python scalar, got " << type_name(o);
}

std::string to_device(py::handle o) {
  if (o.is_none()) return default_device();
  if (!py::isinstance<py::str>(o))
    SLUICE_FAIL(DeviceError, "device") << "expected a device name such as 'CPU', got " << type_name(o);
  return canonical_device(o.cast<std::string>());
}

Shape to_shape(const py::args& args, const char* fn) {
  py::sequence seq = args;
  if (args.size() == 1 && !to_number(args[0], fn)) {
    if (!py::isinstance<py::sequence>(args[0]))
      SLUICE_FAIL(ShapeError, fn) << "expected a shape (ints or a sequence of ints), got "
                                  << type_name(args[0]);
    seq = args[0].cast<py::sequence>();
  }
  Shape shape;
  for (py::handle v : seq) {
    auto n = to_number(v, fn);
    if (!n || n->kind != Number::Kind::Int)
      SLUICE_FAIL(ShapeError, fn) << "shape entries must be ints, got " << type_name(v);
    shape.push_back(n->i);
  }
  return shape;
}

Shape to_axes(py::handle o) {
  if (o.is_none()) return {};
  if (py::isinstance<py::int_>(o)) return {o.cast<int64_t>()};
  return o.cast<Shape>();
}

Tensor to_tensor(py::handle o, std::optional<DType> dtype, const std::string& device, const char* fn) {
  if (py::isinstance<Tensor>(o)) {
    Tensor t = o.cast<Tensor>();
    if (dtype && *dtype != t.dtype()) t = t.cast(*dtype);
    return t.device() == device ? t : t.to(device);
  }
  const bool is_array = py::isinstance<py::array>(o);
  py::array a;
  try {
    a = numpy().attr("asarray")(o);
  } catch (py::error_already_set& e) {
    SLUICE_FAIL(ValueError, fn) << "cannot make a tensor from " << type_name(o) << ": " << e.what();
  }
  char kind = a.dtype().kind();
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f')
    SLUICE_FAIL(DTypeError, fn) << "cannot make a tensor from " << type_name(o) << " of numpy dtype "
                                << py::str(a.dtype()).cast<std::string>();
  const DType want = dtype ? *dtype : *to_dtype(is_array ? a.dtype() : default_for(a), fn);
  // numpy has no bfloat16: such data goes through float32 and is rounded here.
  const bool bf16 = want.scalar == Scalar::BFloat16;
  // asarray, not ascontiguousarray: that one turns a 0-d array into a 1-d one.
  a = numpy().attr("asarray")(a, bf16 ? py::dtype("float32") : numpy_dtype(want), "C");
  auto host = std::make_shared<HostBuffer>();
  host->dtype = want;
  host->size = int64_t(a.size());
  host->bytes.resize(size_t(host->size) * size_t(want.itemsize()));
  if (bf16) {
    const float* src = static_cast<const float*>(a.data());
    for (int64_t i = 0; i < host->size; i++) {
      uint16_t bits = float_to_bf16_bits(src[i]);
      std::memcpy(host->bytes.data() + 2 * i, &bits, 2);
    }
  } else if (!host->bytes.empty()) {
    std::memcpy(host->bytes.data(), a.data(), host->bytes.size());
  }
  return Tensor::from_host(std::move(host), Shape(a.shape(), a.shape() + a.ndim()), device);
}

}  // namespace sluice::python
