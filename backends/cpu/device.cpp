#include "backends/cpu/device.h"

#include <cstdlib>
#include <thread>

#include <unistd.h>

#include "backends/cpu/allocator.h"
#include "backends/cpu/compiler.h"
#include "backends/cpu/program.h"
#include "backends/cpu/queue.h"
#include "base/error.h"
#include "hcq/processor_device.h"
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

class Device final : public hcq::ProcessorDevice {
 public:
  explicit Device(std::string name) : hcq::ProcessorDevice(std::move(name)) {
    allocator_ = make_allocator(*this);
    compiler_ = make_compiler();
    start_queues();
  }

  ~Device() override {
    const bool clean = stop_queues();
    release_queues();
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

 protected:
  // The compute queue runs kernels on every thread, the copy queue copies on its own.
  std::unique_ptr<hcq::CommandProcessor> make_queue(int k, hcq::CommandProcessor::Config cfg) override {
    return start_queue(std::move(cfg), k == kCompute ? threads_ - 1 : 0);
  }

 private:
  const int threads_ = kernel_threads();
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
