// The OpenCL backend of a build without OpenCL headers: always absent, with the reason.
#include "backends/opencl/compiler.h"
#include "backends/opencl/device.h"
#include "base/error.h"

namespace sluice::opencl {

std::string absent_reason() { return "built without OpenCL headers"; }

std::unique_ptr<hcq::Device> open_device(int) { SLUICE_FAIL(DeviceError, "open_device") << absent_reason(); }

render::Target target(const hcq::Device&) { SLUICE_FAIL(DeviceError, "target") << absent_reason(); }

std::unique_ptr<hcq::Compiler> make_compiler(const std::filesystem::path&, int) {
  SLUICE_FAIL(DeviceError, "make_compiler") << absent_reason();
}

}  // namespace sluice::opencl
