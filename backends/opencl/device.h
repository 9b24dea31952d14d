#pragma once
// The OpenCL device (DESIGN.md §4): any OpenCL 1.2+ driver reached through libOpenCL.so.1, loaded at run
// time (driver.h). Devices of every platform are numbered in one list: `CL` is device 0, `CL:<n>` device
// n. Queues: compute queue 0 and copy queue 0, each an in-order cl_command_queue (queue.h); buffers are
// cl_mem behind a handle table (allocator.h); kernels are OpenCL C (renderers/opencl.h) built by the
// driver and cached on disk (compiler.h).
#include <memory>
#include <string>

#include "hcq/device.h"
#include "renderers/renderer.h"

namespace sluice::opencl {

// Why no OpenCL device can be opened ("" if one can): no libOpenCL.so.1, no platform, no device, or a
// build without OpenCL headers ("built without OpenCL headers").
std::string absent_reason();
// Throws DeviceError with absent_reason() or for an ordinal past the devices present.
std::unique_ptr<hcq::Device> open_device(int ordinal = 0);
// OpenCL C with the device's limits: 3 launch dimensions, its work-group and local memory sizes, half
// where it has cl_khr_fp16.
render::Target target(const hcq::Device& dev);

}  // namespace sluice::opencl
