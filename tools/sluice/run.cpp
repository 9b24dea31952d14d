// `sluice run MODEL.onnx`: loads an ONNX model on a device (frontend/onnx/model.h), runs it on inputs from
// .npy files or random ones, prints each input and output (shape, dtype, min/max/mean), the import,
// build, schedule, codegen and compile times and the kernels per run; --bench N times N steady-state runs
// (median, p99); --output-dir writes the outputs as .npy files.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "frontend/onnx/model.h"
#include "frontend/onnx/op.h"
#include "frontend/onnx/proto.h"
#include "runtime/device.h"
#include "runtime/device_name.h"
#include "runtime/reference.h"
#include "tools/sluice/cli.h"
#include "runtime/npy.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using onnx::Model;
using onnx::Value;
using onnx::ValueInfo;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model, device, output_dir;
  std::vector<std::string> inputs, dims;
  int bench = 0;
  uint64_t seed = 0;
  bool json = false, list_ops = false;
};

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// "NAME=VALUE" split at the first '='; UsageError naming the option otherwise.
std::pair<std::string, std::string> split_eq(const std::string& s, const char* option) {
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(std::string(option) + " takes NAME=VALUE, got '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

// Random values of the input's declared type: floats uniform in [0, 1), integers in [0, 10), bools.
Tensor random_input(const ValueInfo& in, const std::map<std::string, int64_t>& dims, uint64_t seed,
                    const std::string& device) {
  if (in.kind != ValueInfo::Kind::Tensor)
    throw UsageError("input '" + in.name + "' is " + in.type_str() + ": sluice run gives tensors only");
  Shape shape;
  for (const onnx::Dim& d : in.shape) {
    if (d.size >= 0) {
      shape.push_back(d.size);
    } else if (auto it = dims.find(d.symbol); !d.symbol.empty() && it != dims.end()) {
      shape.push_back(it->second);
    } else {
      throw UsageError("input '" + in.name + "' is " + in.type_str() + ": give --dim " +
                       (d.symbol.empty() ? std::string("SYMBOL") : d.symbol) + "=N or --input " + in.name +
                       "=FILE.npy");
    }
  }
  const DType dt = in.known_dtype ? in.dtype : dtypes::float32;
  Tensor r = dt.is_float()  ? Tensor::rand(shape, seed, device).cast(dt)
             : dt.is_bool() ? Tensor::rand(shape, seed, device).lt(0.5)
                            : Tensor::randint(shape, 0, 10, seed, device).cast(dt);
  // Made on the host (the reference evaluator), so the timed runs start from host data as a file's would.
  eval::HostArray a = reference(r);
  auto host = std::make_shared<HostBuffer>();
  host->dtype = dt, host->size = a.numel(), host->bytes = a.to_bytes();
  return Tensor::from_host(std::move(host), shape, device);
}

nlohmann::json describe(const std::string& name, const Tensor& t) {
  eval::HostArray a = reference(t);
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nan = 0;
  for (int64_t k = 0; k < a.numel(); ++k) {
    const double v = a.value(k);
    if (std::isnan(v)) {
      ++nan;
      continue;
    }
    lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  }
  const int64_t n = a.numel() - nan;
  nlohmann::json j = {{"name", name}, {"dtype", onnx::onnx_type_name(t.dtype())}, {"shape", t.shape()}};
  if (n > 0) j["min"] = lo, j["max"] = hi, j["mean"] = sum / double(n);
  if (nan) j["nan"] = nan;
  return j;
}

void print_value(const char* role, const nlohmann::json& v) {
  std::string shape = "(";
  for (size_t i = 0; i < v["shape"].size(); ++i) shape += (i ? ", " : "") + std::to_string(int64_t(v["shape"][i]));
  shape += v["shape"].size() == 1 ? ",)" : ")";
  std::printf("  %-6s %-24s %-8s %-18s", role, std::string(v["name"]).c_str(), std::string(v["dtype"]).c_str(),
              shape.c_str());
  if (v.contains("min"))
    std::printf(" min %-10.4g max %-10.4g mean %-10.4g", double(v["min"]), double(v["max"]), double(v["mean"]));
  if (v.contains("nan")) std::printf(" nan %lld", (long long)int64_t(v["nan"]));
  std::printf("\n");
}

int list_ops(bool json) {
  if (json) {
    nlohmann::json ops = nlohmann::json::array();
    for (const onnx::OpDef* d : onnx::all_ops()) ops.push_back({{"op", d->name}, {"since", d->since}});
    std::cout << nlohmann::json{{"opsets", {onnx::kMinOpset, onnx::kMaxOpset}}, {"ops", ops}}.dump(2) << "\n";
    return 0;
  }
  std::printf("ONNX default-domain ops sluice imports (opsets %d to %d); 'since' is the oldest opset whose form\n"
              "of the op is read:\n",
              onnx::kMinOpset, onnx::kMaxOpset);
  int col = 0;
  for (const onnx::OpDef* d : onnx::all_ops()) {
    std::printf("  %-26s %3d%s", d->name, d->since, ++col % 3 == 0 ? "\n" : "");
  }
  if (col % 3) std::printf("\n");
  std::printf("%d ops\n", col);
  return 0;
}

int run(const Options& o) {
  if (o.list_ops) return list_ops(o.json);
  if (o.model.empty()) throw UsageError("give a model: sluice run MODEL.onnx (or --list-ops)");
  const std::string device = o.device.empty() ? default_device_name() : select_devices(o.device).at(0);
  std::map<std::string, int64_t> dims;
  for (const std::string& d : o.dims) {
    auto [k, v] = split_eq(d, "--dim");
    try {
      dims[k] = std::stoll(v);
    } catch (const std::exception&) { throw UsageError("--dim " + d + ": the size is not a number"); }
  }
  open_device(device);  // opened (and every backend probed) before the clock starts: import times the file
  canonical_device(device);
  auto t0 = Clock::now();
  Model m = Model::load(o.model, {.device = device});
  const double import_ms = ms_since(t0);

  std::map<std::string, std::string> given;
  for (const std::string& s : o.inputs) {
    auto [k, v] = split_eq(s, "--input");
    bool known = false;
    for (const ValueInfo& i : m.inputs()) known |= i.name == k;
    if (!known) {
      std::string names;
      for (const ValueInfo& i : m.inputs()) names += (names.empty() ? "" : ", ") + i.name;
      throw UsageError("--input " + s + ": the model has no input '" + k + "' (inputs: " + names + ")");
    }
    given[k] = v;
  }
  std::map<std::string, Value> inputs;
  nlohmann::json in_j = nlohmann::json::array();
  for (size_t k = 0; k < m.inputs().size(); ++k) {
    const ValueInfo& info = m.inputs()[k];
    auto it = given.find(info.name);
    Tensor t = it == given.end() || it->second == "random"
                   ? random_input(info, dims, o.seed + k, device)
                   : [&] {
                       NpyArray a = read_npy(it->second);
                       return Tensor::from_host(a.data, a.shape, device);
                     }();
    in_j.push_back(describe(info.name, t));
    inputs[info.name] = t;
  }

  hcq::Device& dev = open_device(device);
  t0 = Clock::now();
  std::vector<Value> out = m.run(inputs);
  dev.synchronize();
  const double first_ms = ms_since(t0);
  const onnx::RunInfo first = m.last_run();
  nlohmann::json out_j = nlohmann::json::array();
  for (size_t k = 0; k < out.size(); ++k) {
    const std::string& name = m.outputs()[k].name;
    if (!out[k].is_tensor()) {
      out_j.push_back({{"name", name}, {"value", out[k].str()}});
      continue;
    }
    out_j.push_back(describe(name, out[k].tensor()));
    if (!o.output_dir.empty()) {
      std::string file = name;
      for (char& c : file)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
      fs::create_directories(o.output_dir);
      eval::HostArray a = reference(out[k].tensor());
      write_npy((fs::path(o.output_dir) / (file + ".npy")).string(), a.dtype, a.shape, a.to_bytes());
    }
  }
  // The second run: what a steady-state run does (a replay, unless the graph is data-dependent).
  t0 = Clock::now();
  m.run(inputs);
  dev.synchronize();
  const double second_ms = ms_since(t0);
  const onnx::RunInfo second = m.last_run();

  std::vector<double> samples;
  if (o.bench > 0) {
    for (int i = 0; i < 3; ++i) m.run(inputs);
    dev.synchronize();
    for (int i = 0; i < o.bench; ++i) {
      t0 = Clock::now();
      m.run(inputs);
      dev.synchronize();
      samples.push_back(ms_since(t0));
    }
  }
  const Stats st = stats_of(samples);

  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"device", device},
                        {"opset", m.opset()},
                        {"inputs", in_j},
                        {"outputs", out_j},
                        {"import_ms", import_ms},
                        {"first_run",
                         {{"ms", first_ms},
                          {"build_ms", first.build_ms},
                          {"schedule_ms", first.schedule_ms},
                          {"codegen_ms", first.codegen_ms},
                          {"compile_ms", first.compile_ms},
                          {"kernels", first.kernels},
                          {"compiled", first.compiled}}},
                        {"second_run",
                         {{"ms", second_ms}, {"replayed", second.replayed}, {"kernels", second.kernels}}}};
    if (!second.replayed) j["second_run"]["not_replayed"] = second.not_captured;
    if (o.bench > 0)
      j["bench"] = {{"runs", o.bench}, {"median_ms", st.median}, {"p99_ms", st.p99}, {"min_ms", st.min}, {"max_ms", st.max}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s on %s (opset %d)\n", o.model.c_str(), device.c_str(), m.opset());
  for (const auto& v : in_j) print_value("input", v);
  for (const auto& v : out_j) {
    if (v.contains("value")) std::printf("  output %-24s %s\n", std::string(v["name"]).c_str(), std::string(v["value"]).c_str());
    else print_value("output", v);
  }
  std::printf("import %.1f ms\n", import_ms);
  std::printf("first run %.1f ms: build %.1f ms, schedule %.1f ms, codegen %.1f ms, compile %.1f ms; %zu kernels "
              "(%zu compiled)\n",
              first_ms, first.build_ms, first.schedule_ms, first.codegen_ms, first.compile_ms, first.kernels,
              first.compiled);
  if (second.replayed)
    std::printf("second run %.3f ms: replayed %zu kernels (nothing built, scheduled or compiled)\n", second_ms,
                second.kernels);
  else
    std::printf("second run %.3f ms: not replayed (%s)\n", second_ms, second.not_captured.c_str());
  if (o.bench > 0)
    std::printf("bench %d runs: median %.3f ms, p99 %.3f ms (min %.3f, max %.3f)\n", o.bench, st.median, st.p99,
                st.min, st.max);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("run", "Run an ONNX model: outputs, timings");
  cmd->add_option("model", o.model, "The .onnx file");
  cmd->add_option("--device", o.device, "Device to run on (default: the default device)");
  cmd->add_option("--input", o.inputs, "NAME=FILE.npy or NAME=random (repeatable)");
  cmd->add_option("--dim", o.dims, "SYMBOL=N: a symbolic size, for random inputs");
  cmd->add_option("--output-dir", o.output_dir, "Write each output to DIR/NAME.npy");
  cmd->add_option("--bench", o.bench, "Time N steady-state runs (median, p99)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--seed", o.seed, "Seed of the random inputs")->default_val(0);
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout");
  cmd->add_flag("--list-ops", o.list_ops, "Print the supported ONNX ops and opsets");
  cmd->footer(
      "Examples:\n"
      "  sluice run model.onnx --device CPU\n"
      "  sluice run model.onnx --input x=image.npy --output-dir out/ --bench 100\n"
      "  sluice run model.onnx --dim batch=8 --json\n"
      "Inputs not given are random: floats in [0, 1), integers in [0, 10).\n"
      "Times: import parses and checks the file. The first run builds the\n"
      "Tensor graph, schedules, generates and compiles kernels (disk-cached)\n"
      "and runs them; the second, with the same input shapes, replays the\n"
      "captured kernels. --bench runs 3 warm-up runs first.\n"
      "Exit codes: 0 ok, 1 the model failed to load or run, 2 bad arguments.");
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
