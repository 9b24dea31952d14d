#include "backends/hip/compiler.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "base/debug.h"
#include "hcq/error.h"
#include "hcq/tool.h"

namespace sluice::hip {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kFlags = {
    "-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3"};

// The oldest LLVM that knows an arch (by prefix; first match wins).
const std::pair<const char*, int> kMinLlvm[] = {{"gfx94", 17}, {"gfx95", 19}, {"gfx115", 18},
                                                {"gfx12", 19}, {"gfx11", 16}, {"gfx90a", 13}};

int min_llvm(const std::string& arch) {
  for (const auto& [prefix, v] : kMinLlvm)
    if (arch.rfind(prefix, 0) == 0) return v;
  return 0;
}

// The LLVM major version of a clang from its name (clang++-19) or resolved path (/usr/lib/llvm-19/...).
int llvm_version(const fs::path& p) {
  auto trailing = [](const std::string& s, const std::string& after) {
    size_t at = s.rfind(after);
    return at == std::string::npos ? 0 : std::atoi(s.c_str() + at + after.size());
  };
  if (int v = trailing(p.filename().string(), "-")) return v;
  std::error_code ec;
  return trailing(fs::canonical(p, ec).string(), "llvm-");
}

fs::path on_path(const std::string& name) {
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      fs::path p = fs::path(dir.empty() ? "." : dir) / name;
      if (::access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return {};
}

// The kernels a unit defines: the identifier before the parameter list on each __global__ line.
std::string kernel_names(std::span<const std::string_view> sources) {
  std::string names;
  const std::string_view mark = "((global))";
  for (std::string_view s : sources)
    for (size_t at = s.find(mark); at != std::string_view::npos; at = s.find(mark, at + 1)) {
      const size_t eol = s.find('\n', at),
                   open = s.rfind('(', eol == std::string_view::npos ? s.size() : eol);
      size_t begin = open;
      while (begin > at && (std::isalnum(static_cast<unsigned char>(s[begin - 1])) || s[begin - 1] == '_'))
        --begin;
      if (begin < open) names += (names.empty() ? "" : ", ") + std::string(s.substr(begin, open - begin));
    }
  return names.empty() ? "(none found)" : names;
}

class Compiler final : public hcq::Compiler {
 public:
  Compiler(std::string arch, fs::path cache_dir)
      : hcq::Compiler("hip-" + arch, std::move(cache_dir)),
        arch_(std::move(arch)),
        clang_(find_clang(arch_, &why_)) {
    std::ostringstream id;
    id << hcq::tool_identity(clang_);
    for (const std::string& f : kFlags) id << ' ' << f;
    id << " --offload-arch=" << arch_;
    identity_ = id.str();
  }

 protected:
  std::string identity() const override { return identity_; }
  std::string description() const override {
    return clang_.empty() ? "no clang for " + arch_ + ": " + why_
                          : hcq::tool_version(clang_) + ", --offload-arch=" + arch_;
  }

  hcq::Binary compile_unit(std::span<const std::string_view> sources) override {
    if (clang_.empty()) SLUICE_FAIL(hcq::CompileError, "compile") << "HIP " << arch_ << ": " << why_;
    hcq::TempDir dir("sluice-hip");
    fs::path src = dir.path() / "unit.hip", out = dir.path() / "unit.co";
    std::string text;
    for (std::string_view s : sources) (text += s) += '\n';
    {
      std::ofstream f(src, std::ios::binary);
      f << text;
      if (!f.flush()) SLUICE_FAIL(hcq::CompileError, "compile") << "cannot write " << src;
    }
    std::vector<std::string> args = {clang_.string()};
    args.insert(args.end(), kFlags.begin(), kFlags.end());
    args.insert(args.end(), {"--offload-arch=" + arch_, src.string(), "-o", out.string()});
    std::string log;
    if (int status = hcq::run_tool(args, &log); status != 0)
      SLUICE_FAIL(hcq::CompileError, "compile")
          << clang_.string() << " (" << arch_ << ") failed on kernel(s) " << kernel_names(sources)
          << " (status " << status << "):\n"
          << log << (debug_level() >= 4 ? "--- source ---\n" + text : "(SLUICE_DEBUG=4 shows the source)");
    std::ifstream f(out, std::ios::binary);
    hcq::Binary bin{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    if (bin.empty())
      SLUICE_FAIL(hcq::CompileError, "compile") << clang_.string() << " wrote no output to " << out;
    return bin;
  }

 private:
  std::string arch_, why_;
  fs::path clang_;
  std::string identity_;
};

}  // namespace

fs::path find_clang(const std::string& arch, std::string* why) {
  const int need = min_llvm(arch);
  if (const char* c = std::getenv("SLUICE_HIP_CLANG"); c && *c) return c;
  std::string seen;
  for (const char* name : {"clang++-19", "clang++-18", "clang++-17", "clang++-16", "clang++-15", "clang++"}) {
    fs::path p = on_path(name);
    if (p.empty()) continue;
    const int v = llvm_version(p);
    if (v == 0 || v >= need) return p;
    seen += std::string(seen.empty() ? "" : ", ") + name + " (LLVM " + std::to_string(v) + ")";
  }
  if (why)
    *why = "no clang++ on PATH knows " + arch + " (needs LLVM >= " + std::to_string(need) +
           (seen.empty() ? "; none found" : "; found " + seen) +
           "); set SLUICE_HIP_CLANG or install clang-19";
  return {};
}

std::unique_ptr<hcq::Compiler> make_compiler(const std::string& arch, fs::path cache_dir) {
  return std::make_unique<Compiler>(arch, std::move(cache_dir));
}

}  // namespace sluice::hip
