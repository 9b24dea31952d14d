// The library's logger (base/log.h): levels, SLUICE_LOG, an application's sink, and the internal-assertion
// message that reaches stderr whatever the level. SLUICE_LOG is read once per process: the cases that set
// it run this executable again in a child.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace sluice {
namespace {

using Lines = std::vector<std::pair<LogLevel, std::string>>;

// Installs a sink collecting every message; restores stderr and the level afterwards.
struct Captured {
  Lines lines;
  LogLevel was = log_level();
  Captured() {
    set_log_sink([this](LogLevel l, std::string_view m) { lines.emplace_back(l, std::string(m)); });
  }
  ~Captured() {
    set_log_sink(nullptr);
    set_log_level(was);
  }
};

std::string run_self(const std::string& env, const std::string& filter) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd =
      env + " '" + self + "' --gtest_filter=" + filter + " --gtest_also_run_disabled_tests 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(Log, SinkReceivesWhatTheLevelLetsThrough) {
  Captured c;
  set_log_level(LogLevel::Warn);
  log_message(LogLevel::Warn, "disk cache is full");
  log_message(LogLevel::Info, "not shown at warn");
  log_printf(LogLevel::Error, "%d kernels failed", 2);
  EXPECT_EQ(c.lines, (Lines{{LogLevel::Warn, "disk cache is full"}, {LogLevel::Error, "2 kernels failed"}}));
  EXPECT_TRUE(log_enabled(LogLevel::Warn));
  EXPECT_FALSE(log_enabled(LogLevel::Info));
}

TEST(Log, OffSilences) {
  Captured c;
  set_log_level(LogLevel::Off);
  log_message(LogLevel::Error, "never seen");
  EXPECT_TRUE(c.lines.empty());
  EXPECT_FALSE(log_enabled(LogLevel::Error));
}

TEST(Log, ParsesLevelNames) {
  for (LogLevel l :
       {LogLevel::Trace, LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error, LogLevel::Off})
    EXPECT_EQ(parse_log_level(log_level_name(l)), l);
  try {
    parse_log_level("loud");
    ADD_FAILURE() << "'loud' parsed";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "[SLUICE_LOG] 'loud' is not a log level: trace, debug, info, warn, error or off");
  }
}

// Run only in a child (EnvironmentSetsTheLevel): one message at each level.
TEST(Log, DISABLED_SayAll) {
  log_message(LogLevel::Info, "an info line");
  log_message(LogLevel::Warn, "a warning line");
  log_message(LogLevel::Error, "an error line");
}

TEST(Log, EnvironmentSetsTheLevel) {
  const std::string filter = "Log.DISABLED_SayAll";
  std::string out = run_self("", filter);  // default: warn, warnings and errors say whose they are
  EXPECT_EQ(out.find("an info line"), std::string::npos) << out;
  EXPECT_NE(out.find("sluice warning: a warning line"), std::string::npos) << out;
  EXPECT_NE(out.find("sluice error: an error line"), std::string::npos) << out;

  out = run_self("SLUICE_LOG=error", filter);
  EXPECT_EQ(out.find("a warning line"), std::string::npos) << out;
  EXPECT_NE(out.find("an error line"), std::string::npos) << out;

  out = run_self("SLUICE_LOG=off", filter);
  EXPECT_EQ(out.find("line"), std::string::npos) << out;

  out = run_self("SLUICE_LOG=info", filter);
  EXPECT_NE(out.find("\nan info line\n"), std::string::npos) << "info prints bare: " << out;

  out = run_self("SLUICE_DEBUG=1", filter);  // SLUICE_DEBUG's reports are info: they must show
  EXPECT_NE(out.find("an info line"), std::string::npos) << out;

  out = run_self("SLUICE_LOG=loud", filter);  // a bad value says so and keeps warn
  EXPECT_NE(
      out.find("sluice warning: [SLUICE_LOG] 'loud' is not a log level: trace, debug, info, warn, error "
               "or off; using warn"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("a warning line"), std::string::npos) << out;
  EXPECT_EQ(out.find("an info line"), std::string::npos) << out;
}

TEST(LogDeathTest, InternalAssertionReachesStderrWhenLoggingIsOff) {
  EXPECT_DEATH(
      {
        set_log_level(LogLevel::Off);
        detail::assert_fail("x > 0", "f.cpp", 7);
      },
      "sluice error: internal assertion failed: x > 0 \\(f.cpp:7\\)");
}

TEST(LogDeathTest, InternalAssertionReachesTheApplicationsSink) {
  EXPECT_DEATH(
      {
        set_log_level(LogLevel::Off);
        set_log_sink([](LogLevel l, std::string_view m) {
          std::fprintf(stderr, "app got %s: %.*s\n", log_level_name(l), int(m.size()), m.data());
        });
        detail::assert_fail("x > 0", "f.cpp", 7);
      },
      "app got error: internal assertion failed: x > 0");
}

}  // namespace
}  // namespace sluice
