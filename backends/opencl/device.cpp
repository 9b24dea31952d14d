#include "backends/opencl/device.h"

#include "backends/opencl/allocator.h"
#include "backends/opencl/compiler.h"
#include "backends/opencl/driver.h"
#include "backends/opencl/program.h"
#include "backends/opencl/queue.h"
#include "hcq/processor_device.h"
#include "renderers/opencl.h"

namespace sluice::opencl {
namespace {

bool has_extension(cl_device_id d, const std::string& ext) {
  const std::string all = " " + device_string(d, CL_DEVICE_EXTENSIONS) + " ";
  return all.find(" " + ext + " ") != std::string::npos;
}

class Device final : public hcq::ProcessorDevice {
 public:
  Device(std::string name, int ordinal)
      : hcq::ProcessorDevice(std::move(name)),
        ctx_(std::make_shared<const Context>(ordinal)),
        programs_(*ctx_),
        queues_(make_queues(*ctx_, mem_, this->name())) {
    allocator_ = make_allocator(*this, *ctx_, mem_, host_queue(*queues_));
    compiler_ = make_compiler(ctx_);
    props_ = query();
    start_queues();
  }

  // Queues drain before the allocator's cache is released and the context goes. Queues the driver did
  // not finish within the hang timeout stay alive (their kernels may still run), and so does the context.
  ~Device() override {
    if (!stop_queues()) {
      (void)new std::shared_ptr<Queues>(queues_);
      (void)new std::shared_ptr<const Context>(ctx_);
    }
    release_queues();
    allocator_.reset();
  }

  hcq::Properties properties() const override { return props_; }

  std::string why_no_reset() const override {
    return "OpenCL cannot stop a running kernel, and the driver's threads stay busy with it: nothing is "
           "reset";
  }

  // The queues apply finished segments in the driver's callbacks (queue.h): a waiter sleeps on the
  // signal itself and wakes from the callback's write.
  void wait_in_driver(const hcq::Signal&, uint64_t, hcq::Clock::time_point) override {}

  std::unique_ptr<hcq::Program> load_program(const std::string& name, const hcq::Binary& binary,
                                             hcq::KernelLayout layout) override {
    return programs_.load(*this, name, binary, layout);
  }

 protected:
  std::unique_ptr<hcq::CommandProcessor> make_queue(int k, hcq::CommandProcessor::Config cfg) override {
    return start_queue(*queues_, std::move(cfg), k);
  }

 private:
  hcq::Properties query() const {
    const cl_device_id d = ctx_->device;
    hcq::Properties p;
    p.device_name = ctx_->device_name;
    p.vendor = ctx_->vendor;
    p.driver_version = ctx_->driver_version;
    p.memory_bytes = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    p.max_workgroup_size = uint32_t(device_value<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));
    p.local_memory_bytes = device_value<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
    // A buffer is two arguments (handle, offset: 16 bytes) within CL_DEVICE_MAX_PARAMETER_SIZE (>= 1024).
    p.max_buffers = uint32_t(device_value<size_t>(d, CL_DEVICE_MAX_PARAMETER_SIZE) / 16);
    p.float16 = has_extension(d, "cl_khr_fp16");
    p.bfloat16 = false;
    p.float64 = has_extension(d, "cl_khr_fp64");
    p.int64 = true;  // OpenCL C's long is 64-bit everywhere
    p.software = (device_value<cl_device_type>(d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
    return p;
  }

  std::shared_ptr<const Context> ctx_;
  Memory mem_;
  ProgramCache programs_;
  std::shared_ptr<Queues> queues_;
  hcq::Properties props_;
};

}  // namespace

std::string absent_reason() {
  if (std::string e = load_error(); !e.empty()) return e;
  try {
    devices();
  } catch (const std::exception& e) {
    std::string m = e.what();  // "[devices] no OpenCL platform ...": the reason without the function
    return m.rfind("[", 0) == 0 && m.find("] ") != std::string::npos ? m.substr(m.find("] ") + 2) : m;
  }
  return "";
}

std::unique_ptr<hcq::Device> open_device(int ordinal) {
  if (std::string why = absent_reason(); !why.empty()) SLUICE_FAIL(DeviceError, "open_device") << why;
  return std::make_unique<Device>(ordinal == 0 ? "CL" : "CL:" + std::to_string(ordinal), ordinal);
}

render::Target target(const hcq::Device& dev) {
  const hcq::Properties p = dev.properties();
  std::shared_ptr<const render::Renderer> renderer = render::make_opencl_renderer(p.float16);
  codegen::DeviceCaps caps;
  caps.global_dims = 3;
  caps.global_max = {0x7fffffffLL, 0x7fffffffLL, 0x7fffffffLL};  // work-group ids are read as int
  caps.local_bytes = int64_t(p.local_memory_bytes);
  caps.supports_float16 = p.float16;
  caps.has_local = p.max_workgroup_size > 1;
  caps.max_local_size = p.max_workgroup_size;
  caps.local_max = {p.max_workgroup_size, p.max_workgroup_size, p.max_workgroup_size};
  caps.max_buffers = p.max_buffers ? int(p.max_buffers) : caps.max_buffers;
  return {renderer, caps};
}

}  // namespace sluice::opencl
