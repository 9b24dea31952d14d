// DLPack (dlpack/dlpack.h, version 0.6, the protocol numpy >= 1.22 and PyTorch speak).
//
// Export, t.__dlpack__(): zero-copy for devices whose buffers the host addresses directly (CPU, where a
// buffer's device address is a host pointer). The tensor is realized into a dense buffer and the device
// waited for; the capsule keeps that buffer (and the tensor) alive until the consumer calls the deleter.
// Other devices raise DeviceError: their memory is not host-accessible, and a silent copy would break
// the zero-copy promise (t.to('CPU') makes the copy explicit).
//
// Import, sluice.from_dlpack(x): zero-copy onto a device whose addresses are host pointers (CPU): the
// exporter's memory becomes the tensor's buffer (Buffer::adopt), so both see each other's writes, and the
// exporter's deleter runs once the buffer's last user is gone and the device is done with it. Onto
// another device, or from memory not aligned to its element, the data is copied once.
#include <dlpack/dlpack.h>

#include <cstring>

#include "bindings.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/device_name.h"

namespace sluice::python {

namespace {

// Gives an imported tensor back to its exporter; its deleter DECREFs a Python object, so it needs the GIL.
// The last reference may drop on a thread that released the GIL while it holds a runtime lock (inside
// realize): taking the GIL there could deadlock against a Python thread waiting for that lock, so such a
// thread hands the deleter to the interpreter (Py_AddPendingCall), which runs it at its next check. At
// interpreter exit the exporter is gone already.
int run_deleter(void* m) {
  auto* t = static_cast<DLManagedTensor*>(m);
  t->deleter(t);
  return 0;
}
void give_back(DLManagedTensor* m) {
  if (!m->deleter || !Py_IsInitialized() || _Py_IsFinalizing()) return;
  if (PyGILState_Check()) {
    m->deleter(m);
  } else if (Py_AddPendingCall(&run_deleter, m) != 0) {  // the pending-call queue is full: rare
    py::gil_scoped_acquire gil;
    m->deleter(m);
  }
}

struct Exported {
  Tensor tensor;
  std::shared_ptr<Buffer> buffer;
  std::vector<int64_t> shape;
  DLManagedTensor managed{};
};

DLDataType dl_dtype(DType d) {
  SLUICE_CHECK_IN(DTypeError, "__dlpack__", !d.is_bool())
      << "DLPack 0.6 has no bool type: cast the tensor to uint8 first";
  uint8_t code = d.is_float()      ? (d.scalar == Scalar::BFloat16 ? kDLBfloat : kDLFloat)
                 : d.is_unsigned() ? kDLUInt
                                   : kDLInt;
  return DLDataType{code, uint8_t(d.itemsize() * 8), 1};
}

DType from_dl(DLDataType t) {
  SLUICE_CHECK_IN(DTypeError, "from_dlpack", t.lanes == 1)
      << "vector types (lanes " << int(t.lanes) << ") are not supported";
  for (DType d : dtypes::all()) {
    if (d.is_bool() || d.itemsize() * 8 != t.bits) continue;
    uint8_t code = d.is_float()      ? (d.scalar == Scalar::BFloat16 ? kDLBfloat : kDLFloat)
                   : d.is_unsigned() ? kDLUInt
                                     : kDLInt;
    if (code == t.code) return d;
  }
  SLUICE_FAIL(DTypeError, "from_dlpack")
      << "unsupported DLPack dtype (code " << int(t.code) << ", " << int(t.bits) << " bits)";
}

bool host_accessible(const std::string& device) { return open_device(device).properties().host_addressable; }

// The dense, realized CPU buffer behind t. A lazy t is realized in place, so that it keeps that buffer
// (every export and data_ptr() then names the same memory); a view (a slice, a transpose) is copied into
// a new dense buffer each time.
std::pair<Tensor, std::shared_ptr<Buffer>> host_buffer_of(Tensor& t, const char* fn) {
  SLUICE_CHECK_IN(DeviceError, fn, host_accessible(t.device()))
      << t.device() << " memory is not host-accessible; copy the tensor first: t.to('CPU')";
  if (!t.dense_buffer()) realize_and_wait(t);
  Tensor c = t.dense_buffer() ? t : t.contiguous();
  realize_and_wait(c);
  UOp buf = c.dense_buffer();
  SLUICE_ASSERT(buf);
  std::shared_ptr<Buffer> b;
  {
    py::gil_scoped_release nogil;
    b = ensure_device_buffer(buf, open_device(c.device()));
    b->addr();  // allocates and copies in host data on first use
    synchronize(c.device());
  }
  return {c, b};
}

py::capsule to_dlpack(Tensor& t) {
  auto [c, b] = host_buffer_of(t, "__dlpack__");
  auto* e = new Exported{c, b, c.shape(), {}};
  DLTensor& dl = e->managed.dl_tensor;
  dl.data = reinterpret_cast<void*>(b->addr());
  dl.device = DLDevice{kDLCPU, 0};
  dl.ndim = int32_t(e->shape.size());
  dl.dtype = dl_dtype(c.dtype());
  dl.shape = e->shape.data();
  dl.strides = nullptr;  // compact row-major
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
  // A capsule nobody consumed (still named "dltensor") frees the tensor itself.
  return py::capsule(&e->managed, "dltensor", [](PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    m->deleter(m);
  });
}

Tensor from_dlpack(py::object x, py::handle device) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (!py::hasattr(x, "__dlpack__"))
    SLUICE_FAIL(DTypeError, "from_dlpack")
        << "expected an object with __dlpack__ (a numpy array, a PyTorch tensor), got "
        << py::str(py::type::of(x).attr("__name__")).cast<std::string>();
  py::capsule cap = x.attr("__dlpack__")();
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (!m) throw py::error_already_set();
  const DLTensor& dl = m->dl_tensor;
  // Consumed from here on: the deleter is ours to call, and the capsule must not call it again.
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  struct Release {  // until the adopting buffer takes it over
    DLManagedTensor* m;
    ~Release() {
      if (m && m->deleter) m->deleter(m);
    }
  } release{m};
  SLUICE_CHECK_IN(DeviceError, "from_dlpack", dl.device.device_type == kDLCPU)
      << "only host (kDLCPU) memory can be imported, got DLPack device type " << int(dl.device.device_type);
  const DType dtype = from_dl(dl.dtype);
  Shape shape(dl.shape, dl.shape + dl.ndim);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (dl.strides) {  // only row-major compact data: a strided view would need a gather the copy cannot do
    int64_t expect = 1;
    for (int i = dl.ndim - 1; i >= 0; i--) {
      SLUICE_CHECK_IN(ValueError, "from_dlpack", shape[i] == 1 || dl.strides[i] == expect)
          << "only C-contiguous tensors can be imported (axis " << i << " has stride " << dl.strides[i]
          << ", expected " << expect << "); make it contiguous first";
      expect *= shape[i];
    }
  }
  const std::string name = to_device(device);
  hcq::Device& dev = open_device(name);
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  if (dev.properties().host_addressable && reinterpret_cast<uintptr_t>(data) % dtype.itemsize() == 0) {
    auto buffer = Buffer::adopt(dev, dtype, n, data, [m] { give_back(m); });
    release.m = nullptr;
    Tensor t = Tensor::empty(shape, dtype, name);
    attach_device_buffer(t.dense_buffer(), std::move(buffer));
    return t;
  }
  auto host = std::make_shared<HostBuffer>();
  host->dtype = dtype;
  host->size = n;
  host->bytes.resize(size_t(n) * size_t(dtype.itemsize()));
  if (n)
    std::memcpy(host->bytes.data(), static_cast<const char*>(dl.data) + dl.byte_offset, host->bytes.size());
  return Tensor::from_host(std::move(host), shape, to_device(device));
}

}  // namespace

void bind_dlpack(py::module_& m) {
  py::class_<Tensor>(m.attr("Tensor"))
      .def(
          "__dlpack__", [](Tensor& t, py::handle /*stream*/) { return to_dlpack(t); },
          py::arg("stream") = py::none(),
          "A DLPack capsule over this tensor's CPU buffer, without copying (realizes and waits). "
          "DeviceError on devices whose memory the host cannot address.")
      .def("__dlpack_device__",
           [](const Tensor& t) {
             SLUICE_CHECK_IN(DeviceError, "__dlpack_device__", host_accessible(t.device()))
                 << t.device() << " memory is not host-accessible; copy the tensor first: t.to('CPU')";
             return py::make_tuple(int(kDLCPU), 0);
           })
      .def(
          "data_ptr", [](Tensor& t) { return host_buffer_of(t, "data_ptr").second->addr(); },
          "The host address of this tensor's dense CPU buffer (realizes and waits; what __dlpack__ "
          "exports).");
  m.def("from_dlpack", &from_dlpack, py::arg("x"), py::arg("device") = py::none(),
        "A tensor from any object with __dlpack__ (numpy arrays, PyTorch CPU tensors): on the CPU device "
        "it uses the object's memory without copying (writes show on both sides); on other devices, or "
        "for memory not aligned to its element, it copies once. A sluice Tensor is returned as is.");
}

}  // namespace sluice::python
