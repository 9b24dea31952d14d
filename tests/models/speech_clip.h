#pragma once
// A clip of speech for the voice activity tests: Debian's espeak-ng speaks kSpeech (at its 22050 Hz), the
// samples are resampled to 16 kHz (models/vad/resample.h) and padded with a second of silence on each side,
// and written as a 16-bit PCM WAV. Knowing where the silence is gives the tests an answer of their own.
#include <string>

namespace sluice::vad::test {

inline constexpr const char* kSpeech =
    "The quick brown fox jumps over the lazy dog. Voice activity detection finds the speech in a recording.";
inline constexpr double kPadSeconds = 1.0;

// Writes the clip to `path`. Returns "" when it did, else why not (espeak-ng missing or failing), for a
// GTEST_SKIP message.
std::string make_speech_clip(const std::string& path);

}  // namespace sluice::vad::test
