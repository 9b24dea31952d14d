// `sluice vad FILE.wav`: voice activity detection with Silero VAD v5 (models/vad/silero.h) on a device:
// the speech segments of a 16 kHz mono WAV, and the time each 32 ms chunk took (the first builds, schedules
// and compiles; the rest replay its kernels with the state kept on the device).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "base/error.h"
#include "models/vad/silero.h"
#include "models/vad/wav.h"
#include "runtime/device.h"
#include "tools/sluice/cli.h"

namespace sluice::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string file, device, model;
  float threshold = 0.5f;
  bool json = false;
};

int run(const Options& o) {
  if (o.file.empty()) throw UsageError("give a WAV file: sluice vad FILE.wav");
  const std::string device = o.device.empty() ? default_device_name() : select_devices(o.device).at(0);
  std::vector<float> audio;
  try {
    audio = vad::read_mono(o.file, vad::kRate);
  } catch (const ValueError& e) { throw UsageError(e.what()); }
  const std::string model = o.model.empty() ? data_path("vad-web/dist/silero_vad_v5.onnx") : o.model;
  open_device(device);  // opened before the clock starts
  auto t0 = Clock::now();
  vad::Silero v = vad::Silero::load(model, device);
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

  // Chunk by chunk as Silero::probabilities does, timing each; a last partial chunk is zero-padded.
  std::vector<float> probs, chunk(vad::kChunk);
  std::vector<double> ms;
  v.reset();
  for (size_t at = 0; at < audio.size(); at += vad::kChunk) {
    const size_t n = std::min<size_t>(vad::kChunk, audio.size() - at);
    std::fill(chunk.begin(), chunk.end(), 0.0f);
    std::copy(audio.begin() + ptrdiff_t(at), audio.begin() + ptrdiff_t(at + n), chunk.begin());
    t0 = Clock::now();
    probs.push_back(v.step(chunk.data()));
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  const onnx::RunInfo& last = v.model().last_run();
  const std::vector<double> steady(ms.begin() + 1, ms.end());  // the first chunk builds and compiles
  const Stats st = stats_of(steady);
  double mean = 0;
  for (double x : steady) mean += x / double(steady.size());
  const std::vector<vad::Segment> segs =
      vad::Silero::segments(probs, int64_t(audio.size()), {.threshold = o.threshold});
  const double seconds = double(audio.size()) / vad::kRate;

  if (o.json) {
    nlohmann::json s = nlohmann::json::array();
    for (const vad::Segment& g : segs)
      s.push_back({{"start", double(g.start) / vad::kRate}, {"end", double(g.end) / vad::kRate}});
    nlohmann::json j = {
        {"file", o.file},
        {"device", device},
        {"model", model},
        {"seconds", seconds},
        {"threshold", o.threshold},
        {"segments", s},
        {"chunks", probs.size()},
        {"load_ms", load_ms},
        {"first_chunk_ms", ms.at(0)},
        {"chunk_ms", {{"mean", mean}, {"median", st.median}, {"p99", st.p99}, {"max", st.max}}},
        {"kernels_per_chunk", last.kernels},
        {"replayed", last.replayed}};
    if (!last.replayed) j["not_replayed"] = last.not_captured;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("%s: %.2f s on %s, threshold %.2f\n", o.file.c_str(), seconds, device.c_str(), o.threshold);
  if (segs.empty()) std::printf("no speech\n");
  for (const vad::Segment& g : segs)
    std::printf("  speech %8.3f s - %8.3f s\n", double(g.start) / vad::kRate, double(g.end) / vad::kRate);
  std::printf("%zu chunks of %d samples; load %.1f ms, first chunk %.1f ms", probs.size(), vad::kChunk,
              load_ms, ms.at(0));
  if (steady.empty())
    std::printf("\n");
  else
    std::printf("; then per chunk mean %.3f ms, median %.3f ms\n", mean, st.median);
  if (last.replayed)
    std::printf("each chunk replays %zu kernels\n", last.kernels);
  else
    std::printf("chunks are not replayed (%s)\n", last.not_captured.c_str());
  return 0;
}

}  // namespace

void add_vad_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("vad", "Speech segments of a WAV (Silero VAD v5)");
  cmd->add_option("file", o.file, "A 16 kHz mono WAV (16-bit PCM or 32-bit float)");
  cmd->add_option("--device", o.device, "Device to run on (default: the default device)");
  cmd->add_option("--threshold", o.threshold, "Speech starts at this probability")->check(between(0, 1));
  cmd->add_option("--model", o.model, "Silero VAD v5 .onnx (default: see below)");
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout");
  cmd->footer(
      "Examples:\n"
      "  sluice vad talk.wav --device CPU\n"
      "  sluice vad talk.wav --threshold 0.6 --json\n"
      "The model: --model, else $SLUICE_DATA/vad-web/dist/silero_vad_v5.onnx, else\n"
      "data/vad-web/dist/silero_vad_v5.onnx (scripts/fetch-models.sh fetches it).\n"
      "Segments follow Silero's get_speech_timestamps: 250 ms of speech at least,\n"
      "ended by 100 ms below threshold - 0.15, padded by 30 ms. Chunk times: the\n"
      "first builds and compiles (disk-cached); mean and median are over the rest.\n"
      "Exit codes: 0 ok, 1 the model failed to load or run, 2 bad arguments or\n"
      "a WAV that cannot be read or is not 16 kHz mono.");
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
