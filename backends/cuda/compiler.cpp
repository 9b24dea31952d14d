#include "backends/cuda/compiler.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "base/debug.h"
#include "hcq/error.h"

namespace sluice::cuda {
namespace {

namespace fs = std::filesystem;

// The part of NVRTC's C API we call (nvrtc.h), declared here so no toolkit is needed to build.
using nvrtcProgram = struct _nvrtcProgram*;
struct Nvrtc {
  void* lib = nullptr;
  fs::path dir;
  std::string absent;  // why it did not load
  int major = 0, minor = 0;
  const char* (*GetErrorString)(int);
  int (*Version)(int*, int*);
  int (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  int (*DestroyProgram)(nvrtcProgram*);
  int (*CompileProgram)(nvrtcProgram, int, const char* const*);
  int (*GetProgramLogSize)(nvrtcProgram, size_t*);
  int (*GetProgramLog)(nvrtcProgram, char*);
  int (*GetPTXSize)(nvrtcProgram, size_t*);
  int (*GetPTX)(nvrtcProgram, char*);
  int (*GetCUBINSize)(nvrtcProgram, size_t*);
  int (*GetCUBIN)(nvrtcProgram, char*);
  std::vector<int> archs;  // nvrtcGetSupportedArchs (NVRTC 11.2+), ascending; empty: unknown
};

std::vector<fs::path> toolkit_roots() {
  std::vector<fs::path> r;
  if (const char* p = std::getenv("CUDA_PATH"); p && *p) r.emplace_back(p);
  r.emplace_back("/usr/local/cuda");  // the toolkit's standard location
  return r;
}

const Nvrtc& nvrtc() {
  static const Nvrtc n = [] {
    Nvrtc n;
    const char* names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
    for (const fs::path& root : toolkit_roots())
      for (const char* name : names)
        if (!n.lib) n.lib = ::dlopen((root / "lib64" / name).c_str(), RTLD_NOW | RTLD_LOCAL);
    for (const char* name : names)
      if (!n.lib) n.lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!n.lib) {
      n.absent = "libnvrtc.so not found in $CUDA_PATH/lib64, /usr/local/cuda/lib64 or the loader path";
      return n;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(n.lib, name));
      if (!fn && n.absent.empty()) n.absent = std::string("libnvrtc lacks ") + name;
    };
    sym(n.GetErrorString, "nvrtcGetErrorString");
    sym(n.Version, "nvrtcVersion");
    sym(n.CreateProgram, "nvrtcCreateProgram");
    sym(n.DestroyProgram, "nvrtcDestroyProgram");
    sym(n.CompileProgram, "nvrtcCompileProgram");
    sym(n.GetProgramLogSize, "nvrtcGetProgramLogSize");
    sym(n.GetProgramLog, "nvrtcGetProgramLog");
    sym(n.GetPTXSize, "nvrtcGetPTXSize");
    sym(n.GetPTX, "nvrtcGetPTX");
    sym(n.GetCUBINSize, "nvrtcGetCUBINSize");
    sym(n.GetCUBIN, "nvrtcGetCUBIN");
    if (!n.absent.empty()) return n;
    n.Version(&n.major, &n.minor);
    using Count = int (*)(int*);
    using List = int (*)(int*);
    auto count = reinterpret_cast<Count>(::dlsym(n.lib, "nvrtcGetNumSupportedArchs"));
    auto list = reinterpret_cast<List>(::dlsym(n.lib, "nvrtcGetSupportedArchs"));
    if (int num = 0; count && list && count(&num) == 0 && num > 0) {
      n.archs.resize(size_t(num));
      if (list(n.archs.data()) != 0) n.archs.clear();
      std::sort(n.archs.begin(), n.archs.end());
    }
    if (link_map* lm = nullptr; ::dlinfo(n.lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
      n.dir = fs::path(lm->l_name).parent_path();
    return n;
  }();
  return n;
}

fs::path include_dir() {
  std::vector<fs::path> c;
  for (const fs::path& root : toolkit_roots()) c.push_back(root / "include");
  if (!nvrtc().dir.empty()) c.push_back(nvrtc().dir.parent_path() / "include");
  for (const fs::path& d : c)
    if (fs::exists(d / "cuda_fp16.h")) return d;
  return {};
}

// The kernels a unit defines: the identifier before the parameter list on each __global__ line.
std::string kernel_names(std::span<const std::string_view> sources) {
  std::string names;
  for (std::string_view s : sources)
    for (size_t at = s.find("__global__"); at != std::string_view::npos; at = s.find("__global__", at + 1)) {
      size_t eol = s.find('\n', at), open = s.rfind('(', eol == std::string_view::npos ? s.size() : eol);
      size_t end = open, begin = open;
      while (begin > at && (std::isalnum(static_cast<unsigned char>(s[begin - 1])) || s[begin - 1] == '_'))
        --begin;
      if (open != std::string_view::npos && begin < end)
        names += (names.empty() ? "" : ", ") + std::string(s.substr(begin, end - begin));
    }
  return names.empty() ? "(none found)" : names;
}

// What NVRTC compiles for a device arch (header): the arch itself if NVRTC knows it, else PTX for the
// newest virtual arch NVRTC knows below it; *unsupported says why there is none.
std::string nvrtc_target(const std::string& arch, bool* ptx, std::string* unsupported) {
  const Nvrtc& n = nvrtc();
  const size_t digits = arch.find_first_of("0123456789");
  if (n.archs.empty() || digits == std::string::npos) return arch;
  const int want = std::atoi(arch.c_str() + digits);
  if (std::binary_search(n.archs.begin(), n.archs.end(), want)) return arch;
  auto below = std::upper_bound(n.archs.begin(), n.archs.end(), want);
  if (below == n.archs.begin()) {
    *unsupported = "NVRTC " + std::to_string(n.major) + "." + std::to_string(n.minor) +
                   " cannot compile for " + arch + ": its oldest architecture is sm_" +
                   std::to_string(n.archs.front());
    return arch;
  }
  *ptx = true;  // the driver compiles the PTX for the device when it loads the module
  return "compute_" + std::to_string(*(below - 1));
}

class Compiler final : public hcq::Compiler {
 public:
  Compiler(std::string arch, fs::path cache_dir, bool ptx)
      : hcq::Compiler("cuda-" + arch, std::move(cache_dir)), ptx_(ptx) {
    arch_ = nvrtc_target(arch, &ptx_, &unsupported_);
    ptx_ = ptx_ || arch_.rfind("compute_", 0) == 0;
    flags_ = {"--gpu-architecture=" + arch_, "-default-device"};
    if (fs::path inc = include_dir(); !inc.empty()) flags_.push_back("-I" + inc.string());
    std::ostringstream id;
    id << "nvrtc=" << nvrtc().major << "." << nvrtc().minor << " arch=" << arch_
       << (ptx_ ? " ptx" : " cubin");
    for (const std::string& f : flags_) id << ' ' << f;
    identity_ = id.str();
  }

 protected:
  std::string identity() const override { return identity_; }
  std::string description() const override {
    return "NVRTC " + std::to_string(nvrtc().major) + "." + std::to_string(nvrtc().minor) + ", " + arch_ +
           (ptx_ ? " PTX (the driver finishes it)" : " cubin");
  }

  hcq::Binary compile_unit(std::span<const std::string_view> sources) override {
    const Nvrtc& n = nvrtc();
    if (!n.absent.empty()) SLUICE_FAIL(hcq::CompileError, "compile") << "CUDA: " << n.absent;
    if (!unsupported_.empty()) SLUICE_FAIL(hcq::CompileError, "compile") << "CUDA: " << unsupported_;
    std::string src;
    for (std::string_view s : sources) (src += s) += '\n';
    nvrtcProgram prog = nullptr;
    if (int rc = n.CreateProgram(&prog, src.c_str(), "sluice.cu", 0, nullptr, nullptr); rc != 0)
      SLUICE_FAIL(hcq::CompileError, "compile") << "nvrtcCreateProgram: " << n.GetErrorString(rc);
    struct Destroy {
      const Nvrtc& n;
      nvrtcProgram& p;
      ~Destroy() { n.DestroyProgram(&p); }
    } destroy{n, prog};
    std::vector<const char*> opts;
    for (const std::string& f : flags_) opts.push_back(f.c_str());
    const int rc = n.CompileProgram(prog, int(opts.size()), opts.data());
    if (rc != 0) {
      size_t size = 0;
      n.GetProgramLogSize(prog, &size);
      std::string log(size, '\0');
      if (size) n.GetProgramLog(prog, log.data());
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
      SLUICE_FAIL(hcq::CompileError, "compile")
          << "NVRTC (" << arch_ << ") failed on kernel(s) " << kernel_names(sources) << ": "
          << n.GetErrorString(rc) << "\n"
          << log << (debug_level() >= 4 ? "\n--- source ---\n" + src : "\n(SLUICE_DEBUG=4 shows the source)");
    }
    size_t size = 0;
    hcq::Binary bin;
    if (ptx_) {
      n.GetPTXSize(prog, &size);  // includes the terminating NUL the driver expects
      bin.resize(size);
      n.GetPTX(prog, reinterpret_cast<char*>(bin.data()));
    } else {
      n.GetCUBINSize(prog, &size);
      bin.resize(size);
      if (size) n.GetCUBIN(prog, reinterpret_cast<char*>(bin.data()));
    }
    if (bin.empty())
      SLUICE_FAIL(hcq::CompileError, "compile") << "NVRTC (" << arch_ << ") returned no output";
    return bin;
  }

 private:
  std::string arch_;  // what NVRTC compiles for (nvrtc_target)
  bool ptx_;
  std::string unsupported_;
  std::vector<std::string> flags_;
  std::string identity_;
};

}  // namespace

std::unique_ptr<hcq::Compiler> make_compiler(const std::string& arch, fs::path cache_dir, bool ptx) {
  return std::make_unique<Compiler>(arch, std::move(cache_dir), ptx);
}

std::string nvrtc_absent_reason() { return nvrtc().absent; }
fs::path nvrtc_dir() { return nvrtc().dir; }

}  // namespace sluice::cuda
