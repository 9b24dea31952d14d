#pragma once
// Running an offline compiler (clang for the CPU and for amdgcn) from a backend's hcq::Compiler: a
// scratch directory removed with its contents, and one call that runs the tool and captures what it
// printed. Every member is thread-safe (each call has its own directory and process).
// Failures: hcq::CompileError naming what could not be created or started.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace sluice::hcq {

// A fresh directory under the system's temporary directory ("<prefix>-<pid>-XXXXXX"), removed when it
// goes; the first of a prefix in a process also removes those whose process has died (killed mid-compile).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The whole file as bytes ("" if it cannot be read).
std::string read_file(const std::filesystem::path& p);

// How long a tool may run: $SLUICE_COMPILE_TIMEOUT seconds, else 600 (a hung compiler must not hang the
// process, which holds a Realizer's lock while it compiles).
std::chrono::milliseconds tool_timeout();

// Runs args[0] (an executable's path) with args, stdout and stderr both captured into *output; waits for
// it and returns its exit status (0: success; a signal's death is reported as 128 + the signal). Past
// `timeout` the tool and what it started are killed and CompileError says so.
int run_tool(const std::vector<std::string>& args, std::string* output,
             std::chrono::milliseconds timeout = tool_timeout());

// What identifies a tool's build for a compile cache key, without running it (a process per start would
// cost more than most cache hits save): "clang=<path> real=<resolved path> size=<bytes> mtime=<s.ns>";
// only the path when it cannot be resolved.
std::string tool_identity(const std::filesystem::path& exe);

// The first line `exe --version` prints, then the path: "Debian clang version 14.0.6 (/usr/bin/clang)";
// what went wrong instead when it cannot be run (never throws).
std::string tool_version(const std::filesystem::path& exe);

}  // namespace sluice::hcq
