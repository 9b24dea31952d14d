#pragma once
// Shared pieces of the `sluice` command line (tools/sluice/): the subcommands' entry points, device
// enumeration and selection, terminal output (80 columns, a progress bar on a terminal) and statistics.
//
// Exit codes, every subcommand: 0 success; 1 a check or case failed, or a device failed during the run;
// 2 bad input (unknown device, a filter that matches nothing, a bad option value, and every error CLI11
// finds while parsing). Errors go to stderr as one line `sluice <cmd>: error: ...`.
// Threading: the command line runs on the main thread; checks may start their own threads.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hcq/device.h"

namespace sluice::cli {

inline constexpr int kExitFailed = 1, kExitUsage = 2;

// Bad input from the user: reported as `error: <message>`, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// main's error handling. A parse error (CLI11's) prints the help it asks for and exits 0, or prints
// `sluice <cmd>: error: ...` and exits 2; any other error prints the same line and exits `code`.
int exit_on_parse_error(CLI::App& app, const CLI::ParseError& e);
int exit_on_error(const CLI::App& app, const std::exception& e, int code);
// The help's closing lines on exit codes, the same words in every subcommand.
std::string exit_codes_help(const std::string& failed);  // failed: what exit code 1 means here

// Option checks whose message reads as a sentence: "--iters must be >= 1, got 0".
CLI::Validator at_least(double lo);
CLI::Validator between(double lo, double hi);

// --beam N: BEAM search of width N for every new kernel of the command (sets SLUICE_BEAM for the
// process once parsed; runtime/beam.h). The chosen actions are cached on disk, so a later run with the same
// SLUICE_BEAM, or a model compiled with --beam, pays nothing for them.
void add_beam_option(CLI::App* cmd);

// Each subcommand adds itself to the app; its callback sets `exit_code`.
void add_devices_command(CLI::App& app, int& exit_code);
void add_conformance_command(CLI::App& app, int& exit_code);
void add_latency_command(CLI::App& app, int& exit_code);
void add_profile_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_compile_command(CLI::App& app, int& exit_code);
void add_vad_command(CLI::App& app, int& exit_code);
void add_ocr_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);

// One device the registry can name: "CPU", "VULKAN:1". present: it opened (dev is the registry's).
struct DeviceSlot {
  std::string name;
  bool present = false;
  std::string reason;  // why not, when !present
  hcq::Device* dev = nullptr;
};
// Every kind compiled in, and for kinds with hardware every ordinal that opens (see devices.cpp).
std::vector<DeviceSlot> enumerate_devices();
// The devices a --device option names: "" or "all" = every present device; else a comma-separated list
// of names, each opened. Throws UsageError for an unknown or absent device (listing the present ones).
std::vector<std::string> select_devices(const std::string& spec);
// The default device's name (runtime/device_name.h default_device), as UsageError if none opens.
std::string default_device_name();
// A file of the data scripts/fetch-models.sh fetches: under $SLUICE_DATA, else data/ in the current
// directory ("ocr-models/assets" -> "data/ocr-models/assets").
std::string data_path(const std::string& relative);

bool stdout_is_terminal();
// A one-line progress bar on stderr, drawn only when stdout is a terminal and --json is off.
class Progress {
 public:
  Progress(std::string label, size_t total, bool enabled);
  ~Progress();
  void step(size_t n = 1);

 private:
  void draw();
  std::string label_;
  size_t total_, done_ = 0;
  bool enabled_;
  int last_permille_ = -1;
};

std::string format_bytes(uint64_t bytes);  // "4 KiB", "256 MiB", "7.8 GiB"
// Text broken into lines of at most `width` characters, at spaces (a longer word is cut).
std::vector<std::string> wrap(const std::string& text, size_t width);

struct Stats {
  double min = 0, median = 0, p99 = 0, max = 0;
  size_t n = 0;
};
Stats stats_of(std::vector<double> samples);  // empty samples: all zero

// Shell-quotes s when it holds anything but [A-Za-z0-9_./:=-], for the reproduce lines.
std::string shell_quote(const std::string& s);

}  // namespace sluice::cli
