// Devices from Python: sluice.devices() (every kind this build knows, with why one is absent), the
// default device, synchronize(), and the hang timeout.
#include <chrono>

#include "bindings.h"
#include "hcq/device.h"
#include "runtime/device.h"
#include "runtime/device_name.h"

namespace sluice::python {

namespace {

// One row of sluice.devices(). `available` is true only when the device opened: a backend compiled in
// can still lack its driver or hardware, and then the open's error is the reason.
struct PyDeviceInfo {
  std::string name;
  bool available;
  std::string reason;
};

std::vector<PyDeviceInfo> devices() {
  std::vector<PyDeviceInfo> out;
  for (const DeviceInfo& d : list_devices()) {
    PyDeviceInfo row{d.name, d.available, d.reason};
    if (row.available) {
      try {
        py::gil_scoped_release nogil;  // opening a GPU API can take a second
        open_device(d.name);
      } catch (const Error& e) {
        row.available = false;
        row.reason = e.what();
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

void bind_device(py::module_& m) {
  py::class_<hcq::Properties>(m, "DeviceProperties", "What a device reports about itself.")
      .def_readonly("device_name", &hcq::Properties::device_name)
      .def_readonly("vendor", &hcq::Properties::vendor)
      .def_readonly("driver_version", &hcq::Properties::driver_version)
      .def_readonly("memory_bytes", &hcq::Properties::memory_bytes)
      .def_readonly("max_workgroup_size", &hcq::Properties::max_workgroup_size)
      .def_readonly("local_memory_bytes", &hcq::Properties::local_memory_bytes)
      .def_readonly("max_buffers", &hcq::Properties::max_buffers)
      .def_readonly("float16", &hcq::Properties::float16)
      .def_readonly("bfloat16", &hcq::Properties::bfloat16)
      .def_readonly("int64", &hcq::Properties::int64)
      .def_readonly("float64", &hcq::Properties::float64)
      .def_readonly("software", &hcq::Properties::software)
      .def("__repr__", [](const hcq::Properties& p) {
        return "DeviceProperties(device_name='" + p.device_name + "', vendor='" + p.vendor +
               "', memory_bytes=" + std::to_string(p.memory_bytes) +
               ", software=" + (p.software ? "True" : "False") + ")";
      });

  py::class_<PyDeviceInfo>(m, "DeviceInfo", "A device kind of this build: whether it opened, and why not.")
      .def_readonly("name", &PyDeviceInfo::name)
      .def_readonly("available", &PyDeviceInfo::available)
      .def_readonly("reason", &PyDeviceInfo::reason)
      .def_property_readonly(
          "properties",
          [](const PyDeviceInfo& d) -> std::optional<hcq::Properties> {
            if (!d.available) return std::nullopt;
            return open_device(d.name).properties();
          },
          "The device's properties; None when it is absent.")
      .def("__repr__", [](const PyDeviceInfo& d) {
        return "DeviceInfo(name='" + d.name + "', available=" + (d.available ? "True" : "False") +
               (d.available ? "" : ", reason='" + d.reason + "'") + ")";
      });

  m.def("devices", &devices,
        "Every device kind this build knows, in the default device's order of preference; each says "
        "whether it opened and, if not, why. Opens the available ones.");
  m.def("default_device", &default_device,
        "The device tensors are created on when none is named: $SLUICE_DEVICE, else the first available "
        "real device, then CPU, then software emulations.");
  m.def(
      "canonical_device", [](const std::string& name) { return canonical_device(name); }, py::arg("name"),
      "The one spelling of a device name every tensor carries: 'cpu:0' -> 'CPU'.");
  m.def(
      "synchronize",
      [](py::handle device) {
        if (!device.is_none()) return wait_for_device(to_device(device));
        for (hcq::Device* d : open_devices()) wait_for_device(d->name());
      },
      py::arg("device") = py::none(),
      "Waits until the work submitted so far has finished, on the device named or on every device "
      "opened so far. Releases the GIL; Ctrl-C raises KeyboardInterrupt and leaves the work running.");
  m.def(
      "set_hang_timeout",
      [](double seconds) { set_hang_timeout(std::chrono::nanoseconds(int64_t(seconds * 1e9))); },
      py::arg("seconds"),
      "How long a kernel may go without progress before a wait declares it hung (0: never); overrides "
      "$SLUICE_HANG_TIMEOUT.");
}

}  // namespace sluice::python
