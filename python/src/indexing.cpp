// Python indexing: t[1], t[1:, ::2], t[..., None], t[idx] with an integer tensor or list. Applied left to
// right as the C++ ops it stands for (select, slice, unsqueeze, index_select), each on the axis the index
// has reached. There is no __setitem__: the C++ API has no strided write (assign() writes a whole tensor).
#include "bindings.h"

namespace sluice::python {

namespace {

std::optional<int64_t> opt_int(py::handle o) {
  if (o.is_none()) return std::nullopt;
  return py::int_(py::reinterpret_borrow<py::object>(o))
      .cast<int64_t>();  // numpy ints and tensors via __index__
}

bool is_int(py::handle o) {
  return !py::isinstance<Tensor>(o) && !PyBool_Check(o.ptr()) && PyIndex_Check(o.ptr()) &&
         !py::isinstance<py::sequence>(o);
}

Tensor getitem(const Tensor& self, py::handle key) {
  py::tuple items = py::isinstance<py::tuple>(key) ? key.cast<py::tuple>() : py::make_tuple(key);
  // How many of the tensor's axes the items consume, to know how many an Ellipsis stands for.
  int64_t consumed = 0, ellipses = 0;
  for (py::handle it : items) {
    if (it.is(py::ellipsis())) {
      ellipses++;
    } else if (!it.is_none()) {
      consumed++;
    }
  }
  if (ellipses > 1) SLUICE_FAIL(ShapeError, "getitem") << "an index can only have one ellipsis ('...')";
  if (consumed > self.ndim())
    SLUICE_FAIL(ShapeError, "getitem")
        << "too many indices: " << consumed << " for a tensor of " << self.ndim() << " dimensions";
  Tensor t = self;
  int64_t axis = 0;  // the axis of t the next item applies to
  bool gathered = false;
  for (py::handle it : items) {
    if (it.is(py::ellipsis())) {
      axis += self.ndim() - consumed;
    } else if (it.is_none()) {
      t = t.unsqueeze(axis++);
    } else if (py::isinstance<py::slice>(it)) {
      std::vector<Slice> slices(size_t(axis + 1));
      slices.back() = {opt_int(it.attr("start")), opt_int(it.attr("stop")),
                       opt_int(it.attr("step")).value_or(1)};
      t = t.slice(slices);
      axis++;
    } else if (is_int(it)) {
      int64_t i = py::int_(py::reinterpret_borrow<py::object>(it)).cast<int64_t>();
      int64_t n = t.shape(axis);
      if (i < -n || i >= n)
        SLUICE_FAIL(ShapeError, "getitem")
            << "index " << i << " is out of bounds for axis " << axis << " with size " << n;
      t = t.select(axis, i);
    } else {
      // An integer tensor, or a list/array of ints made into one on this tensor's device.
      if (gathered)
        SLUICE_FAIL(ShapeError, "getitem") << "only one tensor index is supported (numpy's broadcast "
                                              "advanced indexing of several is not)";
      Tensor idx = to_tensor(it, std::nullopt, t.device(), "getitem");
      if (!idx.dtype().is_int())
        SLUICE_FAIL(DTypeError, "getitem")
            << "a tensor index must hold integers, got " << dtype_name(idx.dtype())
            << " (boolean masks give data-dependent shapes)";
      gathered = true;
      t = t.index_select(axis, idx);
      axis += idx.ndim();
    }
  }
  return t;
}

}  // namespace

void bind_indexing(py::module_& m) {
  py::class_<Tensor>(m.attr("Tensor")).def("__getitem__", &getitem, py::arg("key"));
}

}  // namespace sluice::python
