#include "base/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#if SLUICE_HAVE_SPDLOG
#include <spdlog/logger.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include "base/log_spdlog.h"
#endif

#include "base/debug.h"
#include "base/error.h"

namespace sluice {
namespace {

// The level SLUICE_LOG and SLUICE_DEBUG ask for; `bad_env` gets the warning when SLUICE_LOG names none.
LogLevel initial_level(std::string& bad_env) {
  LogLevel level = LogLevel::Warn;
  if (const char* e = std::getenv("SLUICE_LOG"); e && *e) {
    try {
      level = parse_log_level(e);
    } catch (const Error& err) { bad_env = std::string(err.what()) + "; using warn"; }
  }
  if (debug_level() >= 1 && level > LogLevel::Info) level = LogLevel::Info;
  return level;
}

std::string_view trimmed(std::string_view m) {
  while (!m.empty() && m.back() == '\n') m.remove_suffix(1);
  return m;
}

#if SLUICE_HAVE_SPDLOG
namespace lvl = spdlog::level;

// spdlog's list is ours with `critical` between error and off; we log nothing at critical.
lvl::level_enum to_spdlog(LogLevel l) { return l == LogLevel::Off ? lvl::off : lvl::level_enum(int(l)); }
LogLevel from_spdlog(lvl::level_enum l) {
  return l == lvl::off ? LogLevel::Off : l >= lvl::err ? LogLevel::Error : LogLevel(int(l));
}

// The default pattern's "%*": warnings and errors say whose they are; reports and traces print bare.
class Prefix final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& m, const std::tm&, spdlog::memory_buf_t& dest) override {
    if (m.level < lvl::warn) return;
    const std::string_view p = m.level == lvl::warn ? "sluice warning: " : "sluice error: ";
    dest.append(p.data(), p.data() + p.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<Prefix>(); }
};

std::unique_ptr<spdlog::formatter> default_formatter() {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<Prefix>('*').set_pattern("%*%v");
  return f;
}

// The logger's one sink: the application's callback when it set one, else stderr.
class Dispatch final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  Dispatch() : base_sink(default_formatter()) {}
  void set(LogSink s) {
    std::lock_guard lock(mutex_);
    app_ = std::move(s);
  }
  bool has_app() {
    std::lock_guard lock(mutex_);
    return bool(app_);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& m) override {
    if (app_) {
      try {
        app_(from_spdlog(m.level), std::string_view(m.payload.data(), m.payload.size()));
      } catch (...) {  // an application's sink must not take the library down
      }
      return;
    }
    spdlog::memory_buf_t buf;
    formatter_->format(m, buf);
    std::fwrite(buf.data(), 1, buf.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  LogSink app_;
};

struct State {
  std::shared_ptr<Dispatch> sink = std::make_shared<Dispatch>();
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>("sluice", sink);
  std::string bad_env;  // SLUICE_LOG's value when it names no level
};

State& state() {
  // Leaked: messages may come from atexit handlers (SLUICE_PROFILE's writer) after statics are gone.
  static State* s = [] {
    auto* st = new State;
    st->logger->set_level(to_spdlog(initial_level(st->bad_env)));
    st->logger->flush_on(lvl::warn);
    return st;
  }();
  // Said once the logger exists, through it.
  static std::once_flag warned;
  std::call_once(warned, [] {
    if (!s->bad_env.empty()) s->logger->log(lvl::warn, spdlog::string_view_t(s->bad_env));
  });
  return *s;
}

spdlog::logger& logger() { return *state().logger; }

}  // namespace

std::shared_ptr<spdlog::logger> spdlog_logger() { return state().logger; }

LogLevel log_level() { return from_spdlog(logger().level()); }
void set_log_level(LogLevel level) { logger().set_level(to_spdlog(level)); }
void set_log_sink(LogSink sink) { state().sink->set(std::move(sink)); }
bool log_enabled(LogLevel level) { return logger().should_log(to_spdlog(level)); }
void log_message(LogLevel level, std::string_view message) {
  logger().log(to_spdlog(level), spdlog::string_view_t(trimmed(message)));
}

namespace detail {
void log_fatal(std::string_view message) {
  State& s = state();
  if (s.sink->has_app()) {
    spdlog::details::log_msg m(s.logger->name(), lvl::err, spdlog::string_view_t(message));
    s.sink->log(m);  // past the level: the application learns why its process ends
  }
  std::fprintf(stderr, "sluice error: %.*s\n", int(message.size()), message.data());
  std::fflush(stderr);
}
}  // namespace detail

#else
// Without spdlog (a machine that builds without it, as scripts/gpu-check.sh may): the same levels, sink
// and stderr lines, from an atomic level and a mutex. tests/unit's log_fallback_tests run log_test.cpp
// against it.
struct State {
  std::atomic<LogLevel> level{LogLevel::Warn};
  std::mutex mu;
  LogSink app;
  std::string bad_env;
};

void emit(State& s, LogLevel level, std::string_view m) {
  std::lock_guard lock(s.mu);
  if (s.app) {
    try {
      s.app(level, m);
    } catch (...) {  // an application's sink must not take the library down
    }
    return;
  }
  const char* prefix = level == LogLevel::Warn    ? "sluice warning: "
                       : level >= LogLevel::Error ? "sluice error: "
                                                  : "";
  std::fprintf(stderr, "%s%.*s\n", prefix, int(m.size()), m.data());
  if (level >= LogLevel::Warn) std::fflush(stderr);
}

State& state() {
  static State* s = [] {  // leaked, as above
    auto* st = new State;
    st->level = initial_level(st->bad_env);
    return st;
  }();
  static std::once_flag warned;
  std::call_once(warned, [] {
    if (!s->bad_env.empty()) emit(*s, LogLevel::Warn, s->bad_env);
  });
  return *s;
}

}  // namespace

LogLevel log_level() { return state().level; }
void set_log_level(LogLevel level) { state().level = level; }
void set_log_sink(LogSink sink) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.app = std::move(sink);
}
bool log_enabled(LogLevel level) { return level != LogLevel::Off && level >= state().level.load(); }
void log_message(LogLevel level, std::string_view message) {
  if (log_enabled(level)) emit(state(), level, trimmed(message));
}

namespace detail {
void log_fatal(std::string_view message) {
  State& s = state();
  bool app = false;
  {
    std::lock_guard lock(s.mu);
    app = bool(s.app);
  }
  if (app) emit(s, LogLevel::Error, message);  // past the level: the application learns why its process ends
  std::fprintf(stderr, "sluice error: %.*s\n", int(message.size()), message.data());
  std::fflush(stderr);
}
}  // namespace detail
#endif

LogLevel parse_log_level(std::string_view name) {
  for (LogLevel l :
       {LogLevel::Trace, LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error, LogLevel::Off})
    if (name == log_level_name(l)) return l;
  SLUICE_FAIL(ValueError, "SLUICE_LOG")
      << "'" << name << "' is not a log level: trace, debug, info, warn, error or off";
}

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Trace: return "trace";
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
    case LogLevel::Off: return "off";
  }
  return "?";
}

void log_printf(LogLevel level, const char* format, ...) {
  if (!log_enabled(level)) return;
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string s(size_t(std::max(n, 0)), '\0');
  std::vsnprintf(s.data(), s.size() + 1, format, again);
  va_end(again);
  log_message(level, s);
}

}  // namespace sluice
