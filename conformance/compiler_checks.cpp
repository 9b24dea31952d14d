// Compiler conformance: the disk cache (a hit compiles nothing, across compiler instances as across
// processes; damaged entries are compiled again) and batched compiles in one compiler process.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/log.h"
#include "conformance/check.h"
#include "hcq/error.h"
#include "hcq/tool.h"

namespace sluice::conformance {
namespace {

namespace fs = std::filesystem;

// A fresh cache folder for one check, removed when it ends.
struct CacheDir {
  fs::path path = fs::temp_directory_path() / ("sluice-cts-cache-" + std::to_string(::getpid()));
  CacheDir() { fs::remove_all(path); }
  ~CacheDir() { fs::remove_all(path); }
};

std::unique_ptr<hcq::Compiler> compiler(Context& c, const fs::path& dir) {
  if (!c.entry().make_compiler) throw Skip(c.entry().kind + " has no compiler the checks can feed source");
  return c.entry().make_compiler(dir);
}

// What a store kernel (kernels.h) stores, run from `bin`.
int run_store_kernel(Context& c, const std::string& name, const hcq::Binary& bin) {
  hcq::Device& dev = c.dev();
  auto p = dev.load_program(name, bin, {1, 0});
  hcq::Buffer b = dev.allocator().alloc(4);
  b.last_use = hcq::HwQueue().exec(*p, {{b.addr}, {}}, {1}).submit(dev);
  int got = 0;
  dev.allocator().copyout(&got, b, 4);
  dev.allocator().free(b);
  return got;
}

void compiler_cache_hit(Context& c) {  // a second compile of the same source compiles nothing
  CacheDir dir;
  const std::string src = "int cts_cached(int x) { return x + 1; }\n";
  auto first = compiler(c, dir.path);
  hcq::Binary bin = first->compile(src);
  CONF_EXPECT_EQ(first->invocations(), 1u);
  CONF_EXPECT(first->compile(src) == bin) << "a cache hit gave another binary";
  CONF_EXPECT_EQ(first->invocations(), 1u);
  CONF_EXPECT_EQ(first->cache_hits(), 1u);
  auto second = compiler(c, dir.path);  // as a later process would
  CONF_EXPECT(second->compile(src) == bin) << "another compiler's hit gave another binary";
  CONF_EXPECT_EQ(second->invocations(), 0u);
  // Whole files only: nothing but the cache entry is left behind.
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path)) {
    if (!e.is_regular_file()) continue;
    ++files;
    CONF_EXPECT(e.path().filename().string().find(".tmp") == std::string::npos) << e.path();
  }
  CONF_EXPECT_EQ(files, 1);
}

void compiler_compile_many(Context& c) {  // a batch runs one compiler process
  CacheDir dir;
  auto cc = compiler(c, dir.path);
  std::vector<std::string> srcs;
  for (int i = 0; i < 3; ++i)
    srcs.push_back(store_kernel(c.entry().language, "cts_many" + std::to_string(i), 10 + i));
  std::vector<hcq::Binary> bins = cc->compile_many(srcs);
  CONF_EXPECT_EQ(cc->invocations(), 1u);
  CONF_EXPECT_EQ(cc->compile_many(srcs).size(), 3u);
  CONF_EXPECT_EQ(cc->invocations(), 1u);
  CONF_EXPECT_EQ(cc->cache_hits(), 3u);
  if (!c.runs("queue/exec")) return;  // the device runs no kernels
  for (int i = 0; i < 3; ++i)
    CONF_EXPECT_EQ(run_store_kernel(c, "cts_many" + std::to_string(i), bins[size_t(i)]), 10 + i);
}

// A damaged cache entry is never loaded: a flipped byte, a truncated file or two entries swapped are each
// discarded and compiled again, the kernels then compute what they should, and the entries are whole again.
void compiler_damaged_entries(Context& c) {
  CacheDir dir;
  std::vector<std::string> srcs;
  for (int i = 0; i < 2; ++i)
    srcs.push_back(store_kernel(c.entry().language, "cts_damaged" + std::to_string(i), 20 + i));
  for (const std::string& src : srcs) compiler(c, dir.path)->compile(src);  // an entry each
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir.path))
    if (e.is_regular_file()) files.push_back(e.path());
  CONF_EXPECT_EQ(files.size(), 2u);
  auto put = [](const fs::path& p, const std::string& b) { std::ofstream(p, std::ios::binary) << b; };
  const std::string a = hcq::read_file(files[0]), b = hcq::read_file(files[1]);
  auto expect_recompiled = [&](const char* what, uint64_t rejects) {
    auto cc = compiler(c, dir.path);
    std::vector<hcq::Binary> bins = cc->compile_many(srcs);
    CONF_EXPECT_EQ(cc->cache_rejects(), rejects) << what;
    CONF_EXPECT_EQ(cc->invocations(), 1u) << what;
    auto again = compiler(c, dir.path);
    again->compile_many(srcs);
    CONF_EXPECT_EQ(again->cache_hits(), 2u) << what << ": the entries are whole again";
    for (int i = 0; i < 2; ++i)
      CONF_EXPECT_EQ(run_store_kernel(c, "cts_damaged" + std::to_string(i), bins[size_t(i)]), 20 + i) << what;
  };
  std::string flipped = a;
  flipped[flipped.size() - 1] ^= 0x10;
  put(files[0], flipped);
  std::vector<std::string> said;  // what SLUICE_DEBUG shows: the file, and why it was not used
  {
    struct Restore {  // the log as it was, whatever happens
      LogLevel level = log_level();
      ~Restore() {
        set_log_level(level);
        set_log_sink({});
      }
    } restore;
    set_log_sink([&](LogLevel, std::string_view m) { said.emplace_back(m); });
    set_log_level(LogLevel::Info);
    expect_recompiled("a flipped byte", 1);
  }
  CONF_EXPECT_EQ(said.size(), 1u);
  CONF_EXPECT_EQ(said[0], "kernel cache: discarded " + files[0].string() +
                              " (its contents do not match their checksum); compiling again");
  put(files[0], a.substr(0, a.size() / 2));
  expect_recompiled("a truncated entry", 1);
  put(files[0], a.substr(0, 10));
  expect_recompiled("a few bytes", 1);
  put(files[0], b), put(files[1], a);
  expect_recompiled("two entries swapped", 2);
}

void compiler_error_diagnostics(Context& c) {  // a compile error carries the compiler's diagnostics
  CacheDir dir;
  auto cc = compiler(c, dir.path);
  std::string m = "(no error)";
  try {
    cc->compile("int broken( { }\n");
  } catch (const hcq::CompileError& e) { m = e.what(); }
  CONF_EXPECT(m.rfind("[compile] ", 0) == 0) << m;
  CONF_EXPECT(m.find("error") != std::string::npos) << m;
}

}  // namespace

std::vector<Check> compiler_checks() {
  return {
      {"queue/compiler_cache_hit", compiler_cache_hit},
      {"queue/compiler_compile_many", compiler_compile_many},
      {"queue/compiler_damaged_entries", compiler_damaged_entries},
      {"queue/compiler_error_diagnostics", compiler_error_diagnostics},
  };
}

}  // namespace sluice::conformance
