// `sluice latency --html` as a user sees it: the report rendered by headless Chromium (Debian's
// `chromium`). A script measures the laid-out text (layout_check.js: no two text boxes overlap, no chart
// text is cut off or sits inside a plot area, the page fits the window) at a desktop and a laptop width,
// and a screenshot must show the charts. Skipped, saying so, where chromium is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "models/ocr/image.h"
#include "tests/cli/sluice_process.h"

namespace {

using cli_test::parse;
using cli_test::Proc;
using cli_test::shell;
using cli_test::sluice;
using nlohmann::json;
namespace fs = std::filesystem;

std::string find_chromium() {
  if (const char* env = std::getenv("SLUICE_CHROMIUM"); env && *env) return env;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (shell(std::string("command -v ") + name).code == 0) return name;
  return "";
}

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Text of an element as --dump-dom serializes it, back to what the script wrote.
std::string unescape(std::string s) {
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", "\xC2\xA0"}, {"&amp;", "&"}})
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1))
      s.replace(at, std::string(from).size(), to);
  return s;
}

class LatencyReport : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty())
      GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh cli installs it): the HTML "
                      "report is not rendered";
    dir_ = fs::temp_directory_path() / ("sluice_report_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (dir_.empty()) return;
    if (HasFailure())
      std::printf("the report and its screenshot are kept in %s\n", dir_.c_str());
    else
      fs::remove_all(dir_);
  }
  // Runs chromium headless on a file; a profile of its own so tests may run side by side.
  Proc browse(const fs::path& page, const std::string& args) {
    return shell("timeout 120 " + chromium_ + " --headless --no-sandbox --disable-gpu --hide-scrollbars " +
                 "--no-first-run --user-data-dir=" + (dir_ / "profile").string() + " " + args + " file://" +
                 page.string());
  }
  std::string chromium_;
  fs::path dir_;
};

TEST_F(LatencyReport, ReadsCleanlyInABrowser) {
  // CPU: real distributions with tails; NULL: samples of 0 ns, which a log axis cannot show.
  const fs::path html = dir_ / "report.html";
  Proc r = sluice("latency --device CPU,NULL --quick --iters 50 --json --html " + html.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const json run = parse(r);
  const std::string page = read(html);
  const size_t body_end = page.rfind("</body>");
  ASSERT_NE(body_end, std::string::npos);
  const fs::path checked = dir_ / "checked.html";
  std::ofstream(checked) << page.substr(0, body_end) << "<script>\n"
                         << read(fs::path(SLUICE_SOURCE_DIR) / "tests/cli/layout_check.js") << "</script>\n"
                         << page.substr(body_end);

  for (int width : {1600, 1000}) {
    Proc dom = browse(checked, "--window-size=" + std::to_string(width) + ",1200 --dump-dom");
    ASSERT_EQ(dom.code, 0) << dom.err;
    const std::string open = "<pre id=\"layout-check\">";
    const size_t a = dom.out.rfind(open), b = dom.out.find("</pre>", a);  // the last: the page's own
    ASSERT_NE(a, std::string::npos) << "the layout check did not run:\n" << dom.err;
    const json check = json::parse(unescape(dom.out.substr(a + open.size(), b - a - open.size())));
    SCOPED_TRACE("window " + std::to_string(width) + " px wide");
    EXPECT_GT(check.at("texts").get<int>(), 300);
    std::string problems;
    for (const json& p : check.at("problems")) problems += "\n  " + p.get<std::string>();
    EXPECT_TRUE(check.at("problems").empty())
        << check.at("problems").size() << " layout problems:" << problems;
    // The content uses the window (up to a comfortable line length on very wide screens).
    EXPECT_GE(check.at("used_width").get<double>(), 0.85 * width) << check.dump();

    // The header names the device, its driver, the host, the date and the sluice version.
    const std::string header = check.at("header");
    const json& c = run.at("context");
    for (const std::string& want : {c.at("host").get<std::string>(), c.at("date").get<std::string>(),
                                    c.at("sluice_version").get<std::string>(), std::string("CPU"),
                                    std::string("driver"), std::string("NULL")})
      EXPECT_NE(header.find(want), std::string::npos) << want << " is not in the header: " << header;
    // Latency charts have titled axes on a log scale with time units; the bandwidth chart labels every
    // copy size and has its unit.
    const json& charts = check.at("charts");
    for (const char* chart : {"overview", "submit_signal", "graph_replay", "bandwidth"})
      ASSERT_TRUE(charts.contains(chart)) << chart << ": " << charts.dump();
    auto has = [&](const char* chart, const std::string& text) {
      for (const json& t : charts.at(chart))
        if (t.get<std::string>().find(text) != std::string::npos) return true;
      return false;
    };
    for (const char* chart : {"overview", "submit_signal", "graph_replay"}) {
      EXPECT_TRUE(has(chart, "latency (log scale)")) << chart << ": " << charts.at(chart).dump();
      EXPECT_TRUE(has(chart, "\xC2\xB5s") || has(chart, " ns")) << chart << ": " << charts.at(chart).dump();
      EXPECT_TRUE(has(chart, "median")) << chart;
      EXPECT_TRUE(has(chart, "p99")) << chart;
    }
    EXPECT_TRUE(has("submit_signal", "samples"));
    for (const char* size : {"4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB"}) {
      bool labelled = false;
      for (const json& t : charts.at("bandwidth")) labelled = labelled || t == size;
      EXPECT_TRUE(labelled) << size << " is not labelled: " << charts.at("bandwidth").dump();
    }
    EXPECT_TRUE(has("bandwidth", "GB/s")) << charts.at("bandwidth").dump();
    EXPECT_TRUE(has("bandwidth", "copy size")) << charts.at("bandwidth").dump();
    EXPECT_TRUE(has("bandwidth", "host to device")) << charts.at("bandwidth").dump();
  }

  // The screenshot: produced, of the window's size, with ink on it and the histograms' blue bars.
  const fs::path png = dir_ / "report.png";
  Proc shot = browse(html, "--window-size=1600,2400 --screenshot=" + png.string());
  ASSERT_EQ(shot.code, 0) << shot.err;
  ASSERT_TRUE(fs::exists(png)) << shot.err;
  const sluice::ocr::Image im = sluice::ocr::read_image(png.string());
  EXPECT_EQ(im.width, 1600);
  EXPECT_EQ(im.height, 2400);
  size_t ink = 0, bars = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const int b = im.at(x, y, 0), g = im.at(x, y, 1), r = im.at(x, y, 2);
      ink += b + g + r < 3 * 235;
      bars += std::abs(r - 0x4c) < 8 && std::abs(g - 0x78) < 8 && std::abs(b - 0xa8) < 8;
    }
  const double pixels = double(im.width) * im.height;
  EXPECT_GT(ink / pixels, 0.03) << "the screenshot is nearly blank";
  EXPECT_GT(bars, 2000u) << "no histogram bars in the screenshot";
}

}  // namespace
