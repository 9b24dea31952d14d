#pragma once
// Voice activity detection with Silero VAD v5 on a sluice device: 16 kHz audio in 512-sample chunks, each
// run with the 64 samples before it as context and the recurrent state of the previous chunk, which stays
// on the device from call to call; out come a speech probability per chunk and the speech segments.
//
//   auto vad = sluice::vad::Silero::load("data/vad-web/dist/silero_vad_v5.onnx", "CPU");
//   std::vector<float> audio = read_mono("talk.wav", kRate);
//   for (auto [start, end] : Silero::segments(vad.probabilities(audio), audio.size())) ...  // samples
#include <string>
#include <utility>
#include <vector>

#include "frontend/onnx/model.h"

namespace sluice::vad {

inline constexpr int kRate = 16000, kChunk = 512, kContext = 64;

struct SegmentOptions {         // Silero's get_speech_timestamps defaults (no maximum segment length)
  float threshold = 0.5f;       // speech starts at this
  float neg_threshold = -1.0f;  // and ends below this; < 0: max(threshold - 0.15, 0.01), as Silero
  int min_speech_ms = 250, min_silence_ms = 100, speech_pad_ms = 30;
};

struct Segment {
  int64_t start = 0, end = 0;  // samples
};

class Silero {
 public:
  static Silero load(const std::string& model_path, const std::string& device);

  void reset();                    // a new stream: zero state and context
  float step(const float* chunk);  // kChunk samples
  // Every whole chunk of the audio (a last partial chunk is zero-padded), from a reset state.
  std::vector<float> probabilities(const std::vector<float>& audio);
  onnx::Model& model() { return model_; }

  static std::vector<Segment> segments(const std::vector<float>& probs, int64_t audio_samples,
                                       const SegmentOptions& o = {});

 private:
  Silero(onnx::Model m, std::string device);
  onnx::Model model_;
  std::string device_;
  Tensor state_, sr_;
  std::vector<float> context_;
};

}  // namespace sluice::vad
