// Compiler conformance: the disk cache and batched compiles.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/log.h"
#include "hcq/error.h"
#include "hcq/tool.h"
#include "tests/cts/devices.h"

namespace sluice::cts {
namespace {

namespace fs = std::filesystem;

TEST(CompilerCache, Sha256KnownVectors) {
  EXPECT_EQ(hcq::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hcq::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hcq::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

class CompilerTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    CTS_REQUIRE(DiskCache);
    dir_ = fs::temp_directory_path() / ("sluice-cts-cache-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A kernel that stores `value` to its first buffer, in this device's source language.
  std::string store_kernel_source(const std::string& name, int value) {
    return entry().store_kernel
               ? entry().store_kernel(name, value)
               : "void " + name +
                     "(void* const* bufs, const int* vars, const unsigned* launch, int core_id, "
                     "int n_cores) { ((int*)bufs[0])[0] = " +
                     std::to_string(value) + "; }\n";
  }
  // What that kernel stores, run from `bin`.
  int run_store_kernel(const std::string& name, const hcq::Binary& bin) {
    auto p = dev().load_program(name, bin, {1, 0});
    hcq::Buffer b = dev().allocator().alloc(4);
    b.last_use = hcq::HwQueue().exec(*p, {{b.addr}, {}}, {1}).submit(dev());
    int got = 0;
    dev().allocator().copyout(&got, b, 4);
    dev().allocator().free(b);
    return got;
  }
  fs::path dir_;
};

TEST_P(CompilerTest, SecondCompileOfTheSameSourceCompilesNothing) {
  const std::string src = "int cts_cached(int x) { return x + 1; }\n";
  auto first = entry().make_compiler(dir_);
  hcq::Binary bin = first->compile(src);
  EXPECT_EQ(first->invocations(), 1u);
  EXPECT_EQ(first->compile(src), bin);
  EXPECT_EQ(first->invocations(), 1u);
  EXPECT_EQ(first->cache_hits(), 1u);
  auto second = entry().make_compiler(dir_);  // as a later process would
  EXPECT_EQ(second->compile(src), bin);
  EXPECT_EQ(second->invocations(), 0u);
  // Whole files only: nothing but the cache entry is left behind.
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    if (!e.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, 1);
}

TEST_P(CompilerTest, CompileManyRunsOneCompilerProcess) {
  auto c = entry().make_compiler(dir_);
  std::vector<std::string> srcs;
  for (int i = 0; i < 3; ++i) srcs.push_back(store_kernel_source("cts_many" + std::to_string(i), 10 + i));
  std::vector<hcq::Binary> bins = c->compile_many(srcs);
  EXPECT_EQ(c->invocations(), 1u);
  EXPECT_EQ(c->compile_many(srcs).size(), 3u);
  EXPECT_EQ(c->invocations(), 1u);
  EXPECT_EQ(c->cache_hits(), 3u);
  if (!unsupported(Feature::Execution).empty()) return;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(run_store_kernel("cts_many" + std::to_string(i), bins[size_t(i)]), 10 + i);
}

// A damaged cache entry is never loaded: a flipped byte, a truncated file or two entries swapped are each
// discarded and compiled again, the kernels then compute what they should, and the entries are whole again.
TEST_P(CompilerTest, DamagedCacheEntriesAreCompiledAgain) {
  CTS_REQUIRE(Execution);
  std::vector<std::string> srcs;
  for (int i = 0; i < 2; ++i) srcs.push_back(store_kernel_source("cts_damaged" + std::to_string(i), 20 + i));
  for (const std::string& src : srcs) entry().make_compiler(dir_)->compile(src);  // an entry each
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    if (e.is_regular_file()) files.push_back(e.path());
  ASSERT_EQ(files.size(), 2u);
  auto put = [](const fs::path& p, const std::string& b) { std::ofstream(p, std::ios::binary) << b; };
  const std::string a = hcq::read_file(files[0]), b = hcq::read_file(files[1]);
  auto expect_recompiled = [&](const char* what, uint64_t rejects) {
    auto c = entry().make_compiler(dir_);
    std::vector<hcq::Binary> bins = c->compile_many(srcs);
    EXPECT_EQ(c->cache_rejects(), rejects) << what;
    EXPECT_EQ(c->invocations(), 1u) << what;
    auto again = entry().make_compiler(dir_);
    again->compile_many(srcs);
    EXPECT_EQ(again->cache_hits(), 2u) << what << ": the entries are whole again";
    for (int i = 0; i < 2; ++i)
      EXPECT_EQ(run_store_kernel("cts_damaged" + std::to_string(i), bins[size_t(i)]), 20 + i) << what;
  };
  std::string flipped = a;
  flipped[flipped.size() - 1] ^= 0x10;
  put(files[0], flipped);
  std::vector<std::string> said;  // what SLUICE_DEBUG shows: the file, and why it was not used
  set_log_sink([&](LogLevel, std::string_view m) { said.emplace_back(m); });
  const LogLevel level = log_level();
  set_log_level(LogLevel::Info);
  expect_recompiled("a flipped byte", 1);
  set_log_level(level);
  set_log_sink({});
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], "kernel cache: discarded " + files[0].string() +
                         " (its contents do not match their checksum); compiling again");
  put(files[0], a.substr(0, a.size() / 2));
  expect_recompiled("a truncated entry", 1);
  put(files[0], a.substr(0, 10));
  expect_recompiled("a few bytes", 1);
  put(files[0], b), put(files[1], a);
  expect_recompiled("two entries swapped", 2);
}

TEST_P(CompilerTest, CompileErrorCarriesDiagnostics) {
  auto c = entry().make_compiler(dir_);
  try {
    c->compile("int broken( { }\n");
    FAIL() << "the compile should fail";
  } catch (const hcq::CompileError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("[compile] ", 0), 0u) << m;
    EXPECT_NE(m.find("error"), std::string::npos) << m;
  }
}

CTS_INSTANTIATE(CompilerTest);

}  // namespace
}  // namespace sluice::cts
