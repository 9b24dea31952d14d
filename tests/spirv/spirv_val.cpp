#include "tests/spirv/spirv_val.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace sluice::testing_spirv {

bool have_spirv_val() {
  static const bool have = std::system("command -v spirv-val >/dev/null 2>&1") == 0;
  return have;
}

namespace {

// The command's exit status and its output (stdout and stderr).
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed: " + cmd};
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  return {pclose(p), out};
}

}  // namespace

std::vector<std::string> validate(const std::vector<std::pair<std::string, std::string>>& modules,
                                  const std::vector<std::string>& envs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("sluice_spirv_" + std::to_string(getpid()) + "_" + std::to_string(std::rand()));
  fs::create_directories(dir);
  std::vector<fs::path> files;
  for (size_t i = 0; i < modules.size(); ++i) {
    files.push_back(dir / (std::to_string(i) + ".spv"));
    std::ofstream(files.back(), std::ios::binary) << modules[i].second;
  }
  std::vector<std::string> failures;
  std::mutex mu;
  std::atomic<size_t> next{0};
  const size_t jobs = modules.size() * envs.size();
  auto worker = [&] {
    for (size_t j; (j = next++) < jobs;) {
      const size_t m = j / envs.size();
      const std::string& env = envs[j % envs.size()];
      auto [rc, out] = run("spirv-val --target-env " + env + " " + files[m].string());
      if (rc != 0) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(modules[m].first + " " + env + ": " + out);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < 3; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();
  fs::remove_all(dir);
  return failures;
}

}  // namespace sluice::testing_spirv
