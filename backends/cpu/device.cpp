#include "backends/cpu/device.h"

#include <cstdlib>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "backends/cpu/allocator.h"
#include "backends/cpu/compiler.h"
#include "backends/cpu/program.h"
#include "backends/cpu/queue.h"
#include "base/error.h"
#include "renderers/cpu.h"

namespace sluice::cpu {
namespace {

// The threads that run kernels: $SLUICE_CPU_THREADS (1 to 1024), else every hardware thread. One is the
// command processor, the rest a pool that takes a share of each multi-work-group kernel.
int kernel_threads() {
  const char* e = std::getenv("SLUICE_CPU_THREADS");
  if (!e || !*e) return std::max(1, int(std::thread::hardware_concurrency()));
  char* end = nullptr;
  const long n = std::strtol(e, &end, 10);
  SLUICE_CHECK_IN(ValueError, "CPU", *end == 0 && n >= 1 && n <= 1024)
      << "SLUICE_CPU_THREADS='" << e << "': expected a thread count from 1 to 1024";
  return int(n);
}

constexpr int kCompute = 0, kCopy = 1;  // slots in Device::queues_

class Device final : public hcq::Device {
 public:
  explicit Device(std::string name) : hcq::Device(std::move(name), 1, 1) {
    allocator_ = make_allocator(*this);
    compiler_ = make_compiler();
    for (int k : {kCompute, kCopy}) queues_[k] = start_queue(config(k));
  }

  // Queues drain and stop before the allocator and timeline (base members) go; every queue closes before
  // any drains (a wait on one may be met by the other's work), and every one stops before any is freed
  // (a CP that waits asks the others whether they are quiet).
  ~Device() override {
    std::lock_guard reset(reset_mu_);  // no queue is replaced meanwhile
    for (auto& q : queues_) q->close();
    bool clean = true;
    for (auto& q : queues_) clean = q->shutdown() && clean;
    for (auto& q : queues_) q.reset();
    // A kernel given up on may still write the buffers it was given: they stay allocated.
    if (!clean) (void)allocator_.release();
  }

  std::unique_ptr<hcq::Program> load_program(const std::string& name, const hcq::Binary& binary,
                                             hcq::KernelLayout layout) override {
    return cpu::load_program(*this, name, binary, layout);
  }

  hcq::Properties properties() const override {
    hcq::Properties p;
    p.device_name = std::to_string(threads_) + " host threads";
    p.vendor = "host";
    p.memory_bytes = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
    p.bfloat16 = p.float16 = true;  // emulated by the CPU renderer (16-bit storage, float arithmetic)
    p.host_addressable = true;
    return p;
  }

  std::string explain_stall(const hcq::Signal&, uint64_t) override {
    std::lock_guard reset(reset_mu_);
    return hcq::explain_queues(
        2, [&](size_t k) { return queues_[k]->status(); }, [&](size_t k) { return config_names_[k]; },
        uint64_t(hang_timeout().count()),
        [&](size_t k, const QueueStatus& st, uint64_t now) { return reset_hung_queue(int(k), st, now); });
  }

  bool busy() override {
    std::lock_guard reset(reset_mu_);
    for (int k : {kCompute, kCopy})
      if (queues_[k]->status().phase == QueueStatus::Running) return true;
    return false;
  }

 protected:
  uint64_t do_submit(const hcq::HwQueue& q) override {
    int k = q.kind() == hcq::QueueKind::Compute ? kCompute : kCopy;
    // Under the ring's lock: the values a ring retires increase, and a hang reset (which takes every
    // submit lock) sees each value handed out in its ring.
    std::lock_guard lk(submit_mu_[k]);
    uint64_t v = next_timeline_value();
    queues_[k]->push(q.packets(), v);
    return v;
  }

 private:
  QueueConfig config(int k) {
    return QueueConfig{name(), config_names_[k], k == kCompute ? threads_ - 1 : 0, this,
                       [this](hcq::ProfileRecord r) { add_profile(std::move(r)); },
                       [this](uint64_t v, uint64_t ns) { retire(v, ns); },
                       // Read by a CP only once the device is being destroyed, while the destructor
                       // holds reset_mu_: no queue is replaced while it reads.
                       [this] { return queues_[kCompute]->quiet() && queues_[kCopy]->quiet(); },
                       [this] { return hang_timeout(); }};
  }

  // Called with reset_mu_ held. The hung queue's threads are abandoned; everything its pending packets
  // would have signalled fails, and so does the timeline, which starts over (device.h).
  bool reset_hung_queue(int k, const QueueStatus& st, uint64_t now) {
    const std::string msg =
        hcq::hung_message(name(), config_names_[k], st, now, uint64_t(hang_timeout().count()));
    // abandon() first: a producer blocked on the hung queue's full ring holds its submit lock, and it
    // lets go only once the queue is marked abandoned.
    if (!queues_[k]->abandon(st.token)) return false;
    std::scoped_lock lk(submit_mu_[kCompute], submit_mu_[kCopy]);
    for (const hcq::SignalRef& s : queues_[k]->dropped_signals()) s.fail(msg);
    queues_[k] = start_queue(config(k));
    replace_timeline(msg);
    return true;
  }

  const std::string config_names_[2] = {"compute:0", "copy:0"};
  const int threads_ = kernel_threads();
  std::unique_ptr<Queue> queues_[2];
  std::mutex submit_mu_[2];
  std::mutex reset_mu_;
};

}  // namespace

std::string absent_reason() {
  const std::filesystem::path clang = find_clang();
  if (clang.empty()) return "no clang to compile kernels: none on PATH (install clang, or set SLUICE_CLANG)";
  if (::access(clang.c_str(), X_OK) != 0)
    return "no clang to compile kernels: SLUICE_CLANG=" + clang.string() + " is not an executable";
  return "";
}

std::unique_ptr<hcq::Device> open_device(int ordinal) {
  return std::make_unique<Device>(ordinal == 0 ? "CPU" : "CPU:" + std::to_string(ordinal));
}

render::Target target(const hcq::Device&) {
  static const std::shared_ptr<const render::Renderer> renderer = render::make_cpu_renderer();
  codegen::DeviceCaps caps;
  // Explicit vectors as wide as this host's registers (kernels are built with -march=native): clang 14's
  // SLP vectorizer leaves a matmul tile's scalar accumulators scalar, so codegen packs them itself
  // (vectorize.h), which the heuristic's CPU register tile relies on. Vectors wider than a register
  // would double the tile's registers and spill it.
  const bool avx512 = __builtin_cpu_supports("avx512f"), avx = __builtin_cpu_supports("avx");
  caps.vector_widths = avx512 ? std::vector<int>{16, 8, 4}
                       : avx  ? std::vector<int>{8, 4}
                              : std::vector<int>{4};
  caps.vector_registers = avx512 ? 32 : 16;
  // Separate launch dimensions let the renderer walk a reduction's grid rows first (renderers/cpu.h).
  caps.global_dims = 3;
  return {renderer, caps};
}

}  // namespace sluice::cpu
