#include "runtime/profile.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "runtime/device.h"

namespace sluice {
namespace {

struct Store {
  std::mutex mu;
  std::vector<hcq::ProfileRecord> records;
};
Store& store() {
  static Store* s = new Store;  // leaked: written from an atexit handler
  return *s;
}
std::atomic<bool> g_started{false};

const char* env_path() {
  const char* p = std::getenv("SLUICE_PROFILE");
  return p && *p ? p : nullptr;
}

void write_at_exit() {
  try {
    write_profile(env_path());
  } catch (const std::exception& e) { std::fprintf(stderr, "SLUICE_PROFILE: %s\n", e.what()); }
}

bool env_enabled() {
  static const bool on = [] {
    if (!env_path()) return false;
    std::atexit(write_at_exit);
    return true;
  }();
  return on;
}

}  // namespace

bool profiling_enabled() { return env_enabled() || g_started.load(std::memory_order_relaxed); }
void start_profiling() { g_started.store(true); }

void record_profile(std::vector<hcq::ProfileRecord> records) {
  Store& s = store();
  std::lock_guard lk(s.mu);
  for (hcq::ProfileRecord& r : records) s.records.push_back(std::move(r));
}

void write_profile(const std::string& path) {
  std::vector<hcq::ProfileRecord> fresh;
  for (hcq::Device* d : open_devices()) {
    if (!d->profiling()) continue;
    d->synchronize();
    for (hcq::ProfileRecord& r : d->take_profile()) fresh.push_back(std::move(r));
  }
  record_profile(std::move(fresh));
  Store& s = store();
  std::lock_guard lk(s.mu);
  uint64_t t0 = UINT64_MAX;
  for (const hcq::ProfileRecord& r : s.records) t0 = std::min(t0, r.start_ns);
  // One process per device, one thread (track) per queue, both named by metadata events.
  std::map<std::string, int> pid;
  std::map<std::pair<std::string, std::string>, int> tid;
  nlohmann::json events = nlohmann::json::array();
  for (const hcq::ProfileRecord& r : s.records) {
    auto [p, new_p] = pid.try_emplace(r.device, int(pid.size()) + 1);
    if (new_p)
      events.push_back(
          {{"ph", "M"}, {"name", "process_name"}, {"pid", p->second}, {"args", {{"name", r.device}}}});
    auto [t, new_t] = tid.try_emplace({r.device, r.queue}, int(tid.size()) + 1);
    if (new_t)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", p->second},
                        {"tid", t->second},
                        {"args", {{"name", r.queue}}}});
    nlohmann::json args = {{"device", r.device}, {"queue", r.queue}};
    if (r.bytes) args["bytes"] = r.bytes;
    events.push_back({{"ph", "X"},
                      {"name", r.name},
                      {"cat", r.name == "copy" ? "copy" : "kernel"},
                      {"pid", p->second},
                      {"tid", t->second},
                      {"ts", double(r.start_ns - t0) / 1e3},
                      {"dur", double(r.end_ns - r.start_ns) / 1e3},
                      {"args", args}});
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    SLUICE_CHECK_IN(Error, "write_profile", f.good()) << "cannot write " << tmp;
    f << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump();
    SLUICE_CHECK_IN(Error, "write_profile", f.good()) << "cannot write " << tmp;
  }
  SLUICE_CHECK_IN(Error, "write_profile", std::rename(tmp.c_str(), path.c_str()) == 0)
      << "cannot rename " << tmp << " to " << path;
}

}  // namespace sluice
