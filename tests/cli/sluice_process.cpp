#include "tests/cli/sluice_process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cli_test {

namespace fs = std::filesystem;

Proc shell(const std::string& command) {
  const fs::path err_file =
      fs::temp_directory_path() / ("sluice_cli_test_" + std::to_string(getpid()) + ".err");
  const std::string cmd = command + " 2>" + err_file.string();
  Proc r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  fs::remove(err_file);
  return r;
}

Proc sluice(const std::string& args, const std::string& env) {
  return shell((env.empty() ? "" : "env " + env + " ") + std::string(SLUICE_CLI_PATH) + " " + args);
}

nlohmann::json parse(const Proc& r) {
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "):\n" << r.out << "\nstderr:\n" << r.err;
    return nlohmann::json::object();
  }
}

}  // namespace cli_test
