#include "hcq/tool.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "hcq/error.h"

extern char** environ;

namespace sluice::hcq {

namespace fs = std::filesystem;

namespace {

// Waits until process `pid` exits (leaving it to be reaped) or `timeout` passes; false on the timeout.
// A pidfd wakes the moment it exits; where the kernel has none, short naps.
bool exits_within(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const int fd = int(::syscall(SYS_pidfd_open, pid, 0));
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (fd >= 0) {
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, int(std::clamp<int64_t>(left.count(), 0, 1 << 30)));
      if (r < 0 && errno == EINTR) continue;
      ::close(fd);
      return r != 0;
    }
    siginfo_t info{};
    if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
      return true;
    if (left.count() <= 0) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

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

std::chrono::milliseconds tool_timeout() {
  static const std::chrono::milliseconds limit = [] {
    const char* e = std::getenv("SLUICE_COMPILE_TIMEOUT");
    if (!e || !*e) return std::chrono::milliseconds(600'000);
    char* end = nullptr;
    const double sec = std::strtod(e, &end);
    SLUICE_CHECK_IN(ValueError, "SLUICE_COMPILE_TIMEOUT", *end == 0 && sec > 0 && sec < 1e9)
        << "'" << e << "' is not a number of seconds";
    return std::chrono::milliseconds(int64_t(sec * 1000));
  }();
  return limit;
}

int run_tool(const std::vector<std::string>& args, std::string* output, std::chrono::milliseconds timeout) {
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
  // Its own process group, so a timeout ends whatever the tool started too.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) SLUICE_FAIL(CompileError, "compile") << "cannot run " << args[0] << ": " << std::strerror(rc);
  if (!exits_within(pid, timeout)) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
    SLUICE_FAIL(CompileError, "compile")
        << args[0] << " did not finish within " << timeout.count() / 1000.0
        << " s and was stopped (SLUICE_COMPILE_TIMEOUT sets the limit in seconds)";
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (output) *output = read_file(log);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
}

std::string tool_identity(const fs::path& exe) {
  std::ostringstream id;
  id << "clang=" << exe.string();
  std::error_code ec;
  const fs::path real = fs::canonical(exe, ec);
  struct stat st {};
  if (!ec && ::stat(real.c_str(), &st) == 0)
    id << " real=" << real.string() << " size=" << st.st_size << " mtime=" << st.st_mtim.tv_sec << "."
       << st.st_mtim.tv_nsec;
  return id.str();
}

std::string tool_version(const fs::path& exe) {
  if (exe.empty()) return "none found";
  std::string out;
  try {
    if (int status = run_tool({exe.string(), "--version"}, &out); status != 0)
      return exe.string() + " (--version exited with " + std::to_string(status) + ")";
  } catch (const std::exception& e) { return exe.string() + " (cannot run it: " + e.what() + ")"; }
  return out.substr(0, out.find('\n')) + " (" + exe.string() + ")";
}

}  // namespace sluice::hcq
