#pragma once
// WAV files for voice activity detection: RIFF/WAVE with PCM 16-bit or IEEE float 32-bit samples, read
// as floats in [-1, 1], with the sample rate and channel count checked against what the caller needs.
// A data chunk that declares 0xffffffff bytes (a writer streaming to a pipe) runs to the end of the file.
// Failures: ValueError "[wav] FILE: ..." naming what is wrong and the values: a missing or empty file, no
// RIFF/WAVE header, a chunk that runs past the end or samples that are not whole frames (truncated), no
// data chunk, a sample format other than the two read.
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::vad {

struct Audio {
  int sample_rate = 0, channels = 0;
  std::vector<float> samples;  // interleaved when channels > 1
};

Audio read_wav(const std::string& path);
// read_wav, then checked: mono at `rate` Hz and at least one sample, else a ValueError that says what the
// file is.
std::vector<float> read_mono(const std::string& path, int rate);
// 16-bit PCM, written atomically (tests make their clips with it).
void write_wav(const std::string& path, const std::vector<float>& samples, int rate);

}  // namespace sluice::vad
