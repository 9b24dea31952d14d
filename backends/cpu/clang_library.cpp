#include "backends/cpu/clang_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <sstream>
#include <vector>

#include "base/log.h"
#include "hcq/tool.h"

namespace sluice::cpu {
namespace {

namespace fs = std::filesystem;

// Where the module may be, ':'-separated: relative to the file that holds this code (an executable in
// <prefix>/bin, or libsluice.so in <prefix>/lib: an installed tree may move), then where the build put it.
// SLUICE_CLANG_MODULES is undefined when this build has no module.
#ifdef SLUICE_CLANG_MODULES
constexpr const char* kModules = SLUICE_CLANG_MODULES;
#else
constexpr const char* kModules = "";
#endif

// The directory of the executable or shared library this code was linked into.
fs::path own_directory() {
  Dl_info info{};
  std::error_code ec;
  if (::dladdr(reinterpret_cast<void*>(&own_directory), &info) && info.dli_fname &&
      std::string_view(info.dli_fname).find(".so") != std::string_view::npos)
    return fs::canonical(info.dli_fname, ec).parent_path();
  return fs::read_symlink("/proc/self/exe", ec).parent_path();  // the main program: dladdr gives argv[0]
}

// The sinks run inside the module's C functions: nothing may throw through them (an object that cannot
// be kept stays empty, which compile() reports).
struct Sinks {
  hcq::Binary object;
  std::string diagnostics;
  static void put_object(void* ctx, const char* data, size_t size) noexcept {
    try {
      static_cast<Sinks*>(ctx)->object.assign(data, data + size);
    } catch (...) { static_cast<Sinks*>(ctx)->object.clear(); }
  }
  static void put_diagnostics(void* ctx, const char* data, size_t size) noexcept {
    try {
      static_cast<Sinks*>(ctx)->diagnostics.assign(data, size);
    } catch (...) {}
  }
};

}  // namespace

ClangLibrary* ClangLibrary::find() {
  static ClangLibrary* const library = []() -> ClangLibrary* {
    std::stringstream paths(kModules);
    for (std::string entry; std::getline(paths, entry, ':');) {
      std::error_code ec;
      const fs::path path = entry.empty() || entry[0] == '/' ? fs::path(entry) : own_directory() / entry;
      if (!entry.empty() && fs::is_regular_file(path, ec))
        return new ClangLibrary(fs::canonical(path, ec).string());  // lives as long as the process
    }
    return nullptr;
  }();
  return library;
}

ClangLibrary::ClangLibrary(std::string path) : path_(std::move(path)), identity_(hcq::tool_identity(path_)) {}

void ClangLibrary::load() {
  std::call_once(loaded_, [this] {
    // RTLD_LOCAL: LLVM's symbols stay out of the process's namespace (a Vulkan or OpenCL driver may bring
    // its own LLVM).
    void* handle = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      compile_ = reinterpret_cast<sluice_clang_compile_fn>(::dlsym(handle, "sluice_clang_compile"));
      version_ = reinterpret_cast<sluice_clang_version_fn>(::dlsym(handle, "sluice_clang_version"));
    }
    if (!compile_ || !version_) {
      compile_ = nullptr, version_ = nullptr;
      const char* why = ::dlerror();
      load_error_ = "cannot load the in-process clang " + path_ + ": " + (why ? why : "symbols missing");
      log_message(LogLevel::Info, load_error_ + "; compiling with a clang process");
    }
  });
  if (!compile_) SLUICE_FAIL(LoadError, "compile") << load_error_;
}

std::string ClangLibrary::version() {
  try {
    load();
  } catch (const LoadError& e) { return e.what(); }
  return version_();
}

hcq::Binary ClangLibrary::compile(std::span<const std::string> flags,
                                  std::span<const std::string_view> sources) {
  load();
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  std::string unit;
  for (std::string_view s : sources) (unit += s) += '\n';
  Sinks out;
  const int status = compile_(argv.data(), int(argv.size()), unit.data(), unit.size(), &out,
                              &Sinks::put_object, &Sinks::put_diagnostics);
  if (status != 0 || out.object.empty())
    SLUICE_FAIL(hcq::CompileError, "compile") << "clang (in process) failed:\n" << out.diagnostics;
  return std::move(out.object);
}

}  // namespace sluice::cpu
