// The extension module sluice._sluice; python/sluice/__init__.py re-exports it with a little sugar.
#include <sluice/version.h>

#include "bindings.h"

PYBIND11_MODULE(_sluice, m) {
  using namespace sluice::python;
  m.doc() = "sluice: a lazy tensor runtime (C++), its Python binding";
  m.attr("__version__") = SLUICE_VERSION_STRING;
  bind_errors(m);  // first: the translators must exist before anything can throw
  bind_dtype(m);
  bind_device(m);
  bind_tensor(m);
  bind_tensor_ops(m);
  bind_indexing(m);
  bind_dlpack(m);
  bind_jit(m);
  bind_onnx(m);
  bind_nn(m);
  bind_optim(m);
}
