#include "backends/null/device.h"

#include "backends/null/allocator.h"
#include "backends/null/compiler.h"
#include "backends/null/queue.h"
#include "hcq/processor_device.h"
#include "renderers/cpu.h"

namespace sluice::null {
namespace {

class Device final : public hcq::ProcessorDevice {
 public:
  explicit Device(std::string name) : hcq::ProcessorDevice(std::move(name)) {
    allocator_ = make_allocator(*this);
    compiler_ = make_compiler();
    start_queues();
  }

  ~Device() override {
    stop_queues();
    release_queues();
  }

  std::unique_ptr<hcq::Program> load_program(const std::string& name, const hcq::Binary&,
                                             hcq::KernelLayout layout) override {
    return std::make_unique<hcq::Program>(*this, name, layout);
  }

  hcq::Properties properties() const override {
    hcq::Properties p;
    p.device_name = "null device (completes every command at once)";
    p.vendor = "sluice";
    return p;
  }

 protected:
  std::unique_ptr<hcq::CommandProcessor> make_queue(int, hcq::CommandProcessor::Config cfg) override {
    return start_queue(std::move(cfg));
  }
};

}  // namespace

std::unique_ptr<hcq::Device> open_device(int ordinal) {
  return std::make_unique<Device>(ordinal == 0 ? "NULL" : "NULL:" + std::to_string(ordinal));
}

render::Target target(const hcq::Device&) {
  static const std::shared_ptr<const render::Renderer> renderer = render::make_cpu_renderer();
  return {renderer, codegen::DeviceCaps{}};
}

}  // namespace sluice::null
