// Compiler conformance: the disk cache and batched compiles.
#include <unistd.h>

#include <filesystem>

#include "hcq/error.h"
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
  for (int i = 0; i < 3; ++i)
    srcs.push_back(entry().store_kernel
                       ? entry().store_kernel("cts_many" + std::to_string(i), 10 + i)
                       : "void cts_many" + std::to_string(i) +
                             "(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int "
                             "n_cores) {"
                             " ((int*)bufs[0])[0] = " +
                             std::to_string(10 + i) + "; }\n");
  std::vector<hcq::Binary> bins = c->compile_many(srcs);
  EXPECT_EQ(c->invocations(), 1u);
  EXPECT_EQ(c->compile_many(srcs).size(), 3u);
  EXPECT_EQ(c->invocations(), 1u);
  EXPECT_EQ(c->cache_hits(), 3u);
  if (!unsupported(Feature::Execution).empty()) return;
  hcq::Buffer b = dev().allocator().alloc(4);
  for (int i = 0; i < 3; ++i) {
    auto p = dev().load_program("cts_many" + std::to_string(i), bins[i], {1, 0});
    b.last_use = hcq::HwQueue().exec(*p, {{b.addr}, {}}, {1}).submit(dev());
    int got = 0;
    dev().allocator().copyout(&got, b, 4);
    EXPECT_EQ(got, 10 + i);
  }
  dev().allocator().free(b);
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
