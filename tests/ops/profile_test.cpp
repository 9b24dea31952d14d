// SLUICE_PROFILE traces and SLUICE_DEBUG output (runtime/profile.h, runtime/debug.h). The environment
// variables are read once per process, so those tests run this binary again with them set.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "runtime/device.h"
#include "runtime/jit.h"
#include "runtime/profile.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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
      if (e["cat"] == "host") continue;
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

json read_json(const fs::path& path) {
  std::ifstream f(path);
  return json::parse(f);
}

// The events of a trace by kind: host spans, device events, flow starts and ends (by id).
struct Trace {
  std::vector<json> host, device;
  std::map<int64_t, json> flow_start, flow_end;
};
Trace split(const json& j) {
  Trace t;
  int host_pid = -1;
  for (const json& e : j.at("traceEvents"))
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "host") host_pid = e["pid"];
  for (const json& e : j.at("traceEvents")) {
    if (e["ph"] == "X") (e["pid"] == host_pid ? t.host : t.device).push_back(e);
    if (e["ph"] == "s" || e["ph"] == "f") {
      auto& flows = e["ph"] == "s" ? t.flow_start : t.flow_end;
      EXPECT_TRUE(flows.emplace(e["id"].get<int64_t>(), e).second) << "two flow events with one id: " << e;
    }
  }
  return t;
}
bool inside(const json& e, const json& span) {
  return e["pid"] == span["pid"] && e["tid"] == span["tid"] &&
         e["ts"].get<double>() >= span["ts"].get<double>() &&
         e["ts"].get<double>() <= span["ts"].get<double>() + span["dur"].get<double>();
}

// A realize and a JIT's replays on a device, traced: the host's phases as spans, an arrow from each submit
// to the work it ran, kernels with the tensor ops they compute and their launch, copies with their
// direction, and the replayed work marked. Each device that opens here (one process keeps every trace
// written: the checks look at this device's events).
class ProfileTrace : public testing::TestWithParam<std::string> {};

TEST_P(ProfileTrace, JoinsHostSpansToTheDeviceWorkTheySubmit) {
  const std::string dev = GetParam();
  try {
    open_device(dev);
  } catch (const std::exception& e) { GTEST_SKIP() << dev << " does not open here: " << e.what(); }
  start_profiling();
  Tensor a = Tensor::from(std::vector<float>{1, -2, 3, -4, 5, -6}, {2, 3}, dev);
  EXPECT_EQ((a * 3 - 1).relu().sum({0}).to_vector<float>(), (std::vector<float>{2, 14, 8}));
  Jit f = jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * 2 + 5).sqrt()}; });
  for (float v : {2.f, 10.f, 22.f, 38.f}) {
    const float want = std::sqrt(2 * v + 5);
    EXPECT_EQ(f({Tensor::from(std::vector<float>{v, v}, {2}, dev)}).at(0).to_vector<float>(),
              (std::vector<float>{want, want}));
  }
  ASSERT_TRUE(f.captured()) << f.why();
  const fs::path path = temp("sluice_trace_joined_" + dev) += ".json";
  write_profile(path.string());
  const Trace t = split(read_json(path));
  fs::remove(path);

  // Host spans: each phase of realize, and the replays.
  std::map<std::string, std::vector<json>> spans;
  for (const json& e : t.host) spans[e["name"]].push_back(e);
  for (const char* phase : {"schedule", "codegen", "compile", "submit", "jit replay"})
    EXPECT_TRUE(spans.count(phase)) << "no host span " << phase;
  for (const json& c : spans["compile"]) {
    EXPECT_TRUE(c["args"].contains("cache_hits")) << c;
    EXPECT_TRUE(c["args"].contains("compiler_runs")) << c;
  }
  for (const json& r : spans["jit replay"]) EXPECT_GE(r["args"]["kernels"].get<size_t>(), 1u) << r;

  // Flows: every arrow starts inside a submit span and ends on a kernel or copy it submitted.
  ASSERT_FALSE(t.flow_start.empty());
  EXPECT_EQ(t.flow_start.size(), t.flow_end.size());
  for (const auto& [id, s] : t.flow_start) {
    ASSERT_TRUE(t.flow_end.count(id)) << s;
    const json& end = t.flow_end.at(id);
    EXPECT_EQ(end["bp"], "e");
    EXPECT_TRUE(std::any_of(spans["submit"].begin(), spans["submit"].end(),
                            [&](const json& sp) { return inside(s, sp); }))
        << "flow " << id << " starts outside every submit span: " << s;
    EXPECT_TRUE(std::any_of(t.device.begin(), t.device.end(),
                            [&](const json& e) { return inside(end, e) && e["ts"] == end["ts"]; }))
        << "flow " << id << " ends on no device event: " << end;
  }

  // This device's kernels that a submit ran: tensor ops and launch sizes; replayed ones marked. Copies:
  // which way.
  size_t kernels = 0, replayed = 0;
  std::set<std::string> directions;
  for (const json& e : t.device) {
    const json& args = e["args"];
    if (args["device"] != dev) continue;
    if (e["cat"] == "copy") {
      EXPECT_TRUE(args.contains("direction")) << e;
      if (args["bytes"].get<uint64_t>() > 0) directions.insert(args["direction"].get<std::string>());
      continue;
    }
    const bool submitted = std::any_of(t.flow_end.begin(), t.flow_end.end(), [&](const auto& f) {
      return inside(f.second, e) && f.second["ts"] == e["ts"];
    });
    if (!submitted) continue;  // work of the other tests, submitted through hcq directly
    ++kernels;
    EXPECT_FALSE(args.value("ops", "").empty()) << e;
    ASSERT_TRUE(args.contains("global") && args.contains("local")) << e;
    EXPECT_EQ(args["global"].size(), 3u);
    EXPECT_EQ(args["local"].size(), 3u);
    EXPECT_GE(args["global"][0].get<int>() * args["local"][0].get<int>(), 1);
    replayed += args.value("replay", false);
  }
  EXPECT_GE(kernels, 4u);
  EXPECT_GE(replayed, 2 * f.kernel_count());  // calls 3 and 4
  EXPECT_LT(replayed, kernels);
  EXPECT_TRUE(directions.count("host->device")) << "no copy to the device";
  EXPECT_TRUE(directions.count("device->host")) << "no copy back";
}

// NULL runs no kernels (its values are whatever memory holds): every device that computes.
INSTANTIATE_TEST_SUITE_P(Devices, ProfileTrace, testing::Values("CPU", "VULKAN", "CL", "CUDA", "HIP"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(Debug, Level1PrintsKernelCountAndTime) {
  std::string out = run("SLUICE_DEBUG=1 " + self() + " --gtest_filter=Profile.Workload");
  EXPECT_NE(out.find("realize: 1 kernels"), std::string::npos) << out;
  // The unit follows the size: a loaded machine takes milliseconds.
  EXPECT_TRUE(std::regex_search(out, std::regex("device [0-9.]+ (us|ms)"))) << out;
}

TEST(Debug, Level2PrintsEachKernelWithItsTime) {
  std::string out = run("SLUICE_DEBUG=2 " + self() + " --gtest_filter=Profile.Workload");
  EXPECT_NE(out.find("realize #"), std::string::npos) << out;  // a kernel line (tests/unit/debug_test.cpp)
  EXPECT_NE(out.find("realize: "), std::string::npos) << out;
}

}  // namespace
}  // namespace sluice
