// `sluice latency` run as a process: its JSON (statistics, raw samples, the run's context), the text
// output, --metric and --sizes, the progress line, and the HTML report's structure (its rendering:
// latency_report_test.cpp). Small runs on the NULL and CPU devices, so each takes well under a second.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "tests/cli/sluice_process.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using cli_test::parse;
using cli_test::Proc;
using cli_test::shell;
using cli_test::sluice;

// --help explains each metric it can measure.
TEST(Cli, LatencyHelpExplainsEachMetric) {
  Proc help = sluice("latency --help");
  ASSERT_EQ(help.code, 0);
  for (const char* m : {"empty_submit", "submit_signal", "host_signal_wake", "kernel_eager", "graph_replay",
                        "compute_to_copy", "copy_to_compute", "cross_device", "h2d", "d2h", "d2d"})
    EXPECT_NE(help.out.find("\n  " + std::string(m) + " "), std::string::npos) << m << "\n" << help.out;
}

// A bad --metric or --sizes is a usage error (exit code 2) that says what is wrong.
TEST(Cli, LatencyBadMetricOrSizeExits2) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"latency --metric nope",
            "sluice latency: error: --metric: no metric is called 'nope' (metrics: "},
           {"latency --metric ,", "sluice latency: error: --metric names no metric"},
           {"latency --sizes 12Q", "sluice latency: error: --sizes: '12Q' is not a size"},
           {"latency --sizes 8G", "sluice latency: error: --sizes: 8G must be between 1 byte and 4 GiB"},
           {"latency --metric h2d --sizes 0", "sluice latency: error: --sizes: 0 must be between 1 byte"},
           {"latency --metric empty_submit --sizes 4K",
            "sluice latency: error: --sizes: --metric selects no"},
       }) {
    Proc r = sluice(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << c.args << ":\n" << r.err;
  }
}

// Latency JSON: every metric measured (or skipped with a reason), ordered statistics, the raw samples,
// bandwidth points; the HTML report parses as XML and holds a histogram per metric with a sample above
// 0 ns, the overview of all of them and the bandwidth chart.
TEST(Cli, LatencyJsonAndHtmlReport) {
  const fs::path html = fs::temp_directory_path() / ("sluice_cli_test_" + std::to_string(getpid()) + ".html");
  Proc r = sluice("latency --device NULL --quick --iters 30 --json --html " + html.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no progress bar when stderr is not a terminal
  json j = parse(r);
  ASSERT_EQ(j.at("devices").size(), 1u);
  const json& d = j["devices"][0];
  EXPECT_EQ(d.at("device"), "NULL");
  std::set<std::string> metrics, plotted = {"overview", "bandwidth"};
  for (const json& m : d.at("latency")) {
    metrics.insert(m.at("name").get<std::string>());
    EXPECT_FALSE(m.at("description").get<std::string>().empty()) << m;
    if (m.contains("skipped")) continue;
    EXPECT_EQ(m.at("samples"), 30);
    EXPECT_LE(m.at("min_ns").get<double>(), m.at("median_ns").get<double>()) << m;
    EXPECT_LE(m.at("median_ns").get<double>(), m.at("p99_ns").get<double>()) << m;
    EXPECT_LE(m.at("p99_ns").get<double>(), m.at("max_ns").get<double>()) << m;
    const std::vector<double> ns = m.at("samples_ns");
    ASSERT_EQ(ns.size(), 30u) << m;
    EXPECT_EQ(*std::min_element(ns.begin(), ns.end()), m.at("min_ns").get<double>()) << m;
    EXPECT_EQ(*std::max_element(ns.begin(), ns.end()), m.at("max_ns").get<double>()) << m;
    if (m.at("max_ns").get<double>() > 0) plotted.insert(m.at("name").get<std::string>());
  }
  for (const char* m : {"empty_submit", "submit_signal", "host_signal_wake", "kernel_eager", "graph_replay",
                        "compute_to_copy", "copy_to_compute", "cross_device"})
    EXPECT_TRUE(metrics.count(m)) << m;
  std::set<uint64_t> sizes;
  for (const json& b : d.at("bandwidth")) {
    sizes.insert(b.at("bytes").get<uint64_t>());
    EXPECT_GT(b.at("median_gbps").get<double>(), 0) << b;
    EXPECT_EQ(b.at("samples_gbps").size(), b.at("samples").get<size_t>()) << b;
  }
  EXPECT_EQ(*sizes.begin(), 4096u);
  EXPECT_EQ(*sizes.rbegin(), 16u << 20);  // --quick stops at 16 MiB
  EXPECT_EQ(d["bandwidth"].size(), 3 * sizes.size());

  ASSERT_TRUE(fs::exists(html));
  std::ifstream f(html);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string page = ss.str();
  EXPECT_EQ(page.find("src="), std::string::npos) << "external resource";
  EXPECT_EQ(page.find("<link"), std::string::npos) << "external resource";
  EXPECT_EQ(page.find("<script"), std::string::npos);
  if (std::system("python3 -c 'import xml.etree.ElementTree' >/dev/null 2>&1") != 0) {
    fs::remove(html);
    GTEST_SKIP() << "python3 is not available to parse the HTML report as XML";
  }
  // Well-formed XML; the charts by their data-metric, one a line.
  Proc xml = shell(
      "python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
      "print('\\n'.join(s.get('data-metric') for s in r.iter('{http://www.w3.org/2000/svg}svg')))\" " +
      html.string());
  EXPECT_EQ(xml.code, 0) << "the report does not parse as XML: " << xml.err;
  std::set<std::string> charts;
  std::istringstream names(xml.out);
  for (std::string n; std::getline(names, n);) charts.insert(n);
  EXPECT_EQ(charts, plotted);
  fs::remove(html);
}

// The run's context in the JSON: where, when, with which sluice and options, and the device's driver.
TEST(Cli, LatencyJsonCarriesTheRunContext) {
  Proc r = sluice("latency --device CPU --quick --iters 5 --metric submit_signal --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  const json& c = j.at("context");
  EXPECT_FALSE(c.at("sluice_version").get<std::string>().empty()) << c;
  EXPECT_FALSE(c.at("host").get<std::string>().empty()) << c;
  EXPECT_FALSE(c.at("os").get<std::string>().empty()) << c;
  EXPECT_TRUE(c.at("cpu").is_string()) << c;
  EXPECT_EQ(c.at("date").get<std::string>().size(), std::string("2025-01-01 00:00:00 UTC").size()) << c;
  EXPECT_EQ(c.at("command"), "sluice latency --device CPU --quick --iters 5 --metric submit_signal");
  const json& o = c.at("options");
  EXPECT_EQ(o.at("iters"), 5);
  EXPECT_EQ(o.at("warmup"), 3);
  EXPECT_EQ(o.at("quick"), true);
  EXPECT_EQ(o.at("metrics"), json::array({"submit_signal"}));
  const json& d = j.at("devices").at(0);
  EXPECT_EQ(d.at("vendor"), "host");
  EXPECT_FALSE(d.at("device_name").get<std::string>().empty());
  EXPECT_TRUE(d.at("driver_version").is_string());
  EXPECT_EQ(d.at("software"), false);
}

// --metric measures only the metrics it names, --sizes only the copy sizes it names.
TEST(Cli, LatencyMetricAndSizesSelect) {
  Proc r =
      sluice("latency --device NULL --iters 5 --metric graph_replay,d2h --sizes 1K,64KiB,3M,1024 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json d = parse(r).at("devices").at(0);
  ASSERT_EQ(d.at("latency").size(), 1u) << d;
  EXPECT_EQ(d["latency"][0].at("name"), "graph_replay");
  std::vector<uint64_t> sizes;
  for (const json& b : d.at("bandwidth")) {
    EXPECT_EQ(b.at("direction"), "d2h") << b;
    sizes.push_back(b.at("bytes"));
  }
  EXPECT_EQ(sizes, (std::vector<uint64_t>{1024, 64 << 10, 3 << 20}));  // sorted, each once
  Proc none = sluice("latency --device NULL --iters 5 --metric empty_submit --json");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_TRUE(parse(none).at("devices").at(0).at("bandwidth").empty());
}

// The text output: a table per device, then one line per metric shown saying what it times.
TEST(Cli, LatencyHumanOutputOnCpu) {
  Proc r = sluice("latency --device CPU --quick --iters 20");
  EXPECT_EQ(r.out.rfind("CPU: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\n  vendor host\n  20 samples per latency after 3 warm-up\n"), std::string::npos)
      << r.out;
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* m : {"empty_submit", "submit_signal", "graph_replay", "bandwidth GB/s", "16 MiB"})
    EXPECT_NE(r.out.find(m), std::string::npos) << m << "\n" << r.out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  const size_t legend = r.out.find("What each row is");
  ASSERT_NE(legend, std::string::npos) << r.out;
  for (const char* m : {"empty_submit", "submit_signal", "host_signal_wake", "kernel_eager", "graph_replay",
                        "compute_to_copy", "copy_to_compute", "cross_device", "h2d", "d2h", "d2d"}) {
    const size_t at = r.out.find("\n  " + std::string(m) + " ", legend);
    ASSERT_NE(at, std::string::npos) << m << "\n" << r.out;
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    EXPECT_GT(line.size(), 40u) << "no explanation: " << line;
  }
  Proc one = sluice("latency --device CPU --iters 5 --metric kernel_eager");
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out.find("submit_signal"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("bandwidth"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("  kernel_eager      a 1-thread kernel"), std::string::npos) << one.out;
}

// The progress line goes to stderr only when it is a terminal (script(1) gives the run one), and never
// under --json.
TEST(Cli, LatencyProgressOnlyOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) is not installed";
  const std::string run = std::string(SLUICE_CLI_PATH) + " latency --device NULL --iters 5 --sizes 4K,8K";
  Proc tty = shell("script -qec '" + run + "' /dev/null </dev/null");
  if (tty.code != 0 && tty.out.empty()) GTEST_SKIP() << "script(1) cannot open a terminal here: " << tty.err;
  ASSERT_EQ(tty.code, 0) << tty.out << tty.err;
  EXPECT_NE(tty.out.find("14/14"), std::string::npos) << tty.out;  // 8 latencies, 2 sizes x 3 directions
  Proc json_tty = shell("script -qec '" + run + " --json' /dev/null </dev/null");
  ASSERT_EQ(json_tty.code, 0) << json_tty.out << json_tty.err;
  EXPECT_EQ(json_tty.out.find("/14"), std::string::npos) << json_tty.out;
  Proc pipe = sluice("latency --device NULL --iters 5 --sizes 4K,8K");
  EXPECT_EQ(pipe.err, "");
}

}  // namespace
