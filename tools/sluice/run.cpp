// `sluice run MODEL.onnx`: loads an ONNX model on a device (frontend/onnx/model.h), runs it on inputs from
// .npy files or random ones, prints each input and output (shape, dtype, min/max/mean), the import,
// build, schedule, codegen and compile times and the kernels per run; --bench N times N steady-state runs
// (median, p99); --output-dir writes the outputs as .npy files.
// `sluice run FILE` of a compiled model (`sluice compile`, told apart by its magic) does the same without
// importing or compiling (frontend/onnx/compiled_model.h): it prints the load time instead, and how many
// compiler runs and cache reads the whole command made (none).
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

#include "frontend/onnx/compiled_model.h"
#include "frontend/onnx/model.h"
#include "frontend/onnx/op.h"
#include "frontend/onnx/proto.h"
#include "runtime/device.h"
#include "runtime/device_name.h"
#include "runtime/npy.h"
#include "runtime/reference.h"
#include "runtime/saved_plan.h"
#include "tools/sluice/cli.h"
#include "tools/sluice/model_inputs.h"

namespace sluice::cli {
namespace {

namespace fs = std::filesystem;
using onnx::Model;
using onnx::Value;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model, device, output_dir;
  std::vector<std::string> inputs, dims;
  int bench = 0;
  uint64_t seed = 0;
  bool json = false, list_ops = false;
};

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
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
  for (size_t i = 0; i < v["shape"].size(); ++i)
    shape += (i ? ", " : "") + std::to_string(int64_t(v["shape"][i]));
  shape += v["shape"].size() == 1 ? ",)" : ")";
  std::printf("  %-6s %-24s %-8s %-18s", role, std::string(v["name"]).c_str(),
              std::string(v["dtype"]).c_str(), shape.c_str());
  if (v.contains("min"))
    std::printf(" min %-10.4g max %-10.4g mean %-10.4g", double(v["min"]), double(v["max"]),
                double(v["mean"]));
  if (v.contains("nan")) std::printf(" nan %lld", (long long)int64_t(v["nan"]));
  std::printf("\n");
}

// DIR/NAME.npy, with the characters of NAME a file name should not hold replaced by '_'.
void write_output(const std::string& dir, const std::string& name, const Tensor& t) {
  std::string file = name;
  for (char& c : file)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  fs::create_directories(dir);
  eval::HostArray a = reference(t);
  write_npy((fs::path(dir) / (file + ".npy")).string(), a.dtype, a.shape, a.to_bytes());
}

// Steady-state runs of `run` (after 3 warm-up runs), each waited for on `dev`.
Stats bench(int runs, hcq::Device& dev, const std::function<void()>& run) {
  std::vector<double> samples;
  if (runs > 0) {
    for (int i = 0; i < 3; ++i) run();
    dev.synchronize();
    for (int i = 0; i < runs; ++i) {
      const auto t0 = Clock::now();
      run();
      dev.synchronize();
      samples.push_back(ms_since(t0));
    }
  }
  return stats_of(samples);
}

nlohmann::json bench_json(int runs, const Stats& st) {
  return {
      {"runs", runs}, {"median_ms", st.median}, {"p99_ms", st.p99}, {"min_ms", st.min}, {"max_ms", st.max}};
}

// A compiled model: load (timed), then the same runs as for an ONNX file.
int run_compiled(const Options& o) {
  if (!o.dims.empty()) throw UsageError("--dim: a compiled model's shapes are fixed (sluice compile --dim)");
  // The device opened before the clock starts (an absent one is a usage error), so the load time is the
  // file's: reading, checking, uploading the weights and loading the kernels.
  const std::string device =
      o.device.empty() ? read_plan_file(o.model).target.device : select_devices(o.device).at(0);
  hcq::Device& dev = open_device(device);
  const uint64_t inv0 = dev.compiler().invocations(), hits0 = dev.compiler().cache_hits();
  auto t0 = Clock::now();
  onnx::CompiledModel m = onnx::CompiledModel::load(o.model, device);
  const double load_ms = ms_since(t0);

  std::map<std::string, Value> inputs;
  nlohmann::json in_j = nlohmann::json::array();
  std::vector<Tensor> ts = model_inputs(m.inputs(), o.inputs, {}, o.seed, m.device());
  for (size_t k = 0; k < ts.size(); ++k) {
    in_j.push_back(describe(m.inputs()[k].name, ts[k]));
    inputs[m.inputs()[k].name] = ts[k];
  }
  t0 = Clock::now();
  std::vector<Value> out = m.run(inputs);
  dev.synchronize();
  const double first_ms = ms_since(t0);
  nlohmann::json out_j = nlohmann::json::array();
  for (size_t k = 0; k < out.size(); ++k) {
    out_j.push_back(describe(m.outputs()[k].name, out[k].tensor()));
    if (!o.output_dir.empty()) write_output(o.output_dir, m.outputs()[k].name, out[k].tensor());
  }
  const Stats st = bench(o.bench, dev, [&] { m.run(inputs); });
  const uint64_t compiles = dev.compiler().invocations() - inv0,
                 cache_reads = dev.compiler().cache_hits() - hits0;

  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"compiled_model", true},
                        {"name", m.name()},
                        {"device", m.device()},
                        {"inputs", in_j},
                        {"outputs", out_j},
                        {"load_ms", load_ms},
                        {"first_run", {{"ms", first_ms}}},
                        {"compiler_runs", compiles},
                        {"compiler_cache_reads", cache_reads}};
    if (o.bench > 0) j["bench"] = bench_json(o.bench, st);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s on %s (compiled from %s)\n", o.model.c_str(), m.device().c_str(), m.name().c_str());
  for (const auto& v : in_j) print_value("input", v);
  for (const auto& v : out_j) print_value("output", v);
  std::printf("load %.1f ms (nothing imported or compiled: %llu compiler runs, %llu cache reads)\n", load_ms,
              (unsigned long long)compiles, (unsigned long long)cache_reads);
  std::printf("first run %.3f ms\n", first_ms);
  if (o.bench > 0)
    std::printf("bench %d runs: median %.3f ms, p99 %.3f ms (min %.3f, max %.3f)\n", o.bench, st.median,
                st.p99, st.min, st.max);
  return 0;
}

int list_ops(bool json) {
  if (json) {
    nlohmann::json ops = nlohmann::json::array();
    for (const onnx::OpDef* d : onnx::all_ops()) ops.push_back({{"op", d->name}, {"since", d->since}});
    std::cout << nlohmann::json{{"opsets", {onnx::kMinOpset, onnx::kMaxOpset}}, {"ops", ops}}.dump(2) << "\n";
    return 0;
  }
  std::printf(
      "ONNX default-domain ops sluice imports (opsets %d to %d); 'since' is the oldest opset whose form\n"
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
  if (is_plan_file(o.model)) return run_compiled(o);
  const std::string device = o.device.empty() ? default_device_name() : select_devices(o.device).at(0);
  open_device(device);  // opened (and every backend probed) before the clock starts: import times the file
  canonical_device(device);
  auto t0 = Clock::now();
  Model m = Model::load(o.model, {.device = device});
  const double import_ms = ms_since(t0);

  std::map<std::string, Value> inputs;
  nlohmann::json in_j = nlohmann::json::array();
  std::vector<Tensor> ts = model_inputs(m.inputs(), o.inputs, o.dims, o.seed, device);
  for (size_t k = 0; k < ts.size(); ++k) {
    in_j.push_back(describe(m.inputs()[k].name, ts[k]));
    inputs[m.inputs()[k].name] = ts[k];
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
    if (!o.output_dir.empty()) write_output(o.output_dir, name, out[k].tensor());
  }
  // The second run: what a steady-state run does (a replay, unless the graph is data-dependent).
  t0 = Clock::now();
  m.run(inputs);
  dev.synchronize();
  const double second_ms = ms_since(t0);
  const onnx::RunInfo second = m.last_run();

  const Stats st = bench(o.bench, dev, [&] { m.run(inputs); });

  if (o.json) {
    nlohmann::json j = {
        {"model", o.model},
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
        {"second_run", {{"ms", second_ms}, {"replayed", second.replayed}, {"kernels", second.kernels}}}};
    if (!second.replayed) j["second_run"]["not_replayed"] = second.not_captured;
    if (o.bench > 0) j["bench"] = bench_json(o.bench, st);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s on %s (opset %d)\n", o.model.c_str(), device.c_str(), m.opset());
  for (const auto& v : in_j) print_value("input", v);
  for (const auto& v : out_j) {
    if (v.contains("value"))
      std::printf("  output %-24s %s\n", std::string(v["name"]).c_str(), std::string(v["value"]).c_str());
    else
      print_value("output", v);
  }
  std::printf("import %.1f ms\n", import_ms);
  std::printf(
      "first run %.1f ms: build %.1f ms, schedule %.1f ms, codegen %.1f ms, compile %.1f ms; %zu kernels "
      "(%zu compiled)\n",
      first_ms, first.build_ms, first.schedule_ms, first.codegen_ms, first.compile_ms, first.kernels,
      first.compiled);
  if (second.replayed)
    std::printf("second run %.3f ms: replayed %zu kernels (nothing built, scheduled or compiled)\n",
                second_ms, second.kernels);
  else
    std::printf("second run %.3f ms: not replayed (%s)\n", second_ms, second.not_captured.c_str());
  if (o.bench > 0)
    std::printf("bench %d runs: median %.3f ms, p99 %.3f ms (min %.3f, max %.3f)\n", o.bench, st.median,
                st.p99, st.min, st.max);
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("run", "Run an ONNX or compiled model: outputs, timings");
  cmd->add_option("model", o.model, "The .onnx file, or a compiled model");
  cmd->add_option("--device", o.device, "Device to run on (default: the default device)");
  cmd->add_option("--input", o.inputs, "NAME=FILE.npy or NAME=random (repeatable)");
  cmd->add_option("--dim", o.dims, "SYMBOL=N: a symbolic size, for random inputs");
  cmd->add_option("--output-dir", o.output_dir, "Write each output to DIR/NAME.npy");
  cmd->add_option("--bench", o.bench, "Time N steady-state runs (median, p99)")->check(between(1, 1000000));
  cmd->add_option("--seed", o.seed, "Seed of the random inputs")->default_val(0);
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout");
  cmd->add_flag("--list-ops", o.list_ops, "Print the supported ONNX ops and opsets");
  add_beam_option(cmd);
  cmd->footer(
      "Examples:\n"
      "  sluice run model.onnx --device CPU\n"
      "  sluice run model.onnx --input x=image.npy --output-dir out/ --bench 100\n"
      "  sluice run model.onnx --dim batch=8 --json\n"
      "  sluice run model.sluice          (made by sluice compile)\n"
      "  sluice run model.onnx --beam 2   (tune: time kernels, cache the best)\n"
      "Inputs not given are random: floats in [0, 1), integers in [0, 10).\n"
      "Times: import parses and checks the file. The first run builds the\n"
      "Tensor graph, schedules, generates and compiles kernels (disk-cached)\n"
      "and runs them; the second, with the same input shapes, replays the\n"
      "captured kernels. --bench runs 3 warm-up runs first.\n"
      "Exit codes: 0 ok, 1 the model failed to load or run, 2 bad arguments.");
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
