#pragma once
// hcq::Compiler — source to device binary, cached on disk (DESIGN.md §4).
//
// Semantics
// - compile(src) returns the binary for src. The cache key is the SHA-256 of the compiler's name, its
//   identity (version, flags, target: whatever changes the output) and the source, so a second compile
//   of the same source, in this process or any later one, reads the cached file and runs no compiler.
// - compile_many(srcs) compiles the sources that miss the cache in as few translation units as it can (a
//   compiler run costs milliseconds, a process tens of them): one, unless the backend's parallel_units() asks
//   for more, in which case the misses are split into that many units of about equal cost (longest first onto
//   the lightest unit) compiled at the same time on as many threads. Each source's result is cached under
//   its own key. The sources of a batch must not define the same symbol (the renderer gives each kernel a
//   unique name). The binary returned for a source may hold other kernels of its unit.
// - Cache files are written to a temporary name and renamed into place, so a reader (another thread or
//   process) sees a whole file or none. A cache that cannot be written is skipped, never an error.
// - Each entry carries the SHA-256 of its key and of its binary, checked before it is used: an entry that
//   is damaged (a flipped byte, a truncated file) or holds another key's binary (files swapped or copied)
//   is discarded, counted in cache_rejects() and compiled again; SLUICE_DEBUG >= 1 names the file.
// - The cache lives in `<cache_dir>/<compiler name>/`. default_cache_dir(): $SLUICE_CACHE_DIR, else
//   $XDG_CACHE_HOME/sluice, else $HOME/.cache/sluice; an empty cache_dir disables the cache.
// - Failure: CompileError `[compile] ...` with the compiler's diagnostics (of the first failed unit, after
//   every unit of the batch has finished).
//
// Threading: every member is thread-safe. A Device owns its compiler (Device::compiler()).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::hcq {

using Binary = std::vector<uint8_t>;

std::filesystem::path default_cache_dir();
std::string sha256_hex(std::string_view data);  // the cache's key function, lower-case hex

class Compiler {
 public:
  Compiler(std::string name, std::filesystem::path cache_dir)
      : name_(std::move(name)), cache_dir_(std::move(cache_dir)) {}
  virtual ~Compiler() = default;
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  const std::string& name() const { return name_; }
  const std::filesystem::path& cache_dir() const { return cache_dir_; }

  Binary compile(std::string_view source);
  std::vector<Binary> compile_many(std::span<const std::string> sources);

  uint64_t invocations() const { return invocations_.load(); }  // compile_unit calls (compiler runs)
  uint64_t cache_hits() const { return cache_hits_.load(); }
  uint64_t cache_rejects() const { return cache_rejects_.load(); }  // damaged entries discarded

  // What compiles this device's kernels, with its version, for people (`sluice devices`): "Debian clang
  // version 14.0.6 (/usr/bin/clang)". May run the compiler once (`--version`): not for hot paths.
  virtual std::string description() const { return name_; }

  // What a binary of this compiler needs of the place that loads it, as text: a binary made where
  // binary_target() is T loads and runs wherever it is T again (a saved plan, runtime/saved_plan.h, checks
  // it). Default: identity(), the strictest answer; a backend whose binaries outlive a compiler upgrade
  // says less (the CPU: the processor, not the clang that made the object).
  virtual std::string binary_target() const { return identity(); }

 protected:
  // Whatever besides the source changes the binary (compiler version, flags, target CPU).
  virtual std::string identity() const = 0;
  // Compiles `sources` as one unit; the binary must serve every one of them. Called from several threads
  // at once when parallel_units() returns more than 1.
  virtual Binary compile_unit(std::span<const std::string_view> sources) = 0;
  // How many units (and threads) compile_many may use for these misses; 1 (the default) keeps them in one.
  virtual size_t parallel_units(std::span<const std::string_view> misses) const {
    (void)misses;
    return 1;
  }
  // The relative cost of compiling one source, which the split balances (default: its length).
  virtual double compile_cost(std::string_view source) const { return double(source.size()); }

 private:
  std::string key_hash(std::string_view source) const;  // the entry's file name

  std::string name_;
  std::filesystem::path cache_dir_;
  std::atomic<uint64_t> invocations_{0}, cache_hits_{0}, cache_rejects_{0};
};

}  // namespace sluice::hcq
