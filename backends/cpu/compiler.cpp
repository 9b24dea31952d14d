#include "backends/cpu/compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "hcq/error.h"
#include "hcq/tool.h"

namespace sluice::cpu {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kFlags = {"-O2", "-shared", "-fPIC", "-march=native", "-x", "c"};

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

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0) return line;
  return "unknown";
}

class Compiler final : public hcq::Compiler {
 public:
  explicit Compiler(fs::path cache_dir) : hcq::Compiler("cpu", std::move(cache_dir)), clang_(find_clang()) {
    // Stat, not `clang --version`: identifying the compiler must not cost a process on every start.
    std::ostringstream id;
    id << "clang=" << clang_.string();
    std::error_code ec;
    fs::path real = fs::canonical(clang_, ec);
    struct stat st {};
    if (!ec && ::stat(real.c_str(), &st) == 0)
      id << " real=" << real.string() << " size=" << st.st_size << " mtime=" << st.st_mtim.tv_sec << "."
         << st.st_mtim.tv_nsec;
    for (const std::string& f : kFlags) id << ' ' << f;
    id << " cpu=" << cpu_model();
    identity_ = id.str();
  }

 protected:
  std::string identity() const override { return identity_; }

  hcq::Binary compile_unit(std::span<const std::string_view> sources) override {
    if (clang_.empty())
      SLUICE_FAIL(hcq::CompileError, "compile") << "clang not found on PATH (set SLUICE_CLANG)";
    hcq::TempDir dir("sluice-cc");
    fs::path src = dir.path() / "unit.c", out = dir.path() / "unit.so";
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
  std::string identity_;
};

}  // namespace

std::unique_ptr<hcq::Compiler> make_compiler(fs::path cache_dir) {
  return std::make_unique<Compiler>(std::move(cache_dir));
}

}  // namespace sluice::cpu
