// Silero VAD v5 end to end (#14): a clip espeak-ng speaks (speech_clip.h) runs chunk by chunk on every
// device; each chunk's speech probability must be within 1e-3 of ONNX Runtime's (tests/models/ort_vad.js,
// run on the same samples) and the speech segments the same. Also: the segments against hand-worked
// probabilities, and the WAV reader's errors on bad files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "models/vad/resample.h"
#include "models/vad/silero.h"
#include "models/vad/wav.h"
#include "runtime/device.h"
#include "runtime/npy.h"
#include "tests/models/speech_clip.h"

namespace sluice::vad {
namespace {

namespace fs = std::filesystem;

fs::path data_dir() {
  const char* env = std::getenv("SLUICE_DATA");
  return env && *env ? fs::path(env) : fs::path(SLUICE_SOURCE_DIR) / "data";
}
fs::path model_path() { return data_dir() / "vad-web" / "dist" / "silero_vad_v5.onnx"; }
// A folder of this process's files, removed at exit.
fs::path scratch() {
  static const struct Dir {
    fs::path path = fs::temp_directory_path() / ("sluice_vad_test_" + std::to_string(::getpid()));
    ~Dir() { fs::remove_all(path); }
  } dir;
  fs::create_directories(dir.path);
  return dir.path;
}

// The clip and ONNX Runtime's probabilities for it, made once; `skip` says why not when they could not be.
struct Reference {
  std::vector<float> audio;  // as read back from the 16-bit WAV: what both runtimes see
  std::vector<float> probs;
  std::string skip;
};

const Reference& reference() {
  static const Reference r = [] {
    Reference r;
    if (!fs::exists(model_path()))
      return r.skip = model_path().string() + " is missing (scripts/fetch-models.sh fetches it)", r;
    if (std::system("command -v node >/dev/null 2>&1") != 0) return r.skip = "node is not installed", r;
    if (!fs::exists(data_dir() / "node_modules" / "onnxruntime-node"))
      return r.skip = "onnxruntime-node is missing under data/ (scripts/fetch-models.sh fetches it)", r;
    const fs::path wav = scratch() / "speech.wav";
    if (r.skip = test::make_speech_clip(wav.string()); !r.skip.empty()) return r;
    r.audio = read_mono(wav.string(), kRate);
    const std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(r.audio.data()),
                                       reinterpret_cast<const std::byte*>(r.audio.data() + r.audio.size()));
    write_npy((scratch() / "speech.npy").string(), dtypes::float32, {int64_t(r.audio.size())}, bytes);
    const std::string cmd = "SLUICE_DATA='" + data_dir().string() + "' node '" + SLUICE_SOURCE_DIR +
                            "/tests/models/ort_vad.js' '" + model_path().string() + "' '" +
                            (scratch() / "speech.npy").string() + "' '" + (scratch() / "ort.json").string() +
                            "'";
    if (std::system(cmd.c_str()) != 0) return r.skip = "ONNX Runtime failed: " + cmd, r;
    std::ifstream in(scratch() / "ort.json");
    r.probs = nlohmann::json::parse(in).at("probabilities").get<std::vector<float>>();
    return r;
  }();
  return r;
}

std::string seconds(const std::vector<Segment>& segs) {
  std::string s;
  for (const Segment& g : segs)
    s += "[" + std::to_string(double(g.start) / kRate) + ", " + std::to_string(double(g.end) / kRate) + "] ";
  return s;
}

class VadDevices : public testing::TestWithParam<std::string> {};

TEST_P(VadDevices, ProbabilitiesAndSegmentsMatchOnnxRuntime) {
  const std::string dev = GetParam();
  const Reference& ref = reference();
  if (!ref.skip.empty()) GTEST_SKIP() << ref.skip;
  try {
    open_device(dev);
  } catch (const std::exception& e) { GTEST_SKIP() << dev << " is absent: " << e.what(); }
  Silero vad = Silero::load(model_path().string(), dev);
  const std::vector<float> probs = vad.probabilities(ref.audio);
  // Every chunk after the first replays the captured kernels, with the state fed back on the device.
  EXPECT_TRUE(vad.model().last_run().replayed) << vad.model().last_run().not_captured;
  ASSERT_EQ(probs.size(), ref.probs.size());
  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    const double d = std::fabs(double(probs[i]) - double(ref.probs[i]));
    if (!(d <= worst)) worst = d, worst_at = i;  // NaN counts as the worst
  }
  EXPECT_LE(worst, 1e-3) << dev << ": chunk " << worst_at << " of " << probs.size() << ": " << probs[worst_at]
                         << " vs ONNX Runtime's " << ref.probs[worst_at];
  const std::vector<Segment> segs = Silero::segments(probs, int64_t(ref.audio.size()));
  const std::vector<Segment> ort = Silero::segments(ref.probs, int64_t(ref.audio.size()));
  EXPECT_EQ(seconds(segs), seconds(ort));
  // The speech is where the clip put it: nothing in the padding of silence (less Silero's 30 ms of pad and
  // a chunk), something at all.
  ASSERT_FALSE(segs.empty()) << dev << ": no speech found";
  const int64_t margin = kRate * 30 / 1000 + kChunk;
  EXPECT_GE(segs.front().start, int64_t(test::kPadSeconds * kRate) - margin) << seconds(segs);
  EXPECT_LE(segs.back().end, int64_t(ref.audio.size()) - int64_t(test::kPadSeconds * kRate) + margin)
      << seconds(segs);
  std::printf("%s: %zu chunks, max |p - p_ort| = %.3g, segments (s): %s\n", dev.c_str(), probs.size(), worst,
              seconds(segs).c_str());
}

TEST_P(VadDevices, ANewStreamStartsFromAZeroState) {
  const std::string dev = GetParam();
  const Reference& ref = reference();
  if (!ref.skip.empty()) GTEST_SKIP() << ref.skip;
  try {
    open_device(dev);
  } catch (const std::exception& e) { GTEST_SKIP() << dev << " is absent: " << e.what(); }
  Silero vad = Silero::load(model_path().string(), dev);
  const std::vector<float> part(ref.audio.begin(), ref.audio.begin() + 40 * kChunk);
  const std::vector<float> first = vad.probabilities(part);
  EXPECT_EQ(vad.probabilities(part), first);  // reset between: same state, same answers
  for (size_t i = 0; i < first.size(); ++i) EXPECT_NEAR(first[i], ref.probs[i], 1e-3) << "chunk " << i;
}

INSTANTIATE_TEST_SUITE_P(Devices, VadDevices, testing::Values("CPU", "VULKAN", "CL"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

// ---- speech segments, on probabilities worked by hand through Silero's get_speech_timestamps

// One probability per chunk: '#' 0.9 (speech), '-' 0.4 (between the thresholds), '.' 0.1 (silence).
std::vector<float> chunks(const std::string& s) {
  std::vector<float> p;
  for (char c : s) p.push_back(c == '#' ? 0.9f : c == '-' ? 0.4f : 0.1f);
  return p;
}

TEST(VadSegments, FollowSileroTimestamps) {
  const int64_t c = kChunk, pad = 480;  // 30 ms
  // Speech from chunk 2 to the first silent chunk, 12; 4 chunks more of silence (2048 samples >= 1600) end
  // it.
  std::vector<Segment> s = Silero::segments(chunks("..##########......"), 18 * c);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].start, 2 * c - pad);
  EXPECT_EQ(s[0].end, 12 * c + pad);
  // Chunks between the thresholds neither start nor end speech; silence shorter than 100 ms (3 chunks,
  // 1536 samples < 1600) does not end it.
  s = Silero::segments(chunks("..--#####-...####.....----"), 26 * c);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].start, 4 * c - pad);
  EXPECT_EQ(s[0].end, 17 * c + pad);
  // Too short (7 chunks = 3584 samples, not > 4000) is dropped; speech to the end ends at the end.
  s = Silero::segments(chunks("#######.......#########"), 23 * c - 100);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].start, 14 * c - pad);
  EXPECT_EQ(s[0].end, 23 * c - 100);
  // Two segments 5 chunks apart: each padded by 30 ms. A higher threshold ends speech below 0.75.
  s = Silero::segments(chunks("#########.....##########"), 24 * c);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].start, 0);
  EXPECT_EQ(s[0].end, 9 * c + pad);
  EXPECT_EQ(s[1].start, 14 * c - pad);
  EXPECT_TRUE(Silero::segments(chunks("#########"), 9 * c, {.threshold = 0.95f}).empty());
}

TEST(VadSegments, CloseNeighboursShareTheGap) {
  // 5 silent chunks end speech (100 ms is 3.1 chunks); their 2560 samples are less than 2 pads of 100 ms,
  // so each side moves half the gap into it instead of a pad.
  std::vector<float> p = chunks(std::string(10, '#') + std::string(5, '.') + std::string(10, '#'));
  std::vector<Segment> s = Silero::segments(p, 25 * kChunk, {.speech_pad_ms = 100});
  ASSERT_EQ(s.size(), 2u);
  const int64_t gap = 15 * kChunk - 10 * kChunk;
  EXPECT_EQ(s[0].start, 0);
  EXPECT_EQ(s[0].end, 10 * kChunk + gap / 2);
  EXPECT_EQ(s[1].start, 15 * kChunk - gap / 2);
  EXPECT_EQ(s[1].end, 25 * kChunk);
}

// ---- resampling

TEST(VadResample, KeepsATonesFrequencyAndLevel) {
  // 440 Hz at 22050 Hz to 16000 Hz: the output is the same sine at the new rate (away from the edges).
  std::vector<float> in(22050);
  for (size_t k = 0; k < in.size(); ++k) in[k] = 0.5f * float(std::sin(2 * M_PI * 440 * double(k) / 22050));
  const std::vector<float> out = resample(in, 22050, 16000);
  ASSERT_EQ(out.size(), 16000u);
  double worst = 0;
  for (size_t k = 400; k + 400 < out.size(); ++k)
    worst = std::max(worst, std::fabs(out[k] - 0.5 * std::sin(2 * M_PI * 440 * double(k) / 16000)));
  EXPECT_LT(worst, 1e-3);
  // Above the new Nyquist frequency (9 kHz > 8 kHz) is removed, not folded back to 7 kHz.
  for (size_t k = 0; k < in.size(); ++k) in[k] = 0.5f * float(std::sin(2 * M_PI * 9000 * double(k) / 22050));
  double peak = 0;
  const std::vector<float> folded = resample(in, 22050, 16000);
  for (size_t k = 400; k + 400 < folded.size(); ++k) peak = std::max(peak, std::fabs(double(folded[k])));
  EXPECT_LT(peak, 0.5 * 1e-3);
  EXPECT_THROW(resample(in, 0, 16000), ValueError);
}

// ---- bad WAV files: each a ValueError naming the file and what is wrong

// A WAV file's bytes: a RIFF header, a fmt chunk and a data chunk of `frames` zero frames.
std::string wav_bytes(int channels, int rate, int frames, int format = 1, int bits = 16) {
  std::string b;
  auto put32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char(v >> (8 * i)));
  };
  auto put16 = [&](uint16_t v) { b.push_back(char(v)), b.push_back(char(v >> 8)); };
  const uint32_t data = uint32_t(frames * channels * bits / 8);
  b += "RIFF";
  put32(36 + data);
  b += "WAVEfmt ";
  put32(16), put16(uint16_t(format)), put16(uint16_t(channels)), put32(uint32_t(rate));
  put32(uint32_t(rate * channels * bits / 8)), put16(uint16_t(channels * bits / 8)), put16(uint16_t(bits));
  b += "data";
  put32(data);
  b.append(data, '\0');
  return b;
}

// The message read_mono(file with `bytes`) throws as ValueError; fails the test if it does not.
std::string wav_error(const std::string& bytes, const std::string& name) {
  const fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  try {
    read_mono(p.string(), kRate);
  } catch (const ValueError& e) {
    fs::remove(p);
    const std::string m = e.what();
    EXPECT_NE(m.find("[wav] " + p.string() + ": "), std::string::npos) << m;
    return m;
  }
  fs::remove(p);
  ADD_FAILURE() << name << ": read without an error";
  return "";
}

bool has(const std::string& message, const std::string& part) {
  return message.find(part) != std::string::npos;
}

TEST(VadWav, WrongRateOrChannelsNamesTheValues) {
  std::string m = wav_error(wav_bytes(1, 22050, 100), "rate.wav");
  EXPECT_TRUE(has(m, "1 channel(s) at 22050 Hz; voice activity detection needs mono at 16000 Hz")) << m;
  m = wav_error(wav_bytes(2, 16000, 100), "stereo.wav");
  EXPECT_TRUE(has(m, "2 channel(s) at 16000 Hz; voice activity detection needs mono at 16000 Hz")) << m;
  m = wav_error(wav_bytes(1, 16000, 10, 1, 8), "8bit.wav");
  EXPECT_TRUE(has(m, "samples are format 1 with 8 bits")) << m;
}

TEST(VadWav, TruncatedFilesSayWhere) {
  const std::string whole = wav_bytes(1, 16000, 1000);  // 44 bytes of headers, then 2000 of samples
  std::string m = wav_error(whole.substr(0, 44 + 500), "cut_data.wav");
  EXPECT_TRUE(has(m, "truncated: chunk 'data' declares 2000 bytes, the file holds 500 after its header"))
      << m;
  m = wav_error(whole.substr(0, 30), "cut_fmt.wav");
  EXPECT_TRUE(has(m, "truncated: chunk 'fmt ' declares 16 bytes, the file holds 10 after its header")) << m;
  m = wav_error(whole.substr(0, 40), "cut_header.wav");
  EXPECT_TRUE(has(m, "truncated or not audio: no data chunk in its 40 bytes")) << m;
  std::string half = wav_bytes(1, 16000, 2);  // a data chunk of 3 bytes: one and a half samples
  half[40] = 3, half.pop_back();
  m = wav_error(half, "half_sample.wav");
  EXPECT_TRUE(has(m, "truncated: 3 bytes of samples is not a whole number of 2-byte frames")) << m;
}

TEST(VadWav, NotAWavEmptyOrMissing) {
  std::string m = wav_error("hello, not audio", "text.wav");
  EXPECT_TRUE(has(m, "not a WAV file (16 bytes, no RIFF/WAVE header)")) << m;
  m = wav_error("", "empty.wav");
  EXPECT_TRUE(has(m, "the file is empty (0 bytes)")) << m;
  m = wav_error(wav_bytes(1, 16000, 0), "no_samples.wav");
  EXPECT_TRUE(has(m, "holds no samples")) << m;
  EXPECT_THROW(read_mono((scratch() / "nonexistent.wav").string(), kRate), ValueError);
}

TEST(VadWav, AStreamedLengthReadsToTheEnd) {
  std::string b = wav_bytes(1, 16000, 100);
  for (int i = 40; i < 44; ++i)
    b[size_t(i)] = char(0xff);  // data size 0xffffffff, as a pipe writer leaves it
  const fs::path p = scratch() / "streamed.wav";
  std::ofstream(p, std::ios::binary) << b;
  EXPECT_EQ(read_mono(p.string(), kRate).size(), 100u);
  fs::remove(p);
}

TEST(VadWav, WritesWhatItReads) {
  std::vector<float> x(1000);
  for (size_t k = 0; k < x.size(); ++k) x[k] = float(std::sin(double(k) * 0.05)) * 0.8f;
  const fs::path p = scratch() / "round.wav";
  write_wav(p.string(), x, kRate);
  const std::vector<float> y = read_mono(p.string(), kRate);
  ASSERT_EQ(y.size(), x.size());
  for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(y[k], x[k], 1.0 / 32768 + 1e-6) << k;
  fs::remove(p);
}

}  // namespace
}  // namespace sluice::vad
