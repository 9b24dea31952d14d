#pragma once
// The library's logger (DESIGN.md §5, Logging). Every diagnostic sluice writes (warnings, SLUICE_DEBUG's
// reports, base/debug.h) goes through it, so an application embedding sluice can capture or silence it.
// It is an spdlog logger named "sluice" (base/log_spdlog.h hands it out); this header needs no spdlog.
//
// Level: from SLUICE_LOG (trace, debug, info, warn, error, off), read on first use; default warn. A bad
// value warns, naming it and the levels, and keeps warn. SLUICE_DEBUG >= 1 lowers the level to info, so
// its reports show. set_log_level overrides both.
// Sink: by default each message is one line on stderr (warnings and errors start "sluice warning: ",
// "sluice error: "); set_log_sink sends every message the level lets through to the application instead.
//
// Threading: every call may come from any thread. The sink is called from the thread that logs, one
// message at a time; it must not log through sluice, and what it throws is dropped.
#include <functional>
#include <string_view>

namespace sluice {

enum class LogLevel { Trace, Debug, Info, Warn, Error, Off };

LogLevel log_level();
void set_log_level(LogLevel level);
// A level by its SLUICE_LOG name; ValueError "[SLUICE_LOG] 'loud' is not a log level ..." otherwise.
LogLevel parse_log_level(std::string_view name);
const char* log_level_name(LogLevel level);  // "warn"

// Receives each message (no trailing newline; SLUICE_DEBUG=4's source spans lines) with its level.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;
void set_log_sink(LogSink sink);  // an empty sink: back to stderr

bool log_enabled(LogLevel level);
void log_message(LogLevel level, std::string_view message);  // nothing when the level is not enabled
void log_printf(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

namespace detail {
// For a failed internal assertion: to the application's sink whatever the level, and always to stderr,
// since the process is about to abort.
void log_fatal(std::string_view message);
}  // namespace detail

}  // namespace sluice
