#include "models/vad/silero.h"

#include <algorithm>
#include <filesystem>

#include "base/error.h"

namespace sluice::vad {

Silero::Silero(onnx::Model m, std::string device)
    : model_(std::move(m)),
      device_(std::move(device)),
      state_(Tensor::zeros({2, 1, 128}, dtypes::float32, device_)),
      sr_(Tensor::from(std::vector<int64_t>{kRate}, Shape{}, device_)),
      context_(kContext, 0.0f) {}

Silero Silero::load(const std::string& model_path, const std::string& device) {
  SLUICE_CHECK_IN(ValueError, "vad", std::filesystem::exists(model_path))
      << "model " << model_path << " is missing (scripts/fetch-models.sh fetches Silero VAD)";
  return Silero(onnx::Model::load(model_path, {.device = device}), device);
}

void Silero::reset() {
  state_ = Tensor::zeros({2, 1, 128}, dtypes::float32, device_);
  std::fill(context_.begin(), context_.end(), 0.0f);
}

float Silero::step(const float* chunk) {
  std::vector<float> x(kContext + kChunk);
  std::copy(context_.begin(), context_.end(), x.begin());
  std::copy(chunk, chunk + kChunk, x.begin() + kContext);
  std::copy(chunk + kChunk - kContext, chunk + kChunk, context_.begin());
  std::vector<onnx::Value> out = model_.run(
      {{"input", Tensor::from(x, {1, kContext + kChunk}, device_)}, {"state", state_}, {"sr", sr_}});
  state_ = out.at(1).tensor();  // stays on the device for the next chunk
  return out.at(0).tensor().to_vector<float>().at(0);
}

std::vector<float> Silero::probabilities(const std::vector<float>& audio) {
  reset();
  std::vector<float> probs;
  std::vector<float> chunk(kChunk);
  for (size_t at = 0; at < audio.size(); at += kChunk) {
    const size_t n = std::min<size_t>(kChunk, audio.size() - at);
    std::fill(chunk.begin(), chunk.end(), 0.0f);
    std::copy(audio.begin() + ptrdiff_t(at), audio.begin() + ptrdiff_t(at + n), chunk.begin());
    probs.push_back(step(chunk.data()));
  }
  return probs;
}

std::vector<Segment> Silero::segments(const std::vector<float>& probs, int64_t audio_samples,
                                      const SegmentOptions& o) {
  const int64_t min_speech = int64_t(kRate) * o.min_speech_ms / 1000,
                min_silence = int64_t(kRate) * o.min_silence_ms / 1000;
  const int64_t pad = int64_t(kRate) * o.speech_pad_ms / 1000;
  const float neg = o.neg_threshold >= 0 ? o.neg_threshold : std::max(o.threshold - 0.15f, 0.01f);
  std::vector<Segment> out;
  bool speaking = false;
  int64_t start = 0, silence_from = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    const int64_t at = int64_t(i) * kChunk;
    if (probs[i] >= o.threshold) {
      silence_from = 0;
      if (!speaking) speaking = true, start = at;
    } else if (speaking && probs[i] < neg) {
      if (!silence_from) silence_from = at;
      if (at - silence_from < min_silence) continue;
      if (silence_from - start > min_speech) out.push_back({start, silence_from});
      speaking = false, silence_from = 0;
    }
  }
  if (speaking && audio_samples - start > min_speech) out.push_back({start, audio_samples});
  // Padding; neighbours closer than twice it each move half the gap (floored, as Silero does).
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == 0) out[i].start = std::max<int64_t>(0, out[i].start - pad);
    const int64_t gap = i + 1 < out.size() ? out[i + 1].start - out[i].end : 2 * pad;
    const int64_t move = gap < 2 * pad ? gap / 2 : pad;
    out[i].end = std::min(audio_samples, out[i].end + move);
    if (i + 1 < out.size()) out[i + 1].start = std::max<int64_t>(0, out[i + 1].start - move);
  }
  return out;
}

}  // namespace sluice::vad
