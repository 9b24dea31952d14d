#include "hcq/tool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>

#include "hcq/error.h"

extern char** environ;

namespace sluice::hcq {

namespace fs = std::filesystem;

namespace {

// Directories of `prefix` left by processes that died without removing them (a compile killed by SIGKILL):
// the name carries the owner's pid, and one whose owner no longer exists is removed. Once per prefix and
// process, so a long-running process does not scan the temporary directory on every compile.
void remove_stale(const std::string& prefix) {
  static std::mutex mu;
  static std::set<std::string> done;
  {
    std::lock_guard lock(mu);
    if (!done.insert(prefix).second) return;
  }
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix + "-", 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size() + 1, nullptr, 10);
    if (pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  remove_stale(prefix);
  std::string tmpl =
      (fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    SLUICE_FAIL(CompileError, "compile")
        << "cannot create a directory under " << fs::temp_directory_path() << ": " << std::strerror(errno);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int run_tool(const std::vector<std::string>& args, std::string* output) {
  SLUICE_CHECK_IN(CompileError, "compile", !args.empty()) << "no tool to run";
  TempDir dir("sluice-tool");
  const fs::path log = dir.path() / "output.txt";
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) SLUICE_FAIL(CompileError, "compile") << "cannot run " << args[0] << ": " << std::strerror(rc);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (output) *output = read_file(log);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
}

std::string tool_version(const fs::path& exe) {
  if (exe.empty()) return "none found";
  std::string out;
  try {
    if (int status = run_tool({exe.string(), "--version"}, &out); status != 0)
      return exe.string() + " (--version exited with " + std::to_string(status) + ")";
  } catch (const std::exception& e) {
    return exe.string() + " (cannot run it: " + e.what() + ")";
  }
  return out.substr(0, out.find('\n')) + " (" + exe.string() + ")";
}

}  // namespace sluice::hcq
