#include "runtime/profile.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>

#include "base/error.h"
#include "base/log.h"
#include "hcq/device.h"
#include "hcq/queue.h"
#include "runtime/device.h"

namespace sluice {
namespace {

using nlohmann::json;

struct Span {
  std::string name;
  uint64_t start_ns, end_ns;
  int thread;  // host track
  TraceArgs args;
};
// An exec or copy the host submitted, by its packet's word offset.
struct Command {
  std::string ops;
  bool exec;
  hcq::Dims global, local;
};
struct Submit {
  size_t span;  // its "submit" span
  bool replay;
  std::unordered_map<uint32_t, Command> commands;
};

struct Store {
  std::mutex mu;
  std::vector<hcq::ProfileRecord> records;
  std::vector<Span> spans;
  std::map<std::pair<std::string, uint64_t>, Submit> submits;  // by device and timeline value
  std::map<std::thread::id, int> threads;                      // host tracks, numbered from 1

  int thread_locked() {
    return threads.try_emplace(std::this_thread::get_id(), int(threads.size()) + 1).first->second;
  }
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
  } catch (const std::exception& e) { log_printf(LogLevel::Error, "SLUICE_PROFILE: %s", e.what()); }
}

bool env_enabled() {
  static const bool on = [] {
    if (!env_path()) return false;
    std::atexit(write_at_exit);
    return true;
  }();
  return on;
}
// At load, not on first use: a program that runs no kernel or copy still writes its (empty) trace, so
// `sluice profile` can tell "nothing ran" from "not a sluice program".
const bool g_env_enabled_at_load = env_enabled();

uint64_t ns(hcq::Clock::time_point t) {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

json to_json(const TraceArgs& args) {
  json j = json::object();
  for (const auto& [k, v] : args) std::visit([&, &k = k](const auto& x) { j[k] = x; }, v);
  return j;
}

const char* direction(hcq::Transfer t) {
  switch (t) {
    case hcq::Transfer::HostToDevice: return "host->device";
    case hcq::Transfer::DeviceToHost: return "device->host";
    case hcq::Transfer::DeviceToDevice: return "device->device";
    case hcq::Transfer::None: break;
  }
  return "";
}

// The trace events of everything stored. Called with s.mu held.
json trace_events(const Store& s) {
  uint64_t t0 = UINT64_MAX;
  for (const hcq::ProfileRecord& r : s.records) t0 = std::min(t0, r.start_ns);
  for (const Span& sp : s.spans) t0 = std::min(t0, sp.start_ns);
  auto us = [&](uint64_t t) { return double(t - t0) / 1e3; };
  json events = json::array();
  auto name_track = [&](const char* what, int pid, int tid, const std::string& name) {
    json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
    if (tid) e["tid"] = tid;
    events.push_back(std::move(e));
  };

  // The host: process 1, one track per thread, numbered as the threads were first seen.
  constexpr int kHost = 1;
  if (!s.spans.empty()) {
    name_track("process_name", kHost, 0, "host");
    events.push_back(
        {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kHost}, {"args", {{"sort_index", 0}}}});
    for (const auto& [id, tid] : s.threads)
      name_track("thread_name", kHost, tid, "thread " + std::to_string(tid));
  }
  for (const Span& sp : s.spans)
    events.push_back({{"ph", "X"},
                      {"name", sp.name},
                      {"cat", "host"},
                      {"pid", kHost},
                      {"tid", sp.thread},
                      {"ts", us(sp.start_ns)},
                      {"dur", double(sp.end_ns - sp.start_ns) / 1e3},
                      {"args", to_json(sp.args)}});

  // Devices: one process each, one track per queue; track ids follow the host's.
  std::map<std::string, int> pid;
  std::map<std::pair<std::string, std::string>, int> tid;
  int flows = 0;
  for (const hcq::ProfileRecord& r : s.records) {
    auto [p, new_p] = pid.try_emplace(r.device, kHost + 1 + int(pid.size()));
    if (new_p) name_track("process_name", p->second, 0, r.device);
    auto [t, new_t] = tid.try_emplace({r.device, r.queue}, int(s.threads.size() + tid.size()) + 1);
    if (new_t) name_track("thread_name", p->second, t->second, r.queue);
    const bool copy = r.transfer != hcq::Transfer::None;
    json args = {{"device", r.device}, {"queue", r.queue}};
    if (r.bytes || copy) args["bytes"] = r.bytes;
    if (copy) args["direction"] = direction(r.transfer);
    json e = {{"ph", "X"},
              {"name", copy ? "copy " + std::string(direction(r.transfer)) : r.name},
              {"cat", copy ? "copy" : "kernel"},
              {"pid", p->second},
              {"tid", t->second},
              {"ts", us(r.start_ns)},
              {"dur", double(r.end_ns - r.start_ns) / 1e3}};
    auto sub = r.submission ? s.submits.find({r.device, r.submission}) : s.submits.end();
    if (r.submission) args["submission"] = r.submission;
    if (sub != s.submits.end()) {
      if (sub->second.replay) args["replay"] = true;
      if (auto c = sub->second.commands.find(r.at); c != sub->second.commands.end()) {
        if (!c->second.ops.empty()) args["ops"] = c->second.ops;
        if (c->second.exec) {
          const hcq::Dims g = c->second.global, l = c->second.local;
          args["global"] = {g.x, g.y, g.z};
          args["local"] = {l.x, l.y, l.z};
        }
      }
      // The arrow from the submit to this command: starts where the submit began, ends on this event.
      const Span& from = s.spans[sub->second.span];
      const int id = ++flows;
      events.push_back({{"ph", "s"},
                        {"name", "submit"},
                        {"cat", "flow"},
                        {"id", id},
                        {"pid", kHost},
                        {"tid", from.thread},
                        {"ts", us(from.start_ns)}});
      events.push_back({{"ph", "f"},
                        {"bp", "e"},
                        {"name", "submit"},
                        {"cat", "flow"},
                        {"id", id},
                        {"pid", p->second},
                        {"tid", t->second},
                        {"ts", us(r.start_ns)}});
    }
    e["args"] = std::move(args);
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace

bool profiling_enabled() { return env_enabled() || g_started.load(std::memory_order_relaxed); }
void start_profiling() { g_started.store(true); }

void record_profile(std::vector<hcq::ProfileRecord> records) {
  Store& s = store();
  std::lock_guard lk(s.mu);
  for (hcq::ProfileRecord& r : records) s.records.push_back(std::move(r));
}

void trace_host_span(std::string name, hcq::Clock::time_point start, TraceArgs args) {
  const uint64_t end = hcq::now_ns();
  Store& s = store();
  std::lock_guard lk(s.mu);
  s.spans.push_back({std::move(name), ns(start), end, s.thread_locked(), std::move(args)});
}

void trace_submit(const hcq::Device& dev, const hcq::HwQueue& q, uint64_t submission,
                  hcq::Clock::time_point start, const std::vector<std::string>& ops, bool replay) {
  namespace pk = hcq::packet;
  const uint64_t end = hcq::now_ns();
  Submit sub{0, replay, {}};
  size_t n = 0;
  for (pk::Ref r : pk::each(q.packets())) {
    if (r.op != pk::Exec && r.op != pk::Copy) continue;
    Command c{n < ops.size() ? ops[n] : "", r.op == pk::Exec, {}, {}};
    if (c.exec) {
      const pk::ExecView e(r.p);
      c.global = e.global, c.local = e.local;
    }
    sub.commands.emplace(r.at, std::move(c));
    ++n;
  }
  TraceArgs args = {{"device", dev.name()}, {"submission", int64_t(submission)}, {"commands", int64_t(n)}};
  if (replay) args.push_back({"replay", true});
  Store& s = store();
  std::lock_guard lk(s.mu);
  sub.span = s.spans.size();
  s.spans.push_back({"submit", ns(start), end, s.thread_locked(), std::move(args)});
  s.submits[{dev.name(), submission}] = std::move(sub);
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
  const json events = trace_events(s);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    SLUICE_CHECK_IN(Error, "write_profile", f.good()) << "cannot write " << tmp;
    f << json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump();
    SLUICE_CHECK_IN(Error, "write_profile", f.good()) << "cannot write " << tmp;
  }
  SLUICE_CHECK_IN(Error, "write_profile", std::rename(tmp.c_str(), path.c_str()) == 0)
      << "cannot rename " << tmp << " to " << path;
}

}  // namespace sluice
