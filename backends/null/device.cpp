#include "backends/null/device.h"

#include <mutex>

#include "backends/null/allocator.h"
#include "backends/null/compiler.h"
#include "renderers/cpu.h"

namespace sluice::null {
namespace {

class Device final : public hcq::Device {
 public:
  explicit Device(std::string name) : hcq::Device(std::move(name), 1, 1) {
    allocator_ = make_allocator(*this);
    compiler_ = make_compiler();
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

  std::string explain_stall(const hcq::Signal&, uint64_t) override {
    return "NULL completes every submission at submit: none of its queues is behind";
  }

 protected:
  uint64_t do_submit(const hcq::HwQueue& q) override {
    namespace pk = hcq::packet;
    // One lock keeps the timeline in order: without it a later submission could publish its value
    // while an earlier one is still writing its signals.
    std::lock_guard lk(mu_);
    uint64_t now = hcq::now_ns();
    const uint64_t v = next_timeline_value();
    // A wait on a failed signal skips the rest of the submission and fails its signals (queue.h).
    std::string failure;
    for (pk::Ref r : pk::each(q.packets())) {
      if (!failure.empty() && r.op != pk::Signal) continue;
      switch (r.op) {
        case pk::Wait:
          if (const auto* s = pk::ptr<const hcq::Signal>(r.p[1]); s->failed()) failure = s->error();
          break;
        case pk::Signal:
          if (failure.empty())
            pk::ptr<hcq::Signal>(r.p[1])->device_write(r.p[2], now);
          else
            pk::ptr<hcq::Signal>(r.p[1])->fail(failure);
          break;
        case pk::Timestamp: pk::ptr<hcq::Signal>(r.p[1])->device_timestamp(now); break;
        case pk::Exec:
          if (profiling())
            add_profile({name(), queue_name(q), pk::ExecView(r.p).program->name(), now, now, 0, v, r.at});
          break;
        case pk::Copy:
          if (profiling())
            add_profile(
                {name(), queue_name(q), "copy", now, now, r.p[3], v, r.at, hcq::Transfer::DeviceToDevice});
          break;
        default: break;  // waits and barriers: everything before them is already complete
      }
    }
    timeline().device_write(v, now);
    return v;
  }

 private:
  static std::string queue_name(const hcq::HwQueue& q) {
    return std::string(hcq::queue_kind_name(q.kind())) + ":" + std::to_string(q.index());
  }

  std::mutex mu_;
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
