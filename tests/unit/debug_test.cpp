// SLUICE_DEBUG's reports (base/debug.h, runtime/debug_report.h) as an application's log sink sees them:
// the level-2 line of a kernel whose bytes and flops are known, a JIT replay labelled as such, and the
// AST with its opts at level 3 during a normal realize; durations in units chosen by magnitude. (Kernel
// names after opts and codegen's flop and byte estimates: opts_test.cpp.)
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "base/debug.h"
#include "base/log.h"
#include "runtime/debug_report.h"
#include "runtime/jit.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

// Collects what the logger says at a debug level; puts everything back afterwards.
struct Captured {
  std::vector<std::string> lines;
  int debug_was = debug_level();
  LogLevel level_was = log_level();
  explicit Captured(int debug) {
    set_log_sink([this](LogLevel, std::string_view m) { lines.emplace_back(m); });
    set_debug_level(debug);
  }
  ~Captured() {
    set_debug_level(debug_was);
    set_log_level(level_was);
    set_log_sink(nullptr);
  }
  std::string all() const {
    std::string s;
    for (const std::string& l : lines) s += l + "\n";
    return s;
  }
};

Tensor filled(const Shape& shape, float v) {
  return Tensor::from(std::vector<float>(size_t(prod(shape)), v), shape, "CPU");
}

double ns_of(double v, const std::string& unit) {
  return unit == "ns" ? v : unit == "us" ? v * 1e3 : unit == "ms" ? v * 1e6 : v * 1e9;
}
double bytes_of(double v, const std::string& unit) {
  return unit == "B" ? v : unit == "KB" ? v * 1e3 : unit == "MB" ? v * 1e6 : v * 1e9;
}

// A level-2 kernel line: label, number, device, name, buffers, memory, time, cumulative, rates, ops.
const std::regex kKernelLine(
    R"(^(realize|replay) +#(\d+) +(\S+) +(\S+) +(\d+) bufs +mem +([\d.]+) (B|KB|MB|GB) +([\d.]+) (ns|us|ms|s) +cum +([\d.]+) (ns|us|ms|s) +([\d.]+) GFLOP/s +([\d.]+) GB/s +(.*)  \[(.*)\]$)");

TEST(Debug, Level2LineOfAKnownKernel) {
  Tensor a = filled({256, 256}, 1), b = filled({256, 256}, 2);
  a.realize(), b.realize();
  Captured c(2);
  Tensor y = a + b;
  y.realize();
  Tensor z = a + b;  // the same kernel again: the next number
  z.realize();
  std::vector<std::smatch> runs;
  for (const std::string& l : c.lines) {
    std::smatch m;
    if (std::regex_match(l, m, kKernelLine)) runs.push_back(m);
  }
  ASSERT_EQ(runs.size(), 2u) << c.all();
  const std::smatch& m = runs[0];
  EXPECT_EQ(m[1], "realize");
  EXPECT_EQ(m[3], "CPU");
  EXPECT_EQ(m[4].str().substr(0, 2), "E_") << m[4];
  EXPECT_EQ(m[5], "3");                                                  // two inputs, one output
  EXPECT_GE(bytes_of(std::stod(m[6]), m[7]), 3 * 256 * 256 * 4 * 0.99);  // at least these buffers
  const double ns = ns_of(std::stod(m[8]), m[9]);
  ASSERT_GT(ns, 0);
  EXPECT_GE(ns_of(std::stod(m[10]), m[11]), ns * 0.99);  // cumulative
  // 65536 adds, three buffers of 256 KB over the printed time, to the rates' two decimals (and the time's).
  const double flops = 65536, bytes = 3 * 256 * 256 * 4;
  EXPECT_NEAR(std::stod(m[12]), flops / ns, 0.0051 + 0.01 * flops / ns) << m[0];
  EXPECT_NEAR(std::stod(m[13]), bytes / ns, 0.0051 + 0.01 * bytes / ns) << m[0];
  EXPECT_EQ(m[14], "add");
  EXPECT_TRUE(std::regex_match(m[15].str(),
                               std::regex(R"(no opts|[A-Z]+ axis \d+ arg \d+(, [A-Z]+ axis \d+ arg \d+)*)")))
      << m[15];  // the actions it was built with
  EXPECT_EQ(std::stoull(runs[1][2]), std::stoull(m[2]) + 1) << "kernel numbers run on";
  EXPECT_NE(c.all().find("realize: 1 kernels, 0 copies"), std::string::npos) << c.all();
}

TEST(Debug, Level1IsOneLinePerRealize) {
  Tensor a = filled({8, 8}, 1);
  a.realize();
  Captured c(1);
  (a * 3).realize();
  ASSERT_EQ(c.lines.size(), 1u) << c.all();
  EXPECT_TRUE(std::regex_match(
      c.lines[0],
      std::regex(
          R"(realize: 1 kernels, 0 copies, \d+ compiler runs, device [\d.]+ (ns|us|ms|s), wall [\d.]+ (ns|us|ms|s))")))
      << c.lines[0];
}

TEST(Debug, JitReplayIsLabelled) {
  Jit f = jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * 2 + 1).relu()}; });
  Tensor x = filled({64, 64}, 1);
  f({x});
  f({x});  // captures
  ASSERT_TRUE(f.captured()) << f.why();
  Captured c(2);
  f({x});
  const std::string all = c.all();
  EXPECT_NE(all.find("jit replay: 1 kernels, 0 copies, device "), std::string::npos) << all;
  size_t replays = 0;
  for (const std::string& l : c.lines) {
    std::smatch m;
    if (!std::regex_match(l, m, kKernelLine)) continue;
    EXPECT_EQ(m[1], "replay") << l;
    EXPECT_EQ(m[5], "2") << l;
    EXPECT_NE(m[14].str().find("relu"), std::string::npos) << l;
    ++replays;
  }
  EXPECT_EQ(replays, 1u) << all;
  EXPECT_EQ(all.find("realize"), std::string::npos) << "a replay realizes nothing: " << all;
}

TEST(Debug, Level3PrintsTheAstAndOptsDuringRealize) {
  Captured c(3);
  filled({3, 37}, 1).softmax(-1).realize();  // a shape no other case uses: new kernels
  const std::string all = c.all();
  EXPECT_NE(all.find("UOp(Ops.SINK"), std::string::npos) << all;
  EXPECT_NE(all.find("UOp(Ops.STORE"), std::string::npos) << all;
  EXPECT_NE(all.find("(softmax): "), std::string::npos) << "kernel, its ops and opts: " << all;
}

TEST(Debug, ScheduleAloneSaysNothing) {
  Captured c(3);
  filled({5, 41}, 1).softmax(-1).schedule();
  EXPECT_TRUE(c.lines.empty()) << c.all();
}

TEST(Debug, DurationsInUnitsByMagnitude) {
  EXPECT_EQ(duration_str(850), "850 ns");
  EXPECT_EQ(duration_str(12300), "12.30 us");
  EXPECT_EQ(duration_str(4.56e6), "4.56 ms");
  EXPECT_EQ(duration_str(1.5e9), "1.50 s");
  EXPECT_EQ(bytes_str(512), "512 B");
  EXPECT_EQ(bytes_str(786432), "786.4 KB");
  EXPECT_EQ(bytes_str(1500000), "1.50 MB");
}

}  // namespace
}  // namespace sluice
