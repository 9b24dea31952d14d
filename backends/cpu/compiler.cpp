#include "backends/cpu/compiler.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "backends/cpu/clang_library.h"
#include "hcq/error.h"
#include "hcq/tool.h"

namespace sluice::cpu {
namespace {

namespace fs = std::filesystem;

// -c: an object for our own loader (backends/cpu/elf.h); linking a shared object cost ~45 ms of CPU per
// clang run. -fno-math-errno: nothing reads errno after a kernel, and a libm call that may set it is opaque
// to LLVM; without it the GPT-2 block's GELU matmul ran 8x slower and compiled 25% slower.
// -fno-unroll-loops: kernels come unrolled into register tiles already; clang unrolling them again was
// ~45% of its time on the GPT-2 block, with no loss on matmul, add or the models (measured, issue #5).
// -mprefer-vector-width=512: the target's widest vector is 16 floats with AVX-512 (device.cpp), but clang
// tunes recent Intel cores (-march=native: icelake-client for a Xeon it does not know) to prefer 256 bits
// and then splits every 16-float vector in two, spilling the matmul tile's accumulators (1024^3 on a
// 2-core Emerald Rapids Xeon: 95 -> 212 GFLOP/s, medians of 5). Without AVX-512 it changes nothing.
// clang-format off
const std::vector<std::string> kFlags = {
    "-O2", "-c", "-fPIC", "-march=native", "-mprefer-vector-width=512", "-fno-math-errno",
    "-fno-unroll-loops", "-x", "c"};
// clang-format on

// Compile cost of one kernel's source in bytes-equivalents: clang's time grows with its length (~1.2 ms
// per KB in process here) plus about 4 KB's worth per kernel, whatever its length. A loop costs no more
// than its text since -fno-unroll-loops: over the GPT-2 block's 12 kernels compiled alone this is 11% off
// (rms), the earlier 12 KB per loop 29%, which split the block into units of 98 and 78 ms (now ~92, ~84).
double source_cost(std::string_view src) { return double(src.size()) + 4e3; }
// A unit must carry at least this much work to be worth a process of its own (starting clang costs ~100
// ms, ~80 KB-equivalents; a second process pays for itself once it takes half of that off the first), or a
// thread of the in-process clang (a compiler instance costs ~8 ms, about 6 KB-equivalents).
constexpr double kSplitCost = 40e3, kSplitCostInProcess = 16e3;

size_t cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return size_t(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) return line;
  return "unknown";
}

// The processor -march=native compiled for: its model and (hashed) feature flags, since a virtual machine
// may hide features of the model it names.
std::string cpu_target() {
  std::ifstream f("/proc/cpuinfo");
  std::string model = "unknown", flags;
  for (std::string line; std::getline(f, line) && (model == "unknown" || flags.empty());) {
    if (line.rfind("model name", 0) == 0 && model == "unknown")
      model = line.substr(std::min(line.size(), line.find(':') + 2));
    if (line.rfind("flags", 0) == 0 && flags.empty()) flags = line;
  }
  return "x86-64 objects for " + model + " (cpu flags " + hcq::sha256_hex(flags).substr(0, 12) + ")";
}

class Compiler final : public hcq::Compiler {
 public:
  explicit Compiler(fs::path cache_dir)
      : hcq::Compiler("cpu", std::move(cache_dir)),
        clang_(find_clang()),
        // $SLUICE_CLANG names a clang to run: a process, as asked.
        library_(std::getenv("SLUICE_CLANG") && *std::getenv("SLUICE_CLANG") ? nullptr
                                                                             : ClangLibrary::find()) {
    std::ostringstream id;
    id << (library_ ? "in-process " + library_->identity() : hcq::tool_identity(clang_));
    for (const std::string& f : kFlags) id << ' ' << f;
    id << " cpu=" << cpu_model();
    identity_ = id.str();
  }

 protected:
  std::string identity() const override { return identity_; }
  std::string description() const override {
    return library_ ? library_->version() : hcq::tool_version(clang_);
  }
  // An object runs wherever the processor is the same: no clang is needed to load it.
  std::string binary_target() const override { return target_; }

  // Split when each unit gets enough work to pay for its process, at most one unit per core.
  size_t parallel_units(std::span<const std::string_view> misses) const override {
    double total = 0;
    for (std::string_view s : misses) total += source_cost(s);
    const bool in_process = library_ && !fell_back_.load(std::memory_order_relaxed);
    return std::clamp<size_t>(size_t(total / (in_process ? kSplitCostInProcess : kSplitCost)), 1, cores_);
  }
  double compile_cost(std::string_view source) const override { return source_cost(source); }

  hcq::Binary compile_unit(std::span<const std::string_view> sources) override {
    if (library_) {
      try {
        return library_->compile(kFlags, sources);
      } catch (const ClangLibrary::LoadError&) {
        // Logged once by the library; its objects and a process's are interchangeable (binary_target()).
        fell_back_.store(true, std::memory_order_relaxed);
      }
    }
    if (clang_.empty())
      SLUICE_FAIL(hcq::CompileError, "compile") << "clang not found on PATH (set SLUICE_CLANG)";
    hcq::TempDir dir("sluice-cc");
    fs::path src = dir.path() / "unit.c", out = dir.path() / "unit.o";
    {
      std::ofstream f(src, std::ios::binary);
      for (std::string_view s : sources) f << s << '\n';
      if (!f.flush()) SLUICE_FAIL(hcq::CompileError, "compile") << "cannot write " << src;
    }
    std::vector<std::string> args = {clang_.string()};
    args.insert(args.end(), kFlags.begin(), kFlags.end());
    args.insert(args.end(), {src.string(), "-o", out.string()});
    std::string log;
    if (int status = hcq::run_tool(args, &log); status != 0)
      SLUICE_FAIL(hcq::CompileError, "compile") << clang_.string() << " failed (status " << status << "):\n"
                                                << log;
    std::ifstream f(out, std::ios::binary);
    hcq::Binary bin{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    if (bin.empty())
      SLUICE_FAIL(hcq::CompileError, "compile") << clang_.string() << " wrote no output to " << out;
    return bin;
  }

 private:
  fs::path clang_;
  ClangLibrary* library_;               // the in-process clang, or nullptr: a clang process per unit
  std::atomic<bool> fell_back_{false};  // the library could not be loaded: processes after all
  std::string identity_, target_ = cpu_target();
  size_t cores_ = cores();
};

}  // namespace

fs::path find_clang() {
  if (const char* c = std::getenv("SLUICE_CLANG"); c && *c) return c;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      fs::path p = fs::path(dir.empty() ? "." : dir) / "clang";
      if (::access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return {};
}

std::unique_ptr<hcq::Compiler> make_compiler(fs::path cache_dir) {
  return std::make_unique<Compiler>(std::move(cache_dir));
}

}  // namespace sluice::cpu
