#include "backends/cpu/program.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "hcq/error.h"

namespace sluice::cpu {
namespace {

class Program final : public hcq::Program {
 public:
  Program(hcq::Device& dev, const std::string& name, hcq::KernelLayout layout, std::shared_ptr<void> lib,
          KernelFn fn)
      : hcq::Program(dev, name, layout), lib_(std::move(lib)), fn_(fn) {}

  std::shared_ptr<void> lib_;
  KernelFn fn_;
};

// dlopen needs a file. glibc matches an already-loaded object by its path before anything else, so the
// path must never repeat within the process (a reused /proc/self/fd/N would hand back an older library):
// pid and a counter make it unique. The file is unlinked as soon as it is loaded.
std::shared_ptr<void> open_library(const std::string& name, const hcq::Binary& binary) {
  static std::atomic<uint64_t> seq{0};
  std::string path = (std::filesystem::temp_directory_path() / ("sluice-" + std::to_string(::getpid()) + "-" +
                                                                std::to_string(seq.fetch_add(1)) + "-XXXXXX"))
                         .string();
  int fd = ::mkstemp(path.data());
  if (fd < 0)
    SLUICE_FAIL(hcq::Error, "load_program")
        << "kernel '" << name << "': cannot create " << path << ": " << std::strerror(errno);
  for (size_t off = 0; off < binary.size();) {
    ssize_t n = ::write(fd, binary.data() + off, binary.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(path.c_str());
      SLUICE_FAIL(hcq::Error, "load_program")
          << "kernel '" << name << "': writing " << path << " failed: " << std::strerror(err);
    }
    off += size_t(n);
  }
  ::close(fd);
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ::unlink(path.c_str());
  if (!h) SLUICE_FAIL(hcq::Error, "load_program") << "kernel '" << name << "': " << ::dlerror();
  return std::shared_ptr<void>(h, [](void* p) { ::dlclose(p); });
}

}  // namespace

std::unique_ptr<hcq::Program> load_program(hcq::Device& dev, const std::string& name,
                                           const hcq::Binary& binary, hcq::KernelLayout layout) {
  std::shared_ptr<void> lib = open_library(name, binary);
  void* fn = ::dlsym(lib.get(), name.c_str());
  if (!fn) SLUICE_FAIL(hcq::Error, "load_program") << "kernel '" << name << "' is not in its binary";
  return std::make_unique<Program>(dev, name, layout, std::move(lib), reinterpret_cast<KernelFn>(fn));
}

// The device checks at submit that every program it runs was loaded on it, so the cast is safe.
KernelFn kernel_entry(const hcq::Program& p) { return static_cast<const Program&>(p).fn_; }
std::shared_ptr<void> library(const hcq::Program& p) { return static_cast<const Program&>(p).lib_; }

}  // namespace sluice::cpu
