#include "tools/sluice/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "runtime/device.h"
#include "runtime/device_name.h"

namespace sluice::cli {
namespace {

// Kinds whose every ordinal opens a fresh device over the same host (backends/cpu, backends/null):
// probing ordinals would never stop, so only ordinal 0 is listed.
constexpr const char* kHostKinds[] = {"CPU", "NULL"};
// Probing stops at the first ordinal that fails to open, or here.
constexpr int kMaxOrdinals = 8;

bool is_host_kind(const std::string& kind) {
  return std::any_of(std::begin(kHostKinds), std::end(kHostKinds), [&](const char* k) { return kind == k; });
}

bool same_hardware(const hcq::Device& a, const hcq::Device& b) {
  const hcq::Properties p = a.properties(), q = b.properties();
  return p.device_name == q.device_name && p.vendor == q.vendor && p.driver_version == q.driver_version &&
         p.memory_bytes == q.memory_bytes;
}

std::string present_list() {
  std::string out;
  for (const DeviceSlot& s : enumerate_devices())
    if (s.present) out += (out.empty() ? "" : ", ") + s.name;
  return out.empty() ? "none" : out;
}

// "sluice latency": the subcommand CLI11 had reached when it stopped, for the error's prefix.
std::string command_of(const CLI::App& app) {
  std::string name = "sluice";
  for (const CLI::App* a = &app; !a->get_subcommands().empty();) {
    a = a->get_subcommands().front();
    name += " " + a->get_name();
  }
  return name;
}

std::string number_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.15g", v);
  return b;
}

// The option's value as a number, or the message saying it is not one.
std::string parse_number(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0' ? "" : "must be a number, got '" + s + "'";
}

}  // namespace

int exit_on_parse_error(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --help-all
  std::string msg = e.what();
  if (app.get_subcommands().empty() && !app.remaining().empty()) {  // CLI11 says "A subcommand is required"
    std::string names;
    const CLI::App& all = app;
    for (const CLI::App* sub : all.get_subcommands(std::function<bool(const CLI::App*)>()))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    msg = "'" + app.remaining().front() + "' is not a subcommand (subcommands: " + names + ")";
  }
  // CLI11 writes a failed check as "--iters: must be ..."; ours read as one sentence after the name.
  if (const size_t at = msg.find(": must be "); at != std::string::npos) msg.erase(at, 1);
  if (msg.size() > 1 && std::isupper(static_cast<unsigned char>(msg[0])) &&
      !std::isupper(static_cast<unsigned char>(msg[1])))
    msg[0] = char(std::tolower(static_cast<unsigned char>(msg[0])));
  const std::string cmd = command_of(app);
  std::fprintf(stderr, "%s: error: %s (see %s --help)\n", cmd.c_str(), msg.c_str(), cmd.c_str());
  return kExitUsage;
}

int exit_on_error(const CLI::App& app, const std::exception& e, int code) {
  std::fprintf(stderr, "%s: error: %s\n", command_of(app).c_str(), e.what());
  return code;
}

std::string exit_codes_help(const std::string& failed) {
  std::string out;
  for (const std::string& line : wrap("Exit codes: 0 ok, 1 " + failed + ", 2 bad arguments.", 78))
    out += (out.empty() ? "" : "\n") + line;
  return out;
}

CLI::Validator at_least(double lo) {
  return CLI::Validator(
      [lo](std::string& s) {
        double v = 0;
        std::string bad = parse_number(s, v);
        return !bad.empty() ? bad : v >= lo ? std::string() : "must be >= " + number_text(lo) + ", got " + s;
      },
      ">= " + number_text(lo));
}

CLI::Validator between(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) {
        double v = 0;
        std::string bad = parse_number(s, v);
        if (!bad.empty()) return bad;
        return v >= lo && v <= hi
                   ? std::string()
                   : "must be between " + number_text(lo) + " and " + number_text(hi) + ", got " + s;
      },
      "in " + number_text(lo) + ".." + number_text(hi));
}

void add_beam_option(CLI::App* cmd) {
  cmd->add_option_function<int>(
         "--beam", [](const int& n) { setenv("SLUICE_BEAM", std::to_string(n).c_str(), 1); },
         "Tune new kernels: BEAM search, width N")
      ->check(between(1, 64));
}

std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!line.empty() && line.size() + 1 + w.size() > width) lines.push_back(std::move(line)), line.clear();
    while (w.size() > width) lines.push_back(w.substr(0, width)), w.erase(0, width);  // no space to break at
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::vector<DeviceSlot> enumerate_devices() {
  std::vector<DeviceSlot> out;
  for (const DeviceInfo& info : list_devices()) {
    if (!info.available) {
      out.push_back({info.name, false, info.reason, nullptr});
      continue;
    }
    const size_t first = out.size();
    for (int ordinal = 0; ordinal < (is_host_kind(info.name) ? 1 : kMaxOrdinals); ++ordinal) {
      std::string name = ordinal == 0 ? info.name : info.name + ":" + std::to_string(ordinal);
      try {
        hcq::Device& dev = open_device(name);
        // Some backends wrap ordinals onto their hardware (VULKAN: ordinal % physical devices), so a
        // device identical to ordinal 0 ends the probe. Known limit: identical twin GPUs show as one.
        if (ordinal > 0 && same_hardware(dev, *out[first].dev)) break;
        out.push_back({name, true, "", &dev});
      } catch (const std::exception& e) {
        if (ordinal == 0) out.push_back({name, false, e.what(), nullptr});
        break;  // no more devices of this kind
      }
    }
  }
  return out;
}

std::vector<std::string> select_devices(const std::string& spec) {
  std::vector<std::string> names;
  if (spec.empty() || spec == "all") {
    for (const DeviceSlot& s : enumerate_devices())
      if (s.present) names.push_back(s.name);
    if (names.empty()) throw UsageError("no device opens on this machine");
    return names;
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string one = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (one.empty()) continue;
    std::string canon;
    try {
      canon = canonical_device(one);
    } catch (const std::exception&) {
      throw UsageError("unknown device \"" + one + "\": present devices are " + present_list());
    }
    try {
      open_device(canon);
    } catch (const std::exception& e) { throw UsageError("device " + canon + " does not open: " + e.what()); }
    if (std::find(names.begin(), names.end(), canon) == names.end()) names.push_back(canon);
  }
  if (names.empty()) throw UsageError("--device names no device");
  return names;
}

std::string default_device_name() {
  try {
    std::string name = default_device();
    open_device(name);
    return name;
  } catch (const std::exception& e) {
    throw UsageError(std::string("the default device does not open: ") + e.what());
  }
}

bool stdout_is_terminal() { return isatty(STDOUT_FILENO) == 1; }

Progress::Progress(std::string label, size_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && total > 0) {
  draw();
}
Progress::~Progress() {
  if (enabled_) std::fprintf(stderr, "\r%-79s\r", "");
}
void Progress::step(size_t n) {
  done_ += n;
  draw();
}
void Progress::draw() {
  if (!enabled_) return;
  int permille = int(1000 * std::min(done_, total_) / total_);
  if (permille == last_permille_) return;
  last_permille_ = permille;
  constexpr int kWidth = 40;
  int filled = permille * kWidth / 1000;
  std::string bar(size_t(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%-18.18s [%s] %5zu/%-5zu", label_.c_str(), bar.c_str(), done_, total_);
  std::fflush(stderr);
}

std::string format_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

Stats stats_of(std::vector<double> s) {
  Stats st;
  st.n = s.size();
  if (s.empty()) return st;
  std::sort(s.begin(), s.end());
  auto at = [&](double q) { return s[std::min(s.size() - 1, size_t(q * double(s.size() - 1) + 0.5))]; };
  st.min = s.front(), st.median = at(0.5), st.p99 = at(0.99), st.max = s.back();
  return st;
}

std::string shell_quote(const std::string& s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./:=-").find(c) != std::string::npos;
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string data_path(const std::string& relative) {
  const char* data = std::getenv("SLUICE_DATA");
  return std::string(data && *data ? data : "data") + "/" + relative;
}

}  // namespace sluice::cli
