// The ONNX backend test suite (frontend/onnx/backend_suite.h) on one device, one shard of its cases at a
// time; tests/onnx/CMakeLists.txt registers a CTest test per device and shard.
//   onnx_backend_tests --device CPU [--filter 'onnx/node/test_conv*'] [--shard K/N] [--verbose]
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "frontend/onnx/backend_suite.h"
#include "runtime/device.h"

namespace {

std::string g_device = "CPU", g_filter = "*";
int g_shard = 0, g_shards = 1;
bool g_verbose = false;

using namespace sluice::onnx::suite;

TEST(OnnxBackend, CasesMatchTheSuitesOutputs) {
  const std::string root = data_dir();
  if (root.empty()) GTEST_SKIP() << "the ONNX backend test data is not installed (libonnx-testdata)";
  try {
    sluice::open_device(g_device);
  } catch (const std::exception& e) { GTEST_SKIP() << g_device << " is absent: " << e.what(); }
  std::vector<Case> cases = list_cases(root, g_filter);
  ASSERT_FALSE(cases.empty()) << "no case matches " << g_filter << " under " << root;
  std::map<Status, int> count;
  double total_ms = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (int(i % size_t(g_shards)) != g_shard) continue;
    const Case& c = cases[i];
    Result r = run_case(c, g_device);
    ++count[r.status];
    total_ms += r.ms;
    if (g_verbose || r.status == Status::Fail || r.status == Status::XPass)
      std::printf("%-16s %-60s %8.1f ms  %s\n", case_status_name(r.status), c.id().c_str(), r.ms,
                  r.detail.c_str());
    if (r.status == Status::Fail || r.status == Status::XPass)
      ADD_FAILURE() << c.id() << " on " << g_device << ": " << case_status_name(r.status) << ": " << r.detail
                    << "\n  reproduce: " << reproduce(c, g_device);
  }
  std::printf("%s shard %d/%d: %d passed, %d failed, %d expected failures, %d unexpected passes, %d skipped "
              "(%.1f s)\n",
              g_device.c_str(), g_shard, g_shards, count[Status::Pass], count[Status::Fail], count[Status::XFail],
              count[Status::XPass], count[Status::Skip], total_ms / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--device") g_device = next();
    else if (a == "--filter") g_filter = next();
    else if (a == "--verbose") g_verbose = true;
    else if (a == "--shard") {
      std::string s = next();
      if (std::sscanf(s.c_str(), "%d/%d", &g_shard, &g_shards) != 2 || g_shards < 1 || g_shard < 0 ||
          g_shard >= g_shards) {
        std::fprintf(stderr, "onnx_backend_tests: --shard takes K/N with 0 <= K < N, got '%s'\n", s.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "onnx_backend_tests: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  return RUN_ALL_TESTS();
}
