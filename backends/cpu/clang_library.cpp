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

// Where the build put the module and where `cmake --install` puts it (backends/CMakeLists.txt), and the
// libclang-cpp it links; SLUICE_CLANG_MODULES is undefined when this build has no module.
#ifdef SLUICE_CLANG_MODULES
constexpr const char* kModules = SLUICE_CLANG_MODULES;
constexpr const char* kLibclang = SLUICE_CLANG_LIBRARY;
#else
constexpr const char* kModules = "";
constexpr const char* kLibclang = "";
#endif

struct Sinks {
  hcq::Binary object;
  std::string diagnostics;
  static void put_object(void* ctx, const char* data, size_t size) {
    static_cast<Sinks*>(ctx)->object.assign(data, data + size);
  }
  static void put_diagnostics(void* ctx, const char* data, size_t size) {
    static_cast<Sinks*>(ctx)->diagnostics.assign(data, size);
  }
};

}  // namespace

ClangLibrary* ClangLibrary::find() {
  static ClangLibrary* const library = []() -> ClangLibrary* {
    std::stringstream paths(kModules);
    for (std::string path; std::getline(paths, path, ':');) {
      std::error_code ec;
      if (!path.empty() && fs::is_regular_file(path, ec))
        return new ClangLibrary(path);  // lives as long as the process
    }
    return nullptr;
  }();
  return library;
}

ClangLibrary::ClangLibrary(std::string path)
    : path_(std::move(path)), identity_(hcq::tool_identity(path_) + " " + hcq::tool_identity(kLibclang)) {}

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
