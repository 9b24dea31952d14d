// The seeded mutation loop that runs a fuzz target where libFuzzer is not linked (fuzz.h):
//
//   fuzz_<target> [--runs N] [--seed S] [--write-seeds DIR] [FILE|DIR...]
//
// Runs every seed, then N inputs (default 1000), each a seed with one to four edits: bit flips,
// interesting bytes and integers (sizes and counts at their limits), deleted, duplicated and inserted
// ranges, truncations, splices of two seeds. Deterministic for a seed S. With FILEs (or folders of them) it
// runs just those (a crash found earlier: tests/fuzz/regressions, or libFuzzer's); --write-seeds writes the
// seeds as files. Exit 77: no seeds here. A crash ends the process; the input is first saved to
// fuzz-crash-<target>.bin (in $SLUICE_FUZZ_CRASH_DIR, else the working directory) and its path printed, so
// `fuzz_<target> FILE` replays it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "hcq/tool.h"
#include "tests/fuzz/fuzz.h"

// Under ASan/UBSan a report ends in abort(), so the SIGABRT handler below saves the input (their own
// death callbacks live in separate runtimes with gcc). A user's ASAN_OPTIONS/UBSAN_OPTIONS still apply.
extern "C" const char* __asan_default_options() { return "abort_on_error=1:allocator_may_return_null=1"; }
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:print_stacktrace=1"; }

namespace sluice::fuzz {
namespace {

namespace fs = std::filesystem;

// The input being run, for the crash handlers.
const Bytes* current = nullptr;
char crash_path[4096];

void save_current() {
  if (!current) return;
  const int fd = ::open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  ssize_t unused = ::write(fd, current->data(), current->size());
  (void)unused;
  ::close(fd);
  const char msg[] = "\nfuzz: the crashing input is saved in ";
  unused = ::write(2, msg, sizeof msg - 1);
  unused = ::write(2, crash_path, std::strlen(crash_path));
  unused = ::write(2, "\n", 1);
  current = nullptr;
}

void on_signal(int sig) {
  save_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_crash_handlers(const std::string& target) {
  const char* dir = std::getenv("SLUICE_FUZZ_CRASH_DIR");
  const std::string p = (fs::path(dir && *dir ? dir : ".") / ("fuzz-crash-" + target + ".bin")).string();
  std::snprintf(crash_path, sizeof crash_path, "%s", p.c_str());
  // A sanitizer's runtime owns SIGSEGV (it reports, then aborts); std::terminate aborts too.
  struct sigaction old = {};
  ::sigaction(SIGSEGV, nullptr, &old);
  if (old.sa_handler == SIG_DFL)
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_signal);
  std::signal(SIGABRT, on_signal);
}

Bytes read_file(const fs::path& p) {
  if (::access(p.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "fuzz: cannot read %s\n", p.c_str());
    std::exit(2);
  }
  const std::string s = hcq::read_file(p);
  return Bytes(s.begin(), s.end());
}

void run(const Bytes& b) {
  current = &b;
  LLVMFuzzerTestOneInput(b.data(), b.size());
  current = nullptr;
}

void mutate(Bytes& b, const Bytes& other, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  const int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 8) {
      case 0:  // flip a bit
        if (!b.empty()) b[pick(b.size())] ^= uint8_t(1u << (rng() % 8));
        break;
      case 1: {  // an interesting byte
        static const uint8_t kBytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x08, 0x10, 0x1a, 0x22};
        if (!b.empty()) b[pick(b.size())] = kBytes[rng() % std::size(kBytes)];
        break;
      }
      case 2: {  // an interesting little-endian integer: a size, count or offset at a limit
        static const uint64_t kInts[] = {0,          1,          2,          7,          8,
                                         0x7f,       0xff,       0x7fff,     0xffff,     0x7fffffff,
                                         0x80000000, 0xffffffff, 1ull << 32, 1ull << 40, 0x7fffffffffffffff,
                                         ~0ull,      ~0ull - 7,  1ull << 62};
        const size_t w = rng() % 2 ? 4 : 8;
        if (b.size() < w) break;
        const uint64_t v = kInts[rng() % std::size(kInts)];
        std::memcpy(b.data() + pick(b.size() - w + 1), &v, w);
        break;
      }
      case 3: {  // delete a range
        const size_t at = pick(b.size()), n = std::min(b.size() - at, size_t(1 + rng() % 16));
        b.erase(b.begin() + ptrdiff_t(at), b.begin() + ptrdiff_t(at + n));
        break;
      }
      case 4: {  // duplicate a range
        if (b.empty()) break;
        const size_t at = pick(b.size()), n = std::min(b.size() - at, size_t(1 + rng() % 32));
        Bytes dup(b.begin() + ptrdiff_t(at), b.begin() + ptrdiff_t(at + n));
        b.insert(b.begin() + ptrdiff_t(pick(b.size())), dup.begin(), dup.end());
        break;
      }
      case 5: {  // insert random bytes
        const size_t n = 1 + rng() % 8, at = pick(b.size() + 1);
        for (size_t k = 0; k < n; ++k) b.insert(b.begin() + ptrdiff_t(at), uint8_t(rng() & 0xff));
        break;
      }
      case 6:  // truncate
        b.resize(pick(b.size() + 1));
        break;
      default: {  // splice: a prefix of this one, a suffix of the other
        const size_t a = pick(b.size() + 1), o = pick(other.size() + 1);
        b.resize(a);
        b.insert(b.end(), other.begin() + ptrdiff_t(o), other.end());
      }
    }
  }
}

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--runs N] [--seed S] [--write-seeds DIR] [FILE...]\n", argv0);
  std::exit(2);
}

}  // namespace
}  // namespace sluice::fuzz

int main(int argc, char** argv) {
  using namespace sluice::fuzz;
  const std::string target = fs::path(argv[0]).filename().string().substr(sizeof "fuzz_" - 1);
  long runs = 1000;
  uint64_t seed = 1;
  std::string write_dir;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : (usage(argv[0]), ""); };
    if (a == "--runs") {
      runs = std::atol(value().c_str());
    } else if (a == "--seed") {
      seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "--write-seeds") {
      write_dir = value();
    } else if (a.rfind("--", 0) == 0) {
      usage(argv[0]);
    } else {
      files.push_back(a);
    }
  }
  install_crash_handlers(target);
  const auto t0 = std::chrono::steady_clock::now();
  long executed = 0;
  if (!files.empty()) {
    for (const std::string& f : files) {
      std::vector<fs::path> paths = {f};
      if (fs::is_directory(f)) {
        paths.assign(fs::directory_iterator(f), fs::directory_iterator());
        std::sort(paths.begin(), paths.end());
      }
      for (const fs::path& p : paths) {
        run(read_file(p));
        ++executed;
      }
    }
  } else {
    const std::vector<Bytes> s = seeds();
    if (s.empty()) {
      std::printf("fuzz %s: no seeds here (skipped)\n", target.c_str());
      return 77;
    }
    if (!write_dir.empty()) {
      fs::create_directories(write_dir);
      for (size_t i = 0; i < s.size(); ++i) {
        std::ofstream(fs::path(write_dir) / ("seed-" + std::to_string(i)), std::ios::binary)
            .write(reinterpret_cast<const char*>(s[i].data()), std::streamsize(s[i].size()));
      }
      std::printf("fuzz %s: %zu seeds written to %s\n", target.c_str(), s.size(), write_dir.c_str());
      return 0;
    }
    for (const Bytes& b : s) run(b);
    // Some ONNX suite models use ops sluice does not have; a target whose every seed fails tests nothing.
    if (rejected == long(s.size())) {
      std::fprintf(stderr, "fuzz %s: all %zu seeds are rejected: the seeds are broken\n", target.c_str(),
                   s.size());
      return 1;
    }
    std::mt19937_64 rng(seed);
    for (long i = 0; i < runs; ++i) {
      Bytes b = s[rng() % s.size()];
      mutate(b, s[rng() % s.size()], rng);
      run(b);
    }
    executed = long(s.size()) + runs;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fuzz %s: %ld executions, %ld rejected with sluice::Error, 0 crashes, %.1f s\n", target.c_str(),
              executed, rejected, secs);
  return 0;
}
