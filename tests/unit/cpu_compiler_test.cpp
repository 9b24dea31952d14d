// The CPU compiler's output path without a device: C compiled by clang to a relocatable object, loaded by
// our ELF loader (backends/cpu/elf.h), its functions called directly; and compile_many's parallel split.
#include <elf.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/cpu/clang_library.h"
#include "backends/cpu/compiler.h"
#include "backends/cpu/elf.h"
#include "gtest/gtest.h"
#include "hcq/error.h"
#include "hcq/tool.h"

namespace sluice::cpu {
namespace {

namespace fs = std::filesystem;

class CpuCompiler : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice-cpucc-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    compiler_ = make_compiler(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The object for `src`; skips the test where there is no clang.
  hcq::Binary compile(const std::string& src) {
    try {
      return compiler_->compile(src);
    } catch (const hcq::CompileError& e) {
      if (std::string(e.what()).find("clang not found") != std::string::npos) {
        skipped_ = true;
        return {};
      }
      throw;
    }
  }
  std::string load_error(const hcq::Binary& bin) {
    try {
      Image::load(bin, "test object");
    } catch (const hcq::Error& e) { return e.what(); }
    return "";
  }

  fs::path dir_;
  std::unique_ptr<hcq::Compiler> compiler_;
  bool skipped_ = false;
};

#define COMPILE_OR_SKIP(bin, src) \
  hcq::Binary bin = compile(src); \
  if (skipped_) GTEST_SKIP() << "no clang on PATH (set SLUICE_CLANG)"

// Library calls (stubs for far PLT32 calls), a global array (GOTPCREL), constant tables (PC32 into .rodata),
// writable statics (.data, .bss), a table of function pointers (R_X86_64_64), calls between functions.
constexpr const char* kMixed = R"C(
#include <math.h>
#include <string.h>
float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
static const float weights[8] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f};
static int counter;
static int start = 100;
static float twice(float x) { return 2.0f * x; }
static float thrice(float x) { return 3.0f * x; }
float (*const ops[2])(float) = {twice, thrice};
__attribute__((noinline)) float lib_sum(float x) { return sinf(x) + expf(x) + sqrtf(x) + powf(x, 1.5f); }
float dot(const float* a, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += a[i] * weights[i % 8] + table[i % 4];
  return s;
}
int bump(void) { return start + ++counter; }
float apply(int which, float x) { return ops[which](x); }
void copy(float* dst, const float* src, int n) { memcpy(dst, src, (unsigned long)n * sizeof(float)); }
)C";

TEST_F(CpuCompiler, LoadsAnObjectAndResolvesItsRelocations) {
  COMPILE_OR_SKIP(bin, kMixed);
  auto img = Image::load(bin, "mixed");
  auto lib_sum = reinterpret_cast<float (*)(float)>(img->symbol("lib_sum"));
  auto dot = reinterpret_cast<float (*)(const float*, int)>(img->symbol("dot"));
  auto bump = reinterpret_cast<int (*)()>(img->symbol("bump"));
  auto apply = reinterpret_cast<float (*)(int, float)>(img->symbol("apply"));
  auto copy = reinterpret_cast<void (*)(float*, const float*, int)>(img->symbol("copy"));
  ASSERT_TRUE(lib_sum && dot && bump && apply && copy);
  EXPECT_EQ(img->symbol("weights"), nullptr);  // local symbols are not exported
  EXPECT_EQ(img->symbol("no_such_function"), nullptr);

  for (float x : {0.25f, 1.0f, 2.5f})
    EXPECT_NEAR(lib_sum(x), std::sin(x) + std::exp(x) + std::sqrt(x) + std::pow(x, 1.5f),
                1e-4f * std::exp(x));
  std::vector<float> a(37);
  double want = 0;
  for (int i = 0; i < 37; ++i) {
    a[size_t(i)] = float(i) * 0.25f - 3.0f;
    want += double(a[size_t(i)]) * (0.5 + (i % 8)) + (1 + i % 4);
  }
  EXPECT_NEAR(dot(a.data(), 37), want, 1e-3);
  EXPECT_EQ(bump(), 101);
  EXPECT_EQ(bump(), 102);
  EXPECT_EQ(apply(0, 5.0f), 10.0f);
  EXPECT_EQ(apply(1, 5.0f), 15.0f);
  std::vector<float> out(37, 0.0f);
  copy(out.data(), a.data(), 37);
  EXPECT_EQ(out, a);

  // The exported array is the image's own, writable data.
  auto* table = static_cast<float*>(img->symbol("table"));
  ASSERT_NE(table, nullptr);
  table[0] = 11.0f;
  EXPECT_NEAR(dot(a.data(), 1), double(a[0]) * 0.5 + 11.0, 1e-5);
  // Two loads of one object are independent images.
  auto other = Image::load(bin, "mixed again");
  EXPECT_EQ(reinterpret_cast<int (*)()>(other->symbol("bump"))(), 101);
}

// The first relocation of the first RELA section of `bin` against a code section: its type is set to `type`.
void set_first_relocation(hcq::Binary& bin, uint32_t type) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, bin.data(), sizeof eh);
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bin.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_RELA || sh.sh_size == 0) continue;
    Elf64_Rela rel;
    std::memcpy(&rel, bin.data() + sh.sh_offset, sizeof rel);
    rel.r_info = ELF64_R_INFO(ELF64_R_SYM(rel.r_info), type);
    std::memcpy(bin.data() + sh.sh_offset, &rel, sizeof rel);
    return;
  }
  FAIL() << "the object has no relocations";
}

TEST_F(CpuCompiler, RejectsWhatItCannotLoadWithAReason) {
  COMPILE_OR_SKIP(bin,
                  "extern int sluice_nowhere(int);\nint call_it(int x) { return sluice_nowhere(x) + 1; }\n");
  std::string e = load_error(bin);
  EXPECT_NE(e.find("[load_program] test object: undefined symbol 'sluice_nowhere'"), std::string::npos) << e;

  hcq::Binary bad = bin;
  set_first_relocation(bad, R_X86_64_GOTOFF64);
  e = load_error(bad);
  EXPECT_NE(e.find("unsupported relocation R_X86_64_GOTOFF64 (type 25) against symbol 'sluice_nowhere'"),
            std::string::npos)
      << e;

  e = load_error(hcq::Binary(bin.begin(), bin.begin() + 100));
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  e = load_error(hcq::Binary(64, 0));
  EXPECT_NE(e.find("not an ELF object"), std::string::npos) << e;

  COMPILE_OR_SKIP(tls, "__thread int per_thread;\nint get(void) { return per_thread; }\n");
  e = load_error(tls);
  EXPECT_NE(e.find("thread-local section"), std::string::npos) << e;
}

size_t cores() {
  cpu_set_t set;
  return ::sched_getaffinity(0, sizeof(set), &set) == 0 ? size_t(CPU_COUNT(&set)) : 1;
}

// A kernel whose compile is worth a process of its own (~40 KB of source), returning `value`.
std::string lengthy(const std::string& name, int value) {
  std::string s = "int " + name + "(const int* a) {\n  int s = " + std::to_string(value) + ";\n";
  for (int i = 0; i < 2000; ++i)
    s += "  s += a[" + std::to_string(i % 7) + "] * " + std::to_string(i) + ";\n";
  return s + "  return s;\n}\n";
}

TEST_F(CpuCompiler, CompileManySplitsABigBatchAcrossCoresAndCachesEachSource) {
  std::vector<std::string> srcs = {lengthy("k0", 1), lengthy("k1", 2), "int k2(void) { return 3; }\n"};
  COMPILE_OR_SKIP(probe, "int probe(void) { return 0; }\n");
  const uint64_t before = compiler_->invocations();
  std::vector<hcq::Binary> bins = compiler_->compile_many(srcs);
  // In a process per unit, each of the two lengthy sources pays for one; in process, all three do.
  const bool in_process = ClangLibrary::find() && !std::getenv("SLUICE_CLANG");
  EXPECT_EQ(compiler_->invocations() - before, std::min<size_t>(cores(), in_process ? 3 : 2));
  const int zeros[7] = {0};
  for (int i = 0; i < 3; ++i) {
    auto img = Image::load(bins[size_t(i)], "k");
    void* f = img->symbol("k" + std::to_string(i));
    ASSERT_NE(f, nullptr) << i;
    const int got =
        i < 2 ? reinterpret_cast<int (*)(const int*)>(f)(zeros) : reinterpret_cast<int (*)()>(f)();
    EXPECT_EQ(got, i + 1);
  }
  auto again = make_compiler(dir_);  // as a later process would
  EXPECT_EQ(again->compile_many(srcs), bins);
  EXPECT_EQ(again->invocations(), 0u);
  EXPECT_EQ(again->cache_hits(), 3u);
}

TEST_F(CpuCompiler, ACompileErrorInOneUnitCarriesItsDiagnostics) {
  COMPILE_OR_SKIP(probe, "int probe(void) { return 0; }\n");
  std::vector<std::string> srcs = {lengthy("ok0", 1), lengthy("ok1", 2) + "int broken( {\n"};
  try {
    compiler_->compile_many(srcs);
    FAIL() << "the compile should fail";
  } catch (const hcq::CompileError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("[compile] ", 0), 0u) << m;
    EXPECT_NE(m.find("error"), std::string::npos) << m;
  }
}

// The executable code of an object: its SHF_EXECINSTR sections' bytes, in section order.
std::string code_of(const hcq::Binary& bin) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, bin.data(), sizeof eh);
  std::string code;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bin.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR))
      code.append(reinterpret_cast<const char*>(bin.data() + sh.sh_offset), sh.sh_size);
  }
  return code;
}

// With the in-process clang built, kernels compile in this process; $SLUICE_CLANG asks for a clang process
// instead (a wrapper that leaves a mark shows it ran). Both make the same code: the library runs the -cc1
// job the clang driver makes for the same command line.
TEST_F(CpuCompiler, CompilesInProcessUnlessSluiceClangNamesAClangToRunAndBothMakeTheSameCode) {
  if (!ClangLibrary::find()) GTEST_SKIP() << "this build has no in-process clang (clang/LLVM 14 archives)";
  if (std::getenv("SLUICE_CLANG")) GTEST_SKIP() << "SLUICE_CLANG is set: no in-process compile to test";
  const std::string src =
      "int scaled(const int* a, int n) { int s = 0; for (int i = 0; i < n; ++i) s += 3 * a[i]; return s; }\n"
      "void axpy(float* y, const float* x, float a, int n) { for (int i = 0; i < n; ++i) y[i] += a * x[i]; "
      "}\n";
  const int a[4] = {1, 2, 3, 4};
  auto run = [&](const hcq::Binary& bin) {
    auto img = Image::load(bin, "scaled");
    return reinterpret_cast<int (*)(const int*, int)>(img->symbol("scaled"))(a, 4);
  };
  const std::string inside_version = compiler_->description();
  EXPECT_NE(inside_version.find("(in process, "), std::string::npos) << inside_version;
  COMPILE_OR_SKIP(inside, src);
  EXPECT_EQ(run(inside), 30);

  const fs::path clang = find_clang(), wrapper = dir_ / "clang-wrapper", mark = dir_ / "ran";
  ASSERT_FALSE(clang.empty());
  {
    std::ofstream w(wrapper);
    w << "#!/bin/sh\ntouch '" << mark.string() << "'\nexec '" << clang.string() << "' \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  ::setenv("SLUICE_CLANG", wrapper.c_str(), 1);
  auto process = make_compiler(dir_ / "process-cache");
  const std::string process_version = process->description();
  const hcq::Binary outside = process->compile(src);
  ::unsetenv("SLUICE_CLANG");
  EXPECT_EQ(process_version.find("(in process, "), std::string::npos) << process_version;
  EXPECT_TRUE(fs::exists(mark)) << "no clang process ran";
  EXPECT_EQ(run(outside), 30);
  // "Debian clang version 14.0.6 (...)": the same clang release both ways, or the code may differ.
  auto release = [](const std::string& v) { return v.substr(0, v.find(" (")); };
  if (release(inside_version) != release(process_version))
    GTEST_SKIP() << "the clang on PATH is another release: " << process_version << " vs " << inside_version;
  EXPECT_FALSE(code_of(inside).empty());
  EXPECT_EQ(code_of(inside), code_of(outside)) << "the in-process compile made other code than clang -c";
}

// The module tells clang's driver where the clang it was built from lives, which is where a clang process
// would find its own headers (the resource directory: stddef.h, the x86 intrinsics). The compile alone
// passes on Debian even with a wrong path (its driver falls back to /usr/include/clang/<version>); the
// description's path is what pins it.
TEST_F(CpuCompiler, InProcessCompilesFindClangsOwnHeaders) {
  if (!ClangLibrary::find()) GTEST_SKIP() << "this build has no in-process clang (clang/LLVM 14 archives)";
  if (std::getenv("SLUICE_CLANG")) GTEST_SKIP() << "SLUICE_CLANG is set: no in-process compile to test";
  // "Debian clang version 14.0.6 (in process, /usr/lib/llvm-14/bin/clang)": the clang it was built from.
  const std::string d = compiler_->description();
  const size_t at = d.find("(in process, ");
  ASSERT_NE(at, std::string::npos) << d;
  const fs::path clang = d.substr(at + 13, d.size() - at - 14);
  EXPECT_TRUE(fs::is_directory(clang.parent_path().parent_path() / "lib" / "clang")) << d;
  COMPILE_OR_SKIP(bin,
                  "#include <stddef.h>\n#include <immintrin.h>\n"
                  "size_t aligned(void) { return _Alignof(max_align_t) + sizeof(__m128); }\n");
  auto img = Image::load(bin, "aligned");
  EXPECT_EQ(reinterpret_cast<size_t (*)()>(img->symbol("aligned"))(), 32u);
}

// The codegen's widest CPU vector is AVX-512's 16 floats (backends/cpu/device.cpp). clang's tuning for
// Intel cores prefers 256 bits and split each such vector in two, spilling a matmul tile's accumulators
// (half the speed); the CPU compiler asks for 512-bit registers, so the tile's FMAs are on zmm registers.
TEST_F(CpuCompiler, SixteenFloatVectorsStayInZmmRegistersWithAvx512) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "this processor has no AVX-512";
  const std::string src = R"C(
typedef float float16 __attribute__((ext_vector_type(16), aligned(4)));
void tile(float* out, const float* a, const float* b, int n) {
  float16 acc0 = 0, acc1 = 0;
  for (int i = 0; i < n; i++) {
    acc0 += *(const float16*)(a + 32 * i) * b[i];
    acc1 += *(const float16*)(a + 32 * i + 16) * b[i];
  }
  *(float16*)out = acc0;
  *(float16*)(out + 16) = acc1;
}
)C";
  COMPILE_OR_SKIP(bin, src);
  std::vector<float> a(64), b = {2.0f, 3.0f}, out(32);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i);
  auto img = Image::load(bin, "tile");
  reinterpret_cast<void (*)(float*, const float*, const float*, int)>(img->symbol("tile"))(
      out.data(), a.data(), b.data(), 2);
  for (size_t j = 0; j < 32; ++j) ASSERT_EQ(out[j], 2.0f * a[j] + 3.0f * a[32 + j]) << j;

  const fs::path object = dir_ / "tile.o";
  std::ofstream(object, std::ios::binary).write(reinterpret_cast<const char*>(bin.data()), bin.size());
  std::string listing;
  if (std::string(SLUICE_OBJDUMP).empty()) GTEST_SKIP() << "CMake found no objdump to read the code with";
  try {
    if (hcq::run_tool({SLUICE_OBJDUMP, "-d", object.string()}, &listing) != 0)
      GTEST_SKIP() << "objdump failed: " << listing;
  } catch (const hcq::Error& e) { GTEST_SKIP() << "no objdump to read the code with: " << e.what(); }
  EXPECT_NE(listing.find("zmm"), std::string::npos) << "16-float vectors were split:\n" << listing;
}

bool llvm_is_mapped() {
  std::ifstream maps("/proc/self/maps");
  const std::string all((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  return all.find("libsluice_clang") != std::string::npos;  // the module that holds clang and LLVM
}

// LLVM is loaded on the first compile that misses the cache, never before: a process that finds every
// kernel cached (here, filled by a child process) does without it.
// Not a CpuCompiler fixture test: this one makes its compilers itself, after checking LLVM is not there yet.
TEST(ClangLibrary, AProcessThatFindsEveryKernelCachedNeverLoadsLlvm) {
  if (llvm_is_mapped()) GTEST_SKIP() << "an earlier test of this process loaded LLVM (ctest runs each alone)";
  if (!ClangLibrary::find()) GTEST_SKIP() << "this build has no in-process clang (clang/LLVM 14 archives)";
  if (std::getenv("SLUICE_CLANG")) GTEST_SKIP() << "SLUICE_CLANG is set: no in-process compile to test";
  const fs::path dir = fs::temp_directory_path() / ("sluice-cached-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string src = "int cached(void) { return 7; }\n";
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      make_compiler(dir)->compile(src);
    } catch (...) { ::_exit(1); }
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child could not compile";
  auto again = make_compiler(dir);
  auto img = Image::load(again->compile(src), "cached");
  EXPECT_EQ(reinterpret_cast<int (*)()>(img->symbol("cached"))(), 7);
  EXPECT_EQ(again->invocations(), 0u);
  EXPECT_FALSE(llvm_is_mapped());

  fs::remove_all(dir);
}

// A module that cannot be loaded is a LoadError naming it (the compiler then runs a clang process).
TEST(ClangLibrary, AModuleThatCannotBeLoadedIsALoadErrorNamingIt) {
  ClangLibrary missing("/nonexistent/libsluice_clang.so");
  const std::string flags[] = {"-c"};
  const std::string_view sources[] = {"int f(void) { return 1; }"};
  try {
    missing.compile(flags, sources);
    FAIL() << "loading should fail";
  } catch (const ClangLibrary::LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libsluice_clang.so"), std::string::npos) << e.what();
  }
  EXPECT_NE(missing.version().find("cannot load"), std::string::npos) << missing.version();
}

// A compile killed with SIGKILL leaves its scratch directory behind; the next process's first compile
// removes it (its owner's pid is gone) and keeps those of live processes.
TEST(TempDirs, StaleOnesOfDeadProcessesAreRemoved) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const fs::path tmp = fs::temp_directory_path();
  const fs::path stale = tmp / ("sluice-staletest-" + std::to_string(child) + "-abc123");
  const fs::path live = tmp / ("sluice-staletest-" + std::to_string(::getppid()) + "-def456");
  fs::create_directories(stale / "sub");
  fs::create_directories(live);
  {
    hcq::TempDir fresh("sluice-staletest");
    EXPECT_TRUE(fs::is_directory(fresh.path()));
  }
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  fs::remove_all(live);
}

// A compiler that never returns is stopped at its time limit, with what it started (a process group), and
// the error says which limit; a tool that finishes reports its status as soon as it exits.
TEST(RunTool, AHungToolIsStoppedAtItsTimeLimit) {
  using namespace std::chrono_literals;
  std::string out;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(hcq::run_tool({"/bin/sh", "-c", "echo hi; exit 3"}, &out, 5s), 3);
  EXPECT_EQ(out, "hi\n");
  try {
    hcq::run_tool({"/bin/sh", "-c", "sleep 30 & sleep 30"}, &out, 300ms);
    ADD_FAILURE() << "no timeout";
  } catch (const hcq::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("/bin/sh did not finish within 0.3 s"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("SLUICE_COMPILE_TIMEOUT"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

// A compiler is told apart by what its path resolves to, and a rebuilt one by its size and time: the
// compile cache must not serve objects of the old one. A path that does not resolve is its own identity.
TEST(ToolIdentity, FollowsLinksAndChangesWhenTheToolIsReplaced) {
  hcq::TempDir dir("sluice-identitytest");
  const fs::path tool = dir.path() / "cc-real", link = dir.path() / "cc";
  std::ofstream(tool) << "one";
  fs::create_symlink(tool, link);
  const std::string before = hcq::tool_identity(link);
  EXPECT_EQ(
      before.rfind("clang=" + link.string() + " real=" + fs::canonical(tool).string() + " size=3 mtime=", 0),
      0u)
      << before;
  std::ofstream(tool) << "other";
  EXPECT_NE(hcq::tool_identity(link), before);
  EXPECT_EQ(hcq::tool_identity(dir.path() / "missing"), "clang=" + (dir.path() / "missing").string());
}

}  // namespace
}  // namespace sluice::cpu
