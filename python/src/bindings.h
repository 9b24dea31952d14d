#pragma once
// What the binding's files share: one bind_* function per concept (module.cpp calls them in order, so
// that each file's signatures can name the types bound before it), and the conversions from Python
// values every op takes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <variant>

#include "base/error.h"
#include "runtime/tensor.h"

namespace sluice::python {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_dtype(py::module_& m);
void bind_device(py::module_& m);
void bind_tensor(py::module_& m);      // the class, creation, conversion to numpy and lists
void bind_tensor_ops(py::module_& m);  // the methods of runtime/tensor.h and the operators
void bind_indexing(py::module_& m);
void bind_dlpack(py::module_& m);
void bind_jit(py::module_& m);
void bind_onnx(py::module_& m);
void bind_nn(py::module_& m);
void bind_optim(py::module_& m);

// ------------------------------------------------------------------- conversions (convert.cpp)
// A Python scalar (bool, int, float, or a numpy scalar of those kinds) as a Number; nullopt for anything
// else. An int outside int64 raises sluice.ValueError naming `fn`.
std::optional<Number> to_number(py::handle o, const char* fn);
// A binary op's right operand: a Tensor or a scalar; else sluice.DTypeError (a TypeError) naming `fn`
// and the Python type.
using Operand = std::variant<Tensor, Number>;
Operand to_operand(py::handle o, const char* fn);
// A sluice.dtype, a dtype name ("float32"), a numpy dtype or a numpy scalar type; None gives nullopt.
std::optional<DType> to_dtype(py::handle o, const char* fn);
// None: the default device; else the canonical spelling of the name given.
std::string to_device(py::handle o);
// A shape given as separate ints (`zeros(2, 3)`) or as one sequence (`zeros((2, 3))`).
Shape to_shape(const py::args& args, const char* fn);
// None: every axis ({}); an int; a sequence of ints.
Shape to_axes(py::handle o);
// Any of: a Tensor (as is, or moved/cast when device/dtype say so), a numpy array, a (nested) list or
// tuple, a Python or numpy scalar. `fn` names the caller in errors.
Tensor to_tensor(py::handle o, std::optional<DType> dtype, const std::string& device, const char* fn);
// The numpy dtype a sluice dtype reads back as (bfloat16 as float32: numpy has none).
py::dtype numpy_dtype(DType d);
// The Python name of a dtype: "float32", "bfloat16", "bool".
std::string dtype_name(DType d);

// ------------------------------------------------------------------- waiting (wait.cpp)
// Realizes `t` with the GIL released, then waits for its device with the GIL released in slices, and
// between slices checks for Python signals (Ctrl-C): a pending KeyboardInterrupt is raised as
// py::error_already_set while the device keeps its work (the next wait finishes it).
void realize_and_wait(Tensor& t);
// Waits for the work submitted so far on `device` as above.
void wait_for_device(const std::string& device);

}  // namespace sluice::python
