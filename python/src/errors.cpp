// sluice::Error and its subclasses as Python exceptions with the C++ message unchanged. Each class also
// derives from the builtin a Python caller would catch for that mistake (a bad shape is a ValueError, and
// an IndexError for an index out of range; a wrong dtype a TypeError; a device or queue failure a
// RuntimeError; a timed-out wait a TimeoutError), so code written against numpy's exceptions keeps working.
#include "bindings.h"
#include "hcq/error.h"

namespace sluice::python {

namespace {

// The classes, created once at import and kept for the process (the translator outlives any module
// reference a caller holds).
struct Classes {
  PyObject *error, *shape, *dtype, *value, *device, *queue, *timeout, *fault, *compile;
};
Classes classes;

PyObject* new_class(py::module_& m, const char* name, const char* doc,
                    std::initializer_list<PyObject*> bases) {
  py::tuple t(bases.size());
  size_t i = 0;
  for (PyObject* b : bases) t[i++] = py::reinterpret_borrow<py::object>(b);
  std::string qualified = std::string("sluice.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, t.ptr(), nullptr);
  if (!cls) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(cls));
  return cls;
}

}  // namespace

void bind_errors(py::module_& m) {
  Classes& c = classes;
  c.error = new_class(m, "Error", "Every error sluice raises (sluice::Error).", {PyExc_Exception});
  c.shape = new_class(m, "ShapeError", "Shapes, axes, indices out of range (sluice::ShapeError).",
                      {c.error, PyExc_ValueError, PyExc_IndexError});
  c.dtype = new_class(m, "DTypeError", "An op on a dtype it does not accept (sluice::DTypeError).",
                      {c.error, PyExc_TypeError});
  c.value =
      new_class(m, "ValueError", "A bad argument value (sluice::ValueError).", {c.error, PyExc_ValueError});
  c.device = new_class(m, "DeviceError", "Unknown or absent device, driver failure (sluice::DeviceError).",
                       {c.error, PyExc_RuntimeError});
  c.queue = new_class(m, "QueueError", "Misuse or failure of a device queue (sluice::hcq::Error).",
                      {c.error, PyExc_RuntimeError});
  c.timeout = new_class(m, "TimeoutError", "A wait that ran out of time (sluice::hcq::TimeoutError).",
                        {c.queue, PyExc_TimeoutError});
  c.fault =
      new_class(m, "FaultError", "A device fault or a hung kernel (sluice::hcq::FaultError).", {c.queue});
  c.compile =
      new_class(m, "CompileError", "A kernel that did not compile (sluice::hcq::CompileError).", {c.queue});

  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    // Most derived first: a catch clause takes the first base that matches.
    try {
      std::rethrow_exception(p);
    } catch (const hcq::TimeoutError& e) {
      PyErr_SetString(classes.timeout, e.what());
    } catch (const hcq::FaultError& e) {
      PyErr_SetString(classes.fault, e.what());
    } catch (const hcq::CompileError& e) {
      PyErr_SetString(classes.compile, e.what());
    } catch (const hcq::Error& e) { PyErr_SetString(classes.queue, e.what()); } catch (const ShapeError& e) {
      PyErr_SetString(classes.shape, e.what());
    } catch (const DTypeError& e) { PyErr_SetString(classes.dtype, e.what()); } catch (const ValueError& e) {
      PyErr_SetString(classes.value, e.what());
    } catch (const DeviceError& e) { PyErr_SetString(classes.device, e.what()); } catch (const Error& e) {
      PyErr_SetString(classes.error, e.what());
    }
  });
}

}  // namespace sluice::python
