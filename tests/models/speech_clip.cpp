#include "tests/models/speech_clip.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "models/vad/resample.h"
#include "models/vad/silero.h"
#include "models/vad/wav.h"

namespace sluice::vad::test {

std::string make_speech_clip(const std::string& path) {
  if (std::system("command -v espeak-ng >/dev/null 2>&1") != 0)
    return "espeak-ng is not installed (scripts/install-deps.sh installs it)";
  const std::string spoken = path + ".espeak" + std::to_string(::getpid()) + ".wav";
  const std::string cmd = "espeak-ng -w '" + spoken + "' '" + kSpeech + "' >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return "espeak-ng failed: " + cmd;
  Audio a = read_wav(spoken);
  std::filesystem::remove(spoken);
  if (a.channels != 1) return "espeak-ng wrote " + std::to_string(a.channels) + " channels, not 1";
  const std::vector<float> speech = resample(a.samples, a.sample_rate, kRate);
  std::vector<float> clip(size_t(kPadSeconds * kRate), 0.0f);
  clip.insert(clip.end(), speech.begin(), speech.end());
  clip.resize(clip.size() + size_t(kPadSeconds * kRate), 0.0f);
  write_wav(path, clip, kRate);
  return "";
}

}  // namespace sluice::vad::test
