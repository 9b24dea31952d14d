// `sluice compile MODEL.onnx --device D -o FILE`: imports the model, runs it once on inputs of the shapes
// to compile for (from .npy files, or random of the declared types with --dim for symbolic sizes), and
// saves the captured plan as a compiled model (Model::save, runtime/saved_plan.h) that `sluice run FILE`
// and onnx::CompiledModel run later without importing or compiling.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "frontend/onnx/model.h"
#include "runtime/device.h"
#include "tools/sluice/cli.h"
#include "tools/sluice/model_inputs.h"

namespace sluice::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Options {
  std::string model, device, output;
  std::vector<std::string> inputs, dims;
  uint64_t seed = 0;
  bool json = false;
};

int compile(const Options& o) {
  const std::string device = o.device.empty() ? default_device_name() : select_devices(o.device).at(0);
  open_device(device);
  auto t0 = Clock::now();
  onnx::Model m = onnx::Model::load(o.model, {.device = device});
  const double import_ms = ms_since(t0);
  std::map<std::string, onnx::Value> inputs;
  std::vector<Tensor> ts = model_inputs(m.inputs(), o.inputs, o.dims, o.seed, device);
  nlohmann::json shapes = nlohmann::json::object();
  for (size_t k = 0; k < ts.size(); ++k) {
    inputs[m.inputs()[k].name] = ts[k];
    shapes[m.inputs()[k].name] = ts[k].shape();
  }
  t0 = Clock::now();
  m.run(inputs);
  open_device(device).synchronize();
  const double run_ms = ms_since(t0);
  const onnx::RunInfo info = m.last_run();
  t0 = Clock::now();
  m.save(o.output);
  const double save_ms = ms_since(t0);
  const uintmax_t bytes = std::filesystem::file_size(o.output);

  if (o.json) {
    std::cout << nlohmann::json{{"model", o.model},       {"device", device}, {"output", o.output},
                                {"bytes", bytes},         {"inputs", shapes}, {"kernels", info.kernels},
                                {"import_ms", import_ms}, {"run_ms", run_ms}, {"compile_ms", info.compile_ms},
                                {"save_ms", save_ms}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::printf("%s for %s: %zu kernels; import %.1f ms, first run %.1f ms (compile %.1f ms)\n",
              o.model.c_str(), device.c_str(), info.kernels, import_ms, run_ms, info.compile_ms);
  for (const auto& [name, shape] : shapes.items())
    std::printf("  input  %-24s %s\n", name.c_str(), shape.dump().c_str());
  std::printf("wrote %s (%s) in %.1f ms\n", o.output.c_str(), format_bytes(bytes).c_str(), save_ms);
  return 0;
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model for a device into a file");
  cmd->add_option("model", o.model, "The .onnx file")->required();
  cmd->add_option("-o,--output", o.output, "The compiled model to write")->required();
  cmd->add_option("--device", o.device, "Device to compile for (default: the default one)");
  cmd->add_option("--input", o.inputs, "NAME=FILE.npy or NAME=random (repeatable)");
  cmd->add_option("--dim", o.dims, "SYMBOL=N: a symbolic size, for random inputs");
  cmd->add_option("--seed", o.seed, "Seed of the random inputs")->default_val(0);
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout");
  add_beam_option(cmd);
  cmd->footer(
      "Examples:\n"
      "  sluice compile cls.onnx --device VULKAN --dim batch=1 -o cls.sluice\n"
      "  sluice compile model.onnx --input x=image.npy -o model.sluice\n"
      "  sluice compile model.onnx --beam 2 -o model.sluice  (BEAM-tuned kernels)\n"
      "  sluice run cls.sluice\n"
      "The model runs once on the inputs (random ones unless given) and the\n"
      "file holds what ran: the kernels' binaries, the launch plan, the\n"
      "buffers and the weights, for those input shapes. It runs on the device\n"
      "kind, hardware and driver it was compiled for, with this sluice version.\n"
      "Exit codes: 0 ok, 1 the model failed to load, run or save, 2 bad\n"
      "arguments.");
  cmd->callback([&exit_code] { exit_code = compile(o); });
}

}  // namespace sluice::cli
