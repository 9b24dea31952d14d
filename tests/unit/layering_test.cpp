// The include rules of DESIGN.md §1, checked by reading every source file of the tree:
//   base/ (errors) includes nothing of ours, and every layer may include it;
//   core/ includes only core/; renderers/ only core/; hcq/ nothing from the other layers;
//   backends/ hcq/, renderers/, core/; runtime/ everything below it; frontend/ (model importers) runtime/
//   and below; models/ (the benchmark models) and conformance/ (the conformance library) frontend/ and
//   below, and only tools/ and tests/ include them; nothing includes tools/ or tests/.
// Project includes are quoted and relative to the repository root ("core/ir/uop.h"); <sluice/...> names
// the installed layout of the same files, and a quoted path that is not root-relative is resolved
// against the including file's folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Top-level folders holding code, in layer order. include/ holds the umbrella header (above runtime/).
const std::vector<std::string> kLayers = {"base",     "core",        "renderers", "hcq",
                                          "backends", "runtime",     "frontend",  "include",
                                          "models",   "conformance", "tools",     "tests"};

bool is_layer(const std::string& s) { return std::find(kLayers.begin(), kLayers.end(), s) != kLayers.end(); }

// May a file in layer `from` include a file in layer `to`?
bool may_include(const std::string& from, const std::string& to) {
  if (from == to) return true;
  if (to == "tools" || to == "tests") return false;
  if (to == "models" || to == "conformance") return from == "tools" || from == "tests";
  if (from == "models" || from == "conformance") return to != "include";  // frontend/ and below
  if (from == "base") return false;
  if (to == "base") return true;
  if (from == "core" || from == "hcq") return false;
  if (from == "renderers") return to == "core";
  if (from == "backends") return to == "core" || to == "renderers" || to == "hcq";
  if (from == "runtime") return to != "include" && to != "frontend";  // everything below it
  if (from == "frontend") return to != "include";                     // runtime/ and below
  return true;                                                        // include/, tools/, tests/
}

std::string rule(const std::string& from) {
  if (from == "base") return "base/ includes nothing from the layers";
  if (from == "core") return "core/ includes only core/";
  if (from == "renderers") return "renderers/ includes only core/";
  if (from == "hcq") return "hcq/ includes nothing from the other layers";
  if (from == "backends") return "backends/ includes only hcq/, renderers/, core/";
  if (from == "runtime") return "runtime/ includes only the layers below it";
  if (from == "frontend") return "frontend/ includes only runtime/ and the layers below it";
  if (from == "models") return "models/ includes only frontend/ and the layers below it";
  if (from == "conformance") return "conformance/ includes only frontend/ and the layers below it";
  return "nothing includes tools/ or tests/";
}

std::string first_component(const fs::path& p) { return p.empty() ? "" : p.begin()->string(); }

struct Violation {
  std::string file;    // the including file, relative to the source root
  int line = 0;        // 1-based line number (0 for synthetic input)
  std::string target;  // the included file, resolved relative to the source root
  std::string layer;   // the layer of the target ("outside" when it leaves the tree)
  std::string message;
};

// Resolves an include line of `file` (a root-relative path) to a root-relative project path;
// nullopt for lines that are not includes and for system / third-party headers.
std::optional<fs::path> include_target(const std::string& file, const std::string& line) {
  static const std::regex re(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::smatch m;
  if (!std::regex_search(line, m, re)) return std::nullopt;
  const bool quoted = m[1] == "\"";
  fs::path p = fs::path(m[2].str()).lexically_normal();
  if (first_component(p) == "sluice") {  // installed layout: <sluice/core/...> or the umbrella <sluice/x.h>
    p = p.lexically_relative("sluice");
    return is_layer(first_component(p)) ? p : fs::path("include/sluice") / p;
  }
  if (is_layer(first_component(p))) return p;
  if (!quoted) return std::nullopt;                              // <vector>, <gtest/gtest.h>, ...
  return (fs::path(file).parent_path() / p).lexically_normal();  // relative to the including file
}

// The one checking function: the violation on this line of `file`, if any.
std::optional<Violation> check_line(const std::string& file, const std::string& line, int line_no = 0) {
  std::optional<fs::path> target = include_target(file, line);
  if (!target) return std::nullopt;
  const std::string from = first_component(file);
  std::string to = first_component(*target);
  if (!is_layer(to)) to = "outside";
  if (to != "outside" && may_include(from, to)) return std::nullopt;
  std::ostringstream msg;
  msg << file << ":" << line_no << ": includes " << target->string() << " ("
      << (to == "outside" ? "a path outside the source layers"
                          : rule(to == "tools" || to == "tests" ? to : from))
      << ")";
  return Violation{file, line_no, target->string(), to, msg.str()};
}

fs::path source_root() { return fs::path(SLUICE_SOURCE_DIR); }

// Every C/C++ source or header under a layer's folder, root-relative.
std::vector<std::string> source_files(const std::string& layer) {
  std::vector<std::string> files;
  const fs::path dir = source_root() / layer;
  if (!fs::is_directory(dir)) return files;  // a layer that does not exist yet
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    static const std::vector<std::string> exts = {".h", ".hpp", ".inc", ".c", ".cc", ".cpp", ".cu", ".mm"};
    if (e.is_regular_file() && std::find(exts.begin(), exts.end(), e.path().extension()) != exts.end())
      files.push_back(e.path().lexically_relative(source_root()).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Violation> scan(const std::string& layer) {
  std::vector<Violation> out;
  for (const std::string& file : source_files(layer)) {
    std::ifstream in(source_root() / file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (line.find("include") != std::string::npos)
        if (auto v = check_line(file, line, n)) out.push_back(*v);
  }
  return out;
}

std::string report(const std::vector<Violation>& vs) {
  std::string s;
  for (const Violation& v : vs) s += "  " + v.message + "\n";
  return s;
}

void expect_layer_clean(const std::string& layer) {
  std::vector<Violation> vs = scan(layer);
  EXPECT_TRUE(vs.empty()) << "include rule violations in " << layer << "/:\n" << report(vs);
}

}  // namespace

TEST(Layering, ScansTheSourceTree) {
  // Guards against a wrong SLUICE_SOURCE_DIR making every other test pass vacuously.
  std::vector<std::string> core = source_files("core");
  EXPECT_NE(std::find(core.begin(), core.end(), "core/ir/uop.h"), core.end())
      << "source root " << source_root();
}

TEST(Layering, CheckerFindsViolations) {
  // The same checking function the scans use, fed lines that break each rule ...
  EXPECT_TRUE(check_line("core/ir/uop.h", "#include \"runtime/tensor.h\""));
  EXPECT_TRUE(check_line("core/ir/uop.h", "#include <sluice/sluice.h>"));
  EXPECT_TRUE(check_line("core/ir/uop.h", "#include <sluice/hcq/signal.h>"));
  EXPECT_TRUE(check_line("core/ir/uop.cpp", "  #  include \"../../backends/cpu/device.h\""));
  EXPECT_TRUE(check_line("renderers/cstyle.cpp", "#include \"hcq/signal.h\""));
  EXPECT_TRUE(check_line("hcq/queue.h", "#include \"core/ir/uop.h\""));
  EXPECT_TRUE(check_line("backends/cpu/device.cpp", "#include \"runtime/tensor.h\""));
  EXPECT_TRUE(check_line("runtime/tensor.cpp", "#include \"tools/bench/common.h\""));
  EXPECT_TRUE(check_line("tools/ir_demo.cpp", "#include \"tests/unit/helpers.h\""));
  EXPECT_TRUE(check_line("core/ir/uop.cpp", "#include \"../../../elsewhere.h\""));
  EXPECT_TRUE(check_line("base/error.h", "#include \"core/ir/dtype.h\""));
  EXPECT_TRUE(check_line("runtime/tensor.cpp", "#include \"models/models.h\""));
  EXPECT_TRUE(check_line("models/models.h", "#include \"tools/bench/common.h\""));
  EXPECT_TRUE(check_line("runtime/tensor.cpp", "#include \"frontend/onnx/model.h\""));
  EXPECT_TRUE(check_line("frontend/onnx/model.cpp", "#include \"models/models.h\""));
  EXPECT_TRUE(check_line("runtime/realize.cpp", "#include \"conformance/check.h\""));
  EXPECT_TRUE(check_line("conformance/check.cpp", "#include \"models/models.h\""));
  // ... and lines that keep them.
  EXPECT_FALSE(check_line("core/ir/uop.cpp", "#include \"core/ir/uop.h\""));
  EXPECT_FALSE(check_line("core/ir/uop.cpp", "#include \"dtype.h\""));  // sibling, stays in core/
  EXPECT_FALSE(check_line("core/ir/uop.cpp", "#include <vector>"));
  EXPECT_FALSE(check_line("core/ir/uop.cpp", "// #include \"runtime/tensor.h\""));
  EXPECT_FALSE(check_line("renderers/cstyle.cpp", "#include \"core/ir/uop.h\""));
  EXPECT_FALSE(check_line("backends/cpu/device.cpp", "#include \"hcq/signal.h\""));
  EXPECT_FALSE(check_line("runtime/tensor.cpp", "#include \"backends/cpu/device.h\""));
  EXPECT_FALSE(check_line("tests/unit/uop_test.cpp", "#include <sluice/sluice.h>"));
  EXPECT_FALSE(check_line("hcq/error.h", "#include \"base/error.h\""));
  EXPECT_FALSE(check_line("tests/render/render_test.cpp", "#include \"models/models.h\""));
  EXPECT_FALSE(
      check_line("models/models.h", "#include \"runtime/tensor.h\""));  // every layer may include base/
  EXPECT_FALSE(check_line("core/ir/uop.cpp", "#include \"base/error.h\""));
  EXPECT_FALSE(check_line("frontend/onnx/model.cpp", "#include \"runtime/jit.h\""));
  EXPECT_FALSE(check_line("tools/sluice/run.cpp", "#include \"frontend/onnx/model.h\""));
  EXPECT_FALSE(check_line("tests/cts/checks_test.cpp", "#include \"conformance/check.h\""));
  EXPECT_FALSE(check_line("conformance/devices.cpp", "#include \"backends/cpu/device.h\""));
  auto v = check_line("core/ir/uop.h", "#include \"runtime/tensor.h\"", 7);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->message, "core/ir/uop.h:7: includes runtime/tensor.h (core/ includes only core/)");
}

TEST(Layering, BaseIncludesNoLayer) { expect_layer_clean("base"); }
TEST(Layering, CoreIncludesOnlyCore) { expect_layer_clean("core"); }
TEST(Layering, RenderersIncludeOnlyCore) { expect_layer_clean("renderers"); }
TEST(Layering, HcqIncludesNoOtherLayer) { expect_layer_clean("hcq"); }
TEST(Layering, BackendsIncludeOnlyHcqRenderersCore) { expect_layer_clean("backends"); }
TEST(Layering, RuntimeIncludesOnlyLayersBelow) { expect_layer_clean("runtime"); }
TEST(Layering, FrontendIncludesOnlyRuntimeAndBelow) { expect_layer_clean("frontend"); }
TEST(Layering, ConformanceIncludesOnlyFrontendAndBelow) { expect_layer_clean("conformance"); }

TEST(Layering, NothingIncludesToolsOrTests) {
  std::vector<Violation> vs;
  for (const std::string& layer : kLayers)
    for (const Violation& v : scan(layer))
      if (v.layer == "tools" || v.layer == "tests" || v.layer == "outside" || layer == "include" ||
          layer == "tools" || layer == "tests")
        vs.push_back(v);
  EXPECT_TRUE(vs.empty()) << "include rule violations:\n" << report(vs);
}
