// `sluice profile -- <command and args>`: runs the command with $SLUICE_PROFILE set to the trace file,
// then checks that a Perfetto-loadable trace was written (Chrome trace-event JSON; a sluice program writes
// one even when it ran no kernel or copy, a program that does not use sluice writes none) and summarizes it:
// slices per device queue, the host's spans per phase (schedule, codegen, compile, submit, jit replay) and
// the submit -> execution arrows. A command that is one of sluice's own subcommands (`sluice profile --
// latency --quick`) runs this executable.
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "tools/sluice/cli.h"

namespace sluice::cli {
namespace {

struct Options {
  std::string output = "trace.json";
  std::vector<std::string> command;
  bool json = false, stdout_to_stderr = false;
};

int run_child(std::vector<std::string> cmd, const std::string& trace, bool stdout_to_stderr) {
  static const std::set<std::string> own = {"devices", "conformance", "latency", "run",
                                            "compile", "vad",         "ocr"};
  if (own.count(cmd[0])) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) throw std::runtime_error("cannot find this executable to run '" + cmd[0] + "'");
    cmd.insert(cmd.begin(), std::string(self, size_t(n)));
  }
  std::vector<char*> argv;
  for (std::string& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setenv("SLUICE_PROFILE", trace.c_str(), 1);
    if (stdout_to_stderr) dup2(STDERR_FILENO, STDOUT_FILENO);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "sluice profile: error: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run(Options o) {
  if (o.command.empty()) throw UsageError("no command given (sluice profile -- <command> [args])");
  const std::string trace = std::filesystem::absolute(o.output).string();
  const std::filesystem::path folder = std::filesystem::path(trace).parent_path();
  if (!std::filesystem::is_directory(folder) || ::access(folder.c_str(), W_OK) != 0)
    throw UsageError("cannot write the trace to " + trace + ": the folder " + folder.string() +
                     (std::filesystem::is_directory(folder) ? " is not writable" : " does not exist"));
  std::error_code ec;
  std::filesystem::remove(trace, ec);
  // Under --json our stdout is the summary alone, so the command's output goes to stderr.
  const int code = run_child(o.command, trace, o.stdout_to_stderr || o.json);
  std::string problem;
  nlohmann::json summary = {{"trace", trace}, {"command_exit_code", code}};
  std::map<std::string, size_t> slices_per_track, host_spans;
  size_t flows = 0;
  std::ifstream in(trace);
  if (!in) {
    problem = "the command wrote no trace to " + trace;
  } else {
    try {
      nlohmann::json t = nlohmann::json::parse(in);
      const nlohmann::json& ev = t.is_array() ? t : t.at("traceEvents");
      std::map<std::pair<int64_t, int64_t>, std::string> names;
      for (const auto& e : ev)
        if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
          names[{e.value("pid", int64_t(0)), e.value("tid", int64_t(0))}] = e["args"].value("name", "");
      for (const auto& e : ev) {
        flows += e.value("ph", "") == "s";
        if (e.value("ph", "") == "X" && e.value("cat", "") == "host") {
          host_spans[e.value("name", "")]++;
        } else if (e.value("ph", "") == "X") {
          auto key = std::make_pair(e.value("pid", int64_t(0)), e.value("tid", int64_t(0)));
          std::string track =
              names.count(key) ? names[key] : std::to_string(key.first) + "/" + std::to_string(key.second);
          slices_per_track[std::to_string(key.first) + ":" + track]++;
        }
      }

    } catch (const std::exception& e) {
      problem = std::string("the trace is not trace-event JSON: ") + e.what();
    }
  }
  size_t slices = 0;
  for (auto& [k, n] : slices_per_track) slices += n;
  summary["tracks"] = slices_per_track;
  summary["slices"] = slices;
  summary["host_spans"] = host_spans;
  summary["flows"] = flows;
  if (!problem.empty()) summary["error"] = problem;
  if (o.json) {
    std::cout << summary.dump(2) << "\n";
  } else {
    std::printf("trace %s: %zu slices on %zu tracks\n", trace.c_str(), slices, slices_per_track.size());
    for (auto& [track, n] : slices_per_track) std::printf("  %-40s %6zu slices\n", track.c_str(), n);
    for (auto& [name, n] : host_spans) std::printf("  host %-35s %6zu spans\n", name.c_str(), n);
    if (flows) std::printf("  %zu arrows from a submit to the work it ran\n", flows);
    if (problem.empty() && slices == 0) std::printf("  the command ran no kernels or copies\n");
  }
  if (code != 0) {
    std::fprintf(stderr, "sluice profile: error: the command exited with %d\n", code);
    return code;
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "sluice profile: error: %s\n", problem.c_str());
    return kExitFailed;
  }
  return 0;
}

}  // namespace

void add_profile_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("profile", "Run a workload with profiling on, check the trace");
  cmd->add_option("-o,--output", o.output, "Trace file (JSON; opens in ui.perfetto.dev)")
      ->default_val("trace.json");
  cmd->add_flag("--json", o.json, "JSON summary on stdout (the command's: stderr)");
  cmd->add_flag("--stdout-to-stderr", o.stdout_to_stderr, "Send the command's stdout to stderr");
  cmd->add_option("command", o.command, "After --: a program, or a sluice subcommand")->required();
  cmd->footer(
      "Examples:\n"
      "  sluice profile -o trace.json -- latency --quick --device CPU\n"
      "  sluice profile -- run model.onnx --device VULKAN --bench 10\n"
      "  sluice profile -- ./my_app --its-args\n"
      "The command runs with $SLUICE_PROFILE set to the trace file; the runtime\n"
      "writes Chrome trace-event JSON at exit (open it in ui.perfetto.dev): one\n"
      "track per device queue, one slice per kernel (args: tensor ops, launch\n"
      "sizes) or copy (args: direction, bytes); a host track per thread with the\n"
      "runtime's schedule, codegen, compile, submit and jit replay spans; an\n"
      "arrow from each submit to the work it ran (JIT replays: args.replay).\n"
      "The summary counts the slices per track, the host spans and arrows\n"
      "(a sluice program that ran no kernels or copies gives an empty trace).\n"
      "The command's stdout stays on stdout, except under --json or\n"
      "--stdout-to-stderr.\n" +
      exit_codes_help("the command wrote no usable trace; a command that fails passes its own exit code on"));
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
