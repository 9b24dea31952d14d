// Runs the built `sluice` executable (SLUICE_CLI_PATH) and checks its output and exit codes. Each test
// keeps its device work small (--quick, --filter, few iterations) so the suite stays fast.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "models/vad/wav.h"
#include "tests/cli/sluice_process.h"
#include "tests/models/speech_clip.h"
#include "tests/models/text_image.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using cli_test::parse;
using cli_test::Proc;
using cli_test::shell;
using cli_test::sluice;

// Every help has examples and says what the exit codes mean, in 80 columns.
TEST(Cli, EverySubcommandHasHelp) {
  for (const std::string sub :
       {"", "devices", "conformance", "latency", "profile", "run", "compile", "vad", "ocr"}) {
    Proc r = sluice(sub + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub << ":\n" << r.out;
    EXPECT_NE(r.out.find("Exit codes: 0 ok, 1 "), std::string::npos) << sub << ":\n" << r.out;
    if (!sub.empty()) {
      EXPECT_NE(r.out.find("\n  sluice " + sub + " "), std::string::npos) << sub << ": no example";
    }
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << sub << ": " << line;
  }
}

// Usage errors exit 2 wherever they are found (CLI11's parser included), in one line that names the
// subcommand and the bad value in words.
TEST(Cli, UsageErrorsExit2AndNameTheSubcommand) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "sluice: error: a subcommand is required"},
           {"frobnicate", "sluice: error: 'frobnicate' is not a subcommand (subcommands: devices, "},
           {"latency --iters 0", "sluice latency: error: --iters must be >= 1, got 0"},
           {"latency --iters -3", "sluice latency: error: --iters must be >= 1, got -3"},
           {"latency --iters many", "sluice latency: error: --iters must be a number, got 'many'"},
           {"latency --bogus", "sluice latency: error: the following argument was not expected: --bogus"},
           {"latency --device NOSUCH", "sluice latency: error: unknown device \"NOSUCH\""},
           {"vad x.wav --threshold 2", "sluice vad: error: --threshold must be between 0 and 1, got 2"},
           {"ocr x.png --batch 0", "sluice ocr: error: --batch must be between 1 and 64, got 0"},
           {"run m.onnx --bench 0", "sluice run: error: --bench must be between 1 and 1000000, got 0"},
           {"conformance --suite nonsense", "sluice conformance: error: --suite 'nonsense'"},
           {"profile", "sluice profile: error: command is required"},
       }) {
    Proc r = sluice(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << c.args << ":\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ":\n" << r.err;
  }
}

// sluice devices says the whole of why a device is absent (wrapped in 80 columns, not cut).
TEST(Cli, DevicesShowTheWholeAbsenceReason) {
  json j = parse(sluice("devices --json"));
  Proc human = sluice("devices");
  ASSERT_EQ(human.code, 0);
  // The human output with its wrapped lines joined back.
  std::string joined;
  std::istringstream lines(human.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 80u) << line;
    const size_t text = line.find_first_not_of(' ');
    joined += (text >= 20 && text != std::string::npos ? " " + line.substr(text) : "\n" + line);
  }
  size_t absent = 0;
  for (const json& d : j.at("devices")) {
    if (d.at("present").get<bool>()) continue;
    ++absent;
    std::string reason = d.at("reason");
    std::string words;  // the reason with runs of spaces as one, as the wrapping leaves it
    std::istringstream ws(reason);
    for (std::string w; ws >> w;) words += (words.empty() ? "" : " ") + w;
    EXPECT_NE(joined.find(words), std::string::npos) << d.at("name") << ": " << reason << "\n" << human.out;
  }
  if (absent == 0) GTEST_SKIP() << "every backend compiled in opens on this machine";
}

TEST(Cli, DevicesJsonListsEveryKindWithProperties) {
  Proc r = sluice("devices --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  std::set<std::string> names;
  for (const json& d : j.at("devices")) {
    names.insert(d.at("name").get<std::string>());
    if (!d.at("present").get<bool>()) {
      EXPECT_FALSE(d.at("reason").get<std::string>().empty()) << d;
      continue;
    }
    EXPECT_FALSE(d.at("device_name").get<std::string>().empty()) << d;
    EXPECT_TRUE(d.at("vendor").is_string());
    EXPECT_TRUE(d.at("driver_version").is_string());
    EXPECT_GE(d.at("queues").at("compute").get<int>(), 1) << d;
    EXPECT_GE(d.at("queues").at("copy").get<int>(), 0) << d;
    EXPECT_GE(d.at("limits").at("max_workgroup_size").get<int>(), 1) << d;
    for (const char* dt : {"float16", "bfloat16", "int64", "float64"})
      EXPECT_TRUE(d.at("dtypes").at(dt).is_boolean());
  }
  for (const char* kind : {"CUDA", "HIP", "VULKAN", "CL", "CPU", "NULL"})
    EXPECT_TRUE(names.count(kind)) << kind;
  json cpu;
  for (const json& d : j["devices"])
    if (d["name"] == "CPU") cpu = d;
  ASSERT_TRUE(cpu.value("present", false));
  EXPECT_EQ(cpu["vendor"], "host");
  EXPECT_GT(cpu["memory_bytes"].get<uint64_t>(), 0u);
  EXPECT_FALSE(cpu["software"].get<bool>());
  EXPECT_NE(cpu["compiler"].get<std::string>().find("clang version"), std::string::npos) << cpu;
  for (const json& d : j["devices"]) {
    if (d["name"] == "VULKAN" && d["present"] && d["device_name"].get<std::string>().find("llvmpipe") == 0) {
      EXPECT_TRUE(d["software"].get<bool>()) << d;
    }
  }

  Proc human = sluice("devices");
  EXPECT_EQ(human.code, 0);
  std::istringstream lines(human.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
}

// Without clang the CPU device cannot run a kernel: it is absent and says why, instead of failing every
// case of a conformance run.
TEST(Cli, CpuWithoutClangIsAbsentWithTheReason) {
  json j = parse(sluice("devices --json", "SLUICE_CLANG=/nonexistent/clang"));
  json cpu;
  for (const json& d : j.at("devices"))
    if (d["name"] == "CPU") cpu = d;
  ASSERT_FALSE(cpu.value("present", true)) << cpu;
  EXPECT_NE(cpu["reason"].get<std::string>().find("SLUICE_CLANG=/nonexistent/clang"), std::string::npos)
      << cpu;
  Proc run = sluice("conformance --device CPU --quick", "SLUICE_CLANG=/nonexistent/clang");
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.err.find("no clang"), std::string::npos) << run.err;
}

TEST(Cli, ConformanceSweepHasAtLeast2000GeneratedCases) {
  Proc r = sluice("conformance --device CPU --list --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json cases = parse(r).at("cases");
  std::set<std::string> names, groups;
  size_t ops = 0, size0 = 0, size1 = 0, views = 0, broadcast = 0;
  for (const json& c : cases) {
    const std::string n = c.at("name");
    EXPECT_TRUE(names.insert(n).second) << "duplicate case " << n;
    groups.insert(c.at("group").get<std::string>());
    if (n.rfind("ops/", 0) != 0) continue;
    ++ops;
    const std::string shape = n.substr(n.rfind('/') + 1);
    size0 += shape == "0" || shape.find("x0") != std::string::npos || shape.rfind("0x", 0) == 0;
    size1 += shape == "1" || shape.find("x1") != std::string::npos || shape.rfind("1x", 0) == 0;
    views += shape.find(".T") != std::string::npos || shape.find(".step2") != std::string::npos ||
             shape.find(".flip") != std::string::npos;
    broadcast += shape == "7x1_1x13";
  }
  EXPECT_GE(ops, 2000u);
  EXPECT_GT(size0, 50u);
  EXPECT_GT(size1, 50u);
  EXPECT_GT(views, 100u);
  EXPECT_GT(broadcast, 20u);
  for (const char* g :
       {"queue", "ops/unary", "ops/binary", "ops/compare", "ops/bitwise", "ops/ternary", "ops/reduce",
        "ops/movement", "ops/index", "ops/linalg", "ops/nn", "ops/cast", "ops/creation", "ops/composite"})
    EXPECT_TRUE(groups.count(g)) << g;
  Proc quick = sluice("conformance --device CPU --list --quick --json");
  ASSERT_EQ(quick.code, 0);
  EXPECT_LT(parse(quick)["cases"].size(), cases.size() / 4);
}

TEST(Cli, ConformanceQueueChecksPassOnCpuAndNull) {
  Proc r = sluice("conformance --device CPU,NULL --filter 'queue/*' --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json j = parse(r);
  EXPECT_EQ(j.at("unexpected"), 0);
  size_t passed = 0, skipped = 0;
  for (const json& g : j.at("groups")) {
    EXPECT_EQ(g.at("group"), "queue");
    EXPECT_EQ(g.at("failed"), 0) << g;
    passed += g.at("passed").get<size_t>();
    skipped += g.at("skipped").get<size_t>();
  }
  EXPECT_GE(passed, 46u + 18u);  // every check on CPU, the ones NULL can do
  EXPECT_GT(skipped, 0u);        // NULL declares what it cannot do, with a reason
  for (const json& res : j.at("results")) {
    if (res.at("status") == "skipped") { EXPECT_FALSE(res.at("detail").get<std::string>().empty()) << res; }
  }
}

TEST(Cli, ConformanceOpsPassOnCpu) {
  Proc r = sluice("conformance --device CPU --filter 'ops/add/*' --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json j = parse(r);
  EXPECT_EQ(j.at("unexpected"), 0);
  ASSERT_EQ(j.at("groups").size(), 1u);
  EXPECT_GE(j["groups"][0].at("passed").get<int>(), 80);
  EXPECT_LT(j["groups"][0].at("worst_error").get<double>(), 1e-5);
}

TEST(Cli, ConformanceCatchesAPlantedWrongResult) {
  const std::string name = "ops/mul/float32/7x13_7x13";
  Proc r = sluice("conformance --device CPU --filter " + name + " --json", "SLUICE_CONFORMANCE_PLANT=wrong");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  json j = parse(r);
  EXPECT_EQ(j.at("unexpected"), 1);
  ASSERT_EQ(j.at("results").size(), 1u);
  const json& f = j["results"][0];
  EXPECT_EQ(f.at("status"), "failed");
  EXPECT_NE(f.at("detail").get<std::string>().find("element 0"), std::string::npos) << f;
  EXPECT_EQ(f.at("reproduce"), "sluice conformance --device CPU --filter " + name);
}

TEST(Cli, ConformanceCatchesAPlantedOutOfBoundsWrite) {
  Proc r = sluice("conformance --device CPU --filter 'ops/neg/float32/7x13' --json",
                  "SLUICE_CONFORMANCE_PLANT=oob");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  json j = parse(r);
  ASSERT_EQ(j.at("results").size(), 1u);
  EXPECT_NE(j["results"][0].at("detail").get<std::string>().find("out-of-bounds"), std::string::npos) << j;
  // The human output names the failure and the command that reproduces it.
  Proc human =
      sluice("conformance --device CPU --filter 'ops/neg/float32/7x13'", "SLUICE_CONFORMANCE_PLANT=oob");
  EXPECT_EQ(human.code, 1);
  EXPECT_NE(human.out.find("FAIL CPU ops/neg/float32/7x13"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("sluice conformance --device CPU --filter ops/neg/float32/7x13"),
            std::string::npos);
}

TEST(Cli, BadInputIsAClearErrorWithExitCode2) {
  Proc dev = sluice("conformance --device NOSUCH --quick");
  EXPECT_EQ(dev.code, 2);
  EXPECT_NE(dev.err.find("unknown device \"NOSUCH\""), std::string::npos) << dev.err;
  Proc absent = sluice("latency --device CUDA:3 --quick");
  EXPECT_EQ(absent.code, 2) << absent.err;
  EXPECT_NE(absent.err.find("CUDA:3"), std::string::npos) << absent.err;
  Proc filter = sluice("conformance --device CPU --filter 'nothing/*'");
  EXPECT_EQ(filter.code, 2);
  EXPECT_NE(filter.err.find("matches no case"), std::string::npos) << filter.err;
  EXPECT_EQ(sluice("latency --iters -3").code, 2);
  Proc plant =
      sluice("conformance --device CPU --filter 'ops/neg/float32/7'", "SLUICE_CONFORMANCE_PLANT=bogus");
  EXPECT_EQ(plant.code, 1);
  EXPECT_NE(plant.err.find("bogus"), std::string::npos) << plant.err;
}

TEST(Cli, ProfileWritesATraceWithOneTrackPerQueue) {
  const fs::path trace =
      fs::temp_directory_path() / ("sluice_cli_test_" + std::to_string(getpid()) + ".json");
  Proc r = sluice("profile -o " + trace.string() + " --json -- latency --device CPU --quick --iters 5");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json j = parse(r);
  EXPECT_GT(j.at("slices").get<int>(), 10);
  std::set<std::string> tracks;
  for (auto& [track, n] : j.at("tracks").items()) tracks.insert(track.substr(track.find(':') + 1));
  EXPECT_TRUE(tracks.count("compute:0")) << j;
  EXPECT_TRUE(tracks.count("copy:0")) << j;
  // The trace itself: Chrome trace-event JSON whose slices carry names and byte counts of copies.
  std::ifstream f(trace);
  json t = json::parse(f);
  size_t copies = 0;
  for (const json& e : t.at("traceEvents"))
    if (e.value("ph", "") == "X" && e.value("cat", "") == "copy")
      copies += e.at("args").at("bytes").get<uint64_t>() > 0;
  EXPECT_GT(copies, 0u);
  fs::remove(trace);

  // The command's stdout stays stdout; under --stdout-to-stderr (and --json) it goes to stderr.
  Proc echo = sluice("profile -o " + trace.string() + " -- echo profiled-output");
  EXPECT_EQ(echo.code, 1);  // echo writes no trace
  EXPECT_EQ(echo.out.rfind("profiled-output\n", 0), 0u) << echo.out;
  EXPECT_EQ(echo.err.find("profiled-output"), std::string::npos) << echo.err;
  Proc quiet = sluice("profile -o " + trace.string() + " --stdout-to-stderr -- echo profiled-output");
  EXPECT_EQ(quiet.out.find("profiled-output"), std::string::npos) << quiet.out;
  EXPECT_NE(quiet.err.find("profiled-output"), std::string::npos) << quiet.err;

  Proc none = sluice("profile -o " + trace.string() + " -- true");
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("no trace"), std::string::npos) << none.err;
  EXPECT_NE(sluice("profile").code, 0);  // no command

  // A sluice program that runs no kernel writes an empty trace: not an error. A folder that does not
  // exist is a usage error naming it, found before the command runs.
  Proc devices = sluice("profile -o " + trace.string() + " -- devices");
  EXPECT_EQ(devices.code, 0) << devices.err;
  EXPECT_NE(devices.out.find("the command ran no kernels or copies"), std::string::npos) << devices.out;
  fs::remove(trace);
  Proc nowhere = sluice("profile -o /nonexistent/dir/t.json -- devices");
  EXPECT_EQ(nowhere.code, 2);
  EXPECT_NE(nowhere.err.find("the folder /nonexistent/dir does not exist"), std::string::npos) << nowhere.err;
  EXPECT_EQ(nowhere.out.find("CPU"), std::string::npos) << "the command ran: " << nowhere.out;
}

// A command that realizes tensors: the summary counts the runtime's host spans and the arrows from its
// submits to the kernels they ran.
TEST(Cli, ProfileSummarizesHostSpansAndArrows) {
  const fs::path trace =
      fs::temp_directory_path() / ("sluice_cli_host_" + std::to_string(getpid()) + ".json");
  Proc r = sluice("profile -o " + trace.string() +
                  " --json -- conformance --device CPU --filter ops/neg/float32/7");
  fs::remove(trace);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json j = parse(r);
  for (const char* phase : {"schedule", "codegen", "compile", "submit"})
    EXPECT_GE(j.at("host_spans").value(phase, 0), 1) << phase << ": " << j;
  EXPECT_GE(j.at("flows").get<int>(), 1) << j;
}

// ---- sluice run and the ONNX suite (need Debian's libonnx-testdata for a model made elsewhere)

const char* kOnnxData = "/usr/share/libonnx-testdata/data";

// A float32 .npy file of the given shape and values, written byte by byte as numpy does.
void write_npy_f32(const fs::path& p, const std::string& shape, const std::vector<float>& v) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::ofstream out(p, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {char(h.size() & 0xff), char(h.size() >> 8)};
  out.write(len, 2);
  out << h;
  out.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
}

std::vector<float> read_npy_f32(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (f.size() < 10 || f.compare(0, 6, "\x93NUMPY") != 0) return {};
  const size_t start = 10 + (uint8_t(f[8]) | size_t(uint8_t(f[9])) << 8);
  std::vector<float> v((f.size() - start) / 4);
  std::memcpy(v.data(), f.data() + start, v.size() * 4);
  return v;
}

TEST(Cli, RunReadsNpyInputsAndWritesNpyOutputs) {
  const fs::path model = fs::path(kOnnxData) / "node/test_add/model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "libonnx-testdata is not installed";
  const fs::path dir = fs::temp_directory_path() / ("sluice_cli_run_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<float> x(60), y(60);
  for (int i = 0; i < 60; ++i) x[size_t(i)] = float(i), y[size_t(i)] = 0.5f * float(i);
  write_npy_f32(dir / "x.npy", "3, 4, 5", x);
  write_npy_f32(dir / "y.npy", "3, 4, 5", y);
  Proc r = sluice("run " + model.string() + " --device CPU --input x=" + (dir / "x.npy").string() +
                  " --input y=" + (dir / "y.npy").string() + " --output-dir " + (dir / "out").string() +
                  " --bench 5 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  EXPECT_EQ(j.at("device"), "CPU");
  EXPECT_EQ(j.at("outputs").at(0).at("name"), "sum");
  EXPECT_EQ(j.at("outputs").at(0).at("shape"), json::array({3, 4, 5}));
  EXPECT_EQ(j.at("outputs").at(0).at("max").get<double>(), 59 * 1.5);
  EXPECT_EQ(j.at("first_run").at("kernels"), 1);
  EXPECT_TRUE(j.at("second_run").at("replayed").get<bool>());
  EXPECT_GT(j.at("bench").at("median_ms").get<double>(), 0);
  std::vector<float> sum = read_npy_f32(dir / "out" / "sum.npy");
  ASSERT_EQ(sum.size(), 60u);
  for (int i = 0; i < 60; ++i) EXPECT_EQ(sum[size_t(i)], 1.5f * float(i));
  // The human form names the times and the replay.
  Proc h = sluice("run " + model.string() + " --device CPU");
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find("first run"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("second run"), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("replayed 1 kernels"), std::string::npos) << h.out;
  fs::remove_all(dir);
}

TEST(Cli, RunBadInputIsAClearError) {
  const fs::path model = fs::path(kOnnxData) / "node/test_add/model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "libonnx-testdata is not installed";
  Proc missing = sluice("run /nonexistent/model.onnx --device CPU");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("[onnx] /nonexistent/model.onnx: does not exist or is not a file"),
            std::string::npos)
      << missing.err;
  Proc name = sluice("run " + model.string() + " --device CPU --input nosuch=random");
  EXPECT_EQ(name.code, 2);
  EXPECT_NE(name.err.find("the model has no input 'nosuch' (inputs: x, y)"), std::string::npos) << name.err;
  const fs::path bad = fs::temp_directory_path() / ("sluice_cli_bad_" + std::to_string(getpid()) + ".npy");
  std::ofstream(bad) << "not numpy";
  Proc npy = sluice("run " + model.string() + " --device CPU --input x=" + bad.string());
  EXPECT_EQ(npy.code, 1);
  EXPECT_NE(npy.err.find("not an .npy file"), std::string::npos) << npy.err;
  write_npy_f32(bad, "2, 2", {1, 2, 3, 4});
  Proc shape = sluice("run " + model.string() + " --device CPU --input x=" + bad.string());
  EXPECT_EQ(shape.code, 1);
  EXPECT_NE(shape.err.find("input 'x' is declared tensor(float)[3, 4, 5] (rank 3), got shape (2, 2)"),
            std::string::npos)
      << shape.err;
  fs::remove(bad);
  Proc none = sluice("run --device CPU");
  EXPECT_EQ(none.code, 2);
}

// `sluice compile` then `sluice run FILE` in another process, with an empty compiler cache that stays
// empty: the compiled model runs nothing through the compiler.
// --beam tunes a model ahead of time: compile searches its kernels (BEAM results cached on disk), the
// compiled model runs them with nothing to search or compile, and the values match the untuned run.
TEST(Cli, BeamTunesAModelAheadOfTime) {
  const fs::path model = fs::path(kOnnxData) / "node/test_matmul_2d/model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "libonnx-testdata is not installed";
  const fs::path dir = fs::temp_directory_path() / ("sluice_cli_beam_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = (dir / "mm.sluice").string(), env = "SLUICE_CACHE_DIR=" + (dir / "cache").string();
  Proc c = sluice("compile " + model.string() + " --device CPU --beam 1 -o " + file,
                  env + " SLUICE_BEAM_BUDGET=1");
  ASSERT_EQ(c.code, 0) << c.err;
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir / "cache" / "beam")) ++entries;
  EXPECT_EQ(entries, 1u) << "one kernel, one BEAM result";
  Proc tuned = sluice("run " + file + " --seed 3 --json", env);
  Proc plain = sluice("run " + model.string() + " --device CPU --seed 3 --json", env);
  ASSERT_EQ(tuned.code, 0) << tuned.err;
  ASSERT_EQ(plain.code, 0) << plain.err;
  const json t = parse(tuned), p = parse(plain);
  EXPECT_EQ(t.at("compiler_runs"), 0);
  for (const char* k : {"min", "max", "mean"})
    EXPECT_NEAR(t.at("outputs")[0].at(k).get<double>(), p.at("outputs")[0].at(k).get<double>(), 1e-5) << k;
  Proc bad = sluice("run " + model.string() + " --beam 0");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--beam"), std::string::npos) << bad.err;
  fs::remove_all(dir);
}

TEST(Cli, CompileThenRunTheCompiledModel) {
  const fs::path model = fs::path(kOnnxData) / "node/test_add/model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "libonnx-testdata is not installed";
  const fs::path dir = fs::temp_directory_path() / ("sluice_cli_compile_" + std::to_string(getpid()));
  fs::create_directories(dir / "cache");
  const std::string file = (dir / "add.sluice").string();
  Proc c = sluice("compile " + model.string() + " --device CPU -o " + file + " --json");
  ASSERT_EQ(c.code, 0) << c.err;
  json cj = parse(c);
  EXPECT_EQ(cj.at("kernels"), 1);
  EXPECT_EQ(cj.at("inputs").at("x"), json::array({3, 4, 5}));
  EXPECT_EQ(cj.at("bytes").get<uint64_t>(), fs::file_size(file));

  std::vector<float> x(60), y(60);
  for (int i = 0; i < 60; ++i) x[size_t(i)] = float(i), y[size_t(i)] = 2.0f * float(i);
  write_npy_f32(dir / "x.npy", "3, 4, 5", x);
  write_npy_f32(dir / "y.npy", "3, 4, 5", y);
  Proc r = sluice("run " + file + " --input x=" + (dir / "x.npy").string() +
                      " --input y=" + (dir / "y.npy").string() + " --output-dir " + (dir / "out").string() +
                      " --bench 3 --json",
                  "SLUICE_CACHE_DIR=" + (dir / "cache").string());
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  EXPECT_TRUE(j.at("compiled_model").get<bool>());
  EXPECT_EQ(j.at("device"), "CPU");
  EXPECT_EQ(j.at("compiler_runs"), 0);
  EXPECT_EQ(j.at("compiler_cache_reads"), 0);
  EXPECT_TRUE(fs::is_empty(dir / "cache")) << "the compiled model's run wrote to the compiler cache";
  std::vector<float> sum = read_npy_f32(dir / "out" / "sum.npy");
  ASSERT_EQ(sum.size(), 60u);
  for (int i = 0; i < 60; ++i) EXPECT_EQ(sum[size_t(i)], 3.0f * float(i));
  Proc h = sluice("run " + file);
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find("nothing imported or compiled: 0 compiler runs"), std::string::npos) << h.out;

  Proc other = sluice("run " + file + " --device NULL");
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("was compiled for CPU"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("it cannot run on NULL"), std::string::npos) << other.err;
  Proc unwritable =
      sluice("compile " + model.string() + " --device CPU -o " + (dir / "no" / "such.sluice").string());
  EXPECT_EQ(unwritable.code, 1);
  EXPECT_NE(unwritable.err.find("cannot write the compiled model"), std::string::npos) << unwritable.err;
  Proc help = sluice("compile --help");
  EXPECT_EQ(help.code, 0);
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  fs::remove_all(dir);
}

TEST(Cli, RunListsTheSupportedOps) {
  Proc r = sluice("run --list-ops --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  std::set<std::string> ops;
  for (const json& o : j.at("ops")) ops.insert(o.at("op").get<std::string>());
  for (const char* op : {"Add", "Relu", "Cast", "Where"}) EXPECT_TRUE(ops.count(op)) << op;
  EXPECT_EQ(j.at("opsets"), json::array({1, 21}));
}

TEST(Cli, ConformanceRunsTheOnnxSuite) {
  if (!fs::exists(kOnnxData)) GTEST_SKIP() << "libonnx-testdata is not installed";
  Proc r = sluice("conformance --suite onnx --device CPU --filter 'onnx/node/test_add*' --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  json j = parse(r);
  bool add = false;
  for (const json& o : j.at("onnx_ops"))
    if (o.at("op") == "Add") add = o.at("passed").get<int>() >= 3 && o.at("failed").get<int>() == 0;
  EXPECT_TRUE(add) << j.dump(2);
  Proc list = sluice("conformance --suite onnx --filter 'onnx/simple/*' --list");
  EXPECT_EQ(list.code, 0);
  EXPECT_NE(list.out.find("onnx/simple/"), std::string::npos);
  Proc bad = sluice("conformance --suite nonsense");
  EXPECT_EQ(bad.code, 2);
}

// ---- sluice vad (needs espeak-ng and Silero VAD under data/, from scripts/fetch-models.sh)

TEST(Cli, VadFindsTheSpeechInASpokenClip) {
  const fs::path model = fs::path(SLUICE_SOURCE_DIR) / "data/vad-web/dist/silero_vad_v5.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is missing (scripts/fetch-models.sh fetches it)";
  const fs::path dir = fs::temp_directory_path() / ("sluice_cli_vad_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path clip = dir / "speech.wav";
  if (std::string why = sluice::vad::test::make_speech_clip(clip.string()); !why.empty()) {
    fs::remove_all(dir);
    GTEST_SKIP() << why;
  }
  const int64_t samples = int64_t(fs::file_size(clip) - 44) / 2;  // 16-bit mono after a 44-byte header
  const std::string args = "vad " + clip.string() + " --device CPU --model " + model.string();
  Proc r = sluice(args + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  EXPECT_EQ(j.at("device"), "CPU");
  EXPECT_EQ(j.at("chunks").get<int64_t>(), (samples + 511) / 512);
  EXPECT_NEAR(j.at("seconds").get<double>(), double(samples) / 16000, 1e-9);
  ASSERT_FALSE(j.at("segments").empty()) << j.dump(2);
  // The clip's speech sits between a second of silence on each side (30 ms of padding and a chunk spare).
  EXPECT_GT(j.at("segments").front().at("start").get<double>(), 1.0 - 0.062);
  EXPECT_LT(j.at("segments").back().at("end").get<double>(), j.at("seconds").get<double>() - 1.0 + 0.062);
  EXPECT_TRUE(j.at("replayed").get<bool>()) << j.dump(2);
  EXPECT_GT(j.at("kernels_per_chunk").get<int>(), 0);
  EXPECT_GT(j.at("chunk_ms").at("median").get<double>(), 0);
  EXPECT_GT(j.at("chunk_ms").at("mean").get<double>(), 0);
  Proc h = sluice(args);
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find("  speech "), std::string::npos) << h.out;
  EXPECT_NE(h.out.find(std::to_string((samples + 511) / 512) + " chunks of 512 samples"), std::string::npos)
      << h.out;
  EXPECT_NE(h.out.find("median"), std::string::npos) << h.out;
  Proc help = sluice("vad --help");
  EXPECT_EQ(help.code, 0);
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  fs::remove_all(dir);
}

TEST(Cli, VadBadInputIsAClearError) {
  const fs::path dir = fs::temp_directory_path() / ("sluice_cli_vad_bad_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path text = dir / "text.wav", slow = dir / "8k.wav";
  std::ofstream(text) << "not audio";
  Proc r = sluice("vad " + text.string() + " --device CPU");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("[wav] " + text.string() + ": not a WAV file"), std::string::npos) << r.err;
  sluice::vad::write_wav(slow.string(), std::vector<float>(8000, 0.0f), 8000);
  r = sluice("vad " + slow.string() + " --device CPU");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("1 channel(s) at 8000 Hz; voice activity detection needs mono at 16000 Hz"),
            std::string::npos)
      << r.err;
  sluice::vad::write_wav(slow.string(), std::vector<float>(8000, 0.0f), 16000);
  r = sluice("vad " + slow.string() + " --device CPU --model " + (dir / "none.onnx").string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("none.onnx is missing"), std::string::npos) << r.err;
  EXPECT_NE(sluice("vad " + slow.string() + " --threshold 2").code, 0);
  EXPECT_EQ(sluice("vad --device CPU").code, 2);  // no file
  fs::remove_all(dir);
}

// ---- sluice ocr (needs the DejaVu and WenQuanYi fonts, and PP-OCRv4 under data/ from
// scripts/fetch-models.sh)

TEST(Cli, OcrReadsARenderedImage) {
  const fs::path models = fs::path(SLUICE_SOURCE_DIR) / "data/ocr-models/assets";
  if (!fs::exists(models / "ch_PP-OCRv4_rec_infer.onnx"))
    GTEST_SKIP() << models << " has no PP-OCRv4 models (scripts/fetch-models.sh fetches them)";
  std::string missing;
  const std::vector<sluice::ocr::test::TextLine> lines = sluice::ocr::test::sample_lines(&missing);
  if (lines.empty()) GTEST_SKIP() << "fonts missing: " << missing;
  const fs::path dir = fs::temp_directory_path() / ("sluice_cli_ocr_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path png = dir / "lines.png";
  const sluice::ocr::Image im = sluice::ocr::test::render_text(lines);
  sluice::ocr::test::write_png(im, png.string());
  const std::string args = "ocr " + png.string() + " --device CPU --models " + models.string();
  Proc r = sluice(args + " --json");
  ASSERT_EQ(r.code, 0) << r.err;
  json j = parse(r);
  EXPECT_EQ(j.at("device"), "CPU");
  EXPECT_EQ(j.at("width"), im.width);
  EXPECT_EQ(j.at("height"), im.height);
  ASSERT_EQ(j.at("lines").size(), lines.size()) << j.dump(2);
  for (size_t k = 0; k < lines.size(); ++k) {
    const json& l = j.at("lines").at(k);
    EXPECT_EQ(l.at("text"), lines[k].text);
    EXPECT_GT(l.at("confidence").get<double>(), 0.9) << l.dump();
    ASSERT_EQ(l.at("box").size(), 4u);
    EXPECT_LT(l.at("box").at(0).at(0).get<int>(), l.at("box").at(1).at(0).get<int>());  // left to right
  }
  const json& t = j.at("times_ms");
  for (const char* stage : {"load", "det", "boxes", "cls", "rec"})
    EXPECT_GE(t.at(stage).get<double>(), 0) << stage;
  EXPECT_GE(t.at("total").get<double>(), t.at("det").get<double>() + t.at("rec").get<double>());
  Proc h = sluice(args);
  ASSERT_EQ(h.code, 0) << h.err;
  for (const auto& l : lines) EXPECT_NE(h.out.find("  " + l.text + " "), std::string::npos) << h.out;
  EXPECT_NE(h.out.find(" lines\n"), std::string::npos) << h.out;
  for (const char* stage : {"det ", "boxes ", "cls ", "rec ", "total "})
    EXPECT_NE(h.out.find(stage), std::string::npos) << h.out;
  // Bad input: not an image (exit 2), models missing (exit 1, saying how to fetch them).
  std::ofstream(dir / "notes.png") << "not pixels";
  Proc bad = sluice("ocr " + (dir / "notes.png").string() + " --device CPU");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find((dir / "notes.png").string() + ": not a PNG or JPEG image"), std::string::npos)
      << bad.err;
  Proc none = sluice("ocr " + png.string() + " --device CPU --models " + (dir / "none").string());
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find("scripts/fetch-models.sh"), std::string::npos) << none.err;
  EXPECT_EQ(sluice("ocr --device CPU").code, 2);  // no image
  fs::remove_all(dir);
}

}  // namespace
