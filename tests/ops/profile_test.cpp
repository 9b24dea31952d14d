// SLUICE_PROFILE traces and SLUICE_DEBUG output (runtime/profile.h, runtime/debug.h). The environment
// variables are read once per process, so those tests run this binary again with them set.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "runtime/profile.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::string self() { return fs::read_symlink("/proc/self/exe").string(); }
fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / (name + std::to_string(getpid()));
}

// stdout and stderr of a shell command.
std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

// The kernels and copies the other tests trace.
void workload() {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, "CPU");
  Tensor y = (a * 2 + 1).sum({1});
  (void)y.to_vector<float>();
  (void)(a.exp().contiguous().max()).item<float>();
}
TEST(Profile, Workload) { workload(); }

// Checks a trace: process and thread names, one complete event per command on a named track.
void check_trace(const fs::path& path, size_t min_kernels) {
  std::ifstream f(path);
  ASSERT_TRUE(f.good()) << path;
  nlohmann::json j = nlohmann::json::parse(f);  // throws on a malformed file
  ASSERT_TRUE(j.contains("traceEvents"));
  std::set<std::pair<int, int>> tracks, named;
  std::set<std::string> thread_names;
  size_t kernels = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      named.insert({e["pid"].get<int>(), e["tid"].get<int>()});
      thread_names.insert(e["args"]["name"].get<std::string>());
    }
    if (e["ph"] == "X") {
      tracks.insert({e["pid"].get<int>(), e["tid"].get<int>()});
      EXPECT_GE(e["dur"].get<double>(), 0);
      EXPECT_GE(e["ts"].get<double>(), 0);
      EXPECT_EQ(e["args"]["device"], "CPU");
      kernels += e["cat"] == "kernel";
    }
  }
  EXPECT_GE(kernels, min_kernels);
  EXPECT_TRUE(thread_names.count("compute:0")) << j.dump();
  for (const auto& t : tracks)
    EXPECT_TRUE(named.count(t)) << "track " << t.first << "/" << t.second << " has no name";
}

TEST(Profile, EnvironmentVariableWritesTraceAtExit) {
  fs::path path = temp("sluice_trace_env") += ".json";
  fs::remove(path);
  std::string out =
      run("SLUICE_PROFILE=" + path.string() + " " + self() + " --gtest_filter=Profile.Workload");
  ASSERT_TRUE(fs::exists(path)) << out;
  check_trace(path, 2);
  fs::remove(path);
}

TEST(Profile, WriteProfileOnDemand) {
  start_profiling();
  workload();
  fs::path path = temp("sluice_trace_now") += ".json";
  write_profile(path.string());
  check_trace(path, 2);
  fs::remove(path);
}

TEST(Debug, Level1PrintsKernelCountAndTime) {
  std::string out = run("SLUICE_DEBUG=1 " + self() + " --gtest_filter=Profile.Workload");
  EXPECT_NE(out.find("realize: 1 kernels"), std::string::npos) << out;
  EXPECT_NE(out.find(" us"), std::string::npos) << out;
}

TEST(Debug, Level2PrintsEachKernelWithItsTime) {
  std::string out = run("SLUICE_DEBUG=2 " + self() + " --gtest_filter=Profile.Workload");
  EXPECT_NE(out.find("compute:0"), std::string::npos) << out;
  EXPECT_NE(out.find("realize: "), std::string::npos) << out;
}

}  // namespace
}  // namespace sluice
