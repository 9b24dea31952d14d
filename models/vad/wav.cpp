#include "models/vad/wav.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/error.h"

namespace sluice::vad {
namespace {

uint32_t u32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
}
uint16_t u16(const std::vector<uint8_t>& b, size_t at) { return uint16_t(b[at] | b[at + 1] << 8); }

}  // namespace

Audio read_wav(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SLUICE_CHECK_IN(ValueError, "wav", in) << path << ": cannot be opened";
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SLUICE_CHECK_IN(ValueError, "wav", !b.empty()) << path << ": the file is empty (0 bytes)";
  SLUICE_CHECK_IN(
      ValueError, "wav",
      b.size() >= 12 && std::memcmp(b.data(), "RIFF", 4) == 0 && std::memcmp(b.data() + 8, "WAVE", 4) == 0)
      << path << ": not a WAV file (" << b.size() << " bytes, no RIFF/WAVE header)";
  Audio a;
  int format = 0, bits = 0;
  bool have_fmt = false;
  for (size_t at = 12; at + 8 <= b.size();) {
    const std::string id(reinterpret_cast<const char*>(&b[at]), 4);
    const uint32_t size = u32(b, at + 4);
    const size_t body = at + 8, left = b.size() - body;
    // Writers streaming to a pipe cannot know the length and declare 0xffffffff: samples run to the end.
    const bool to_end = id == "data" && size == 0xffffffffu;
    SLUICE_CHECK_IN(ValueError, "wav", size <= left || to_end)
        << path << ": truncated: chunk '" << id << "' declares " << size << " bytes, the file holds " << left
        << " after its header";
    if (id == "fmt ") {
      SLUICE_CHECK_IN(ValueError, "wav", size >= 16)
          << path << ": the fmt chunk is " << size << " bytes, not 16 or more";
      format = u16(b, body);
      a.channels = u16(b, body + 2);
      a.sample_rate = int(u32(b, body + 4));
      bits = u16(b, body + 14);
      if (format == 0xfffe && size >= 26)
        format = u16(b, body + 24);  // WAVE_FORMAT_EXTENSIBLE: its subformat
      SLUICE_CHECK_IN(ValueError, "wav", a.channels > 0 && a.sample_rate > 0)
          << path << ": the fmt chunk says " << a.channels << " channel(s) at " << a.sample_rate << " Hz";
      have_fmt = true;
    } else if (id == "data") {
      SLUICE_CHECK_IN(ValueError, "wav", have_fmt) << path << ": data before the fmt chunk";
      SLUICE_CHECK_IN(ValueError, "wav", (format == 1 && bits == 16) || (format == 3 && bits == 32))
          << path << ": samples are format " << format << " with " << bits
          << " bits; read are 16-bit PCM (format 1) and 32-bit float (format 3)";
      const size_t n = to_end ? left : size, frame = size_t(a.channels) * size_t(bits / 8);
      SLUICE_CHECK_IN(ValueError, "wav", n % frame == 0)
          << path << ": truncated: " << n << " bytes of samples is not a whole number of " << frame
          << "-byte frames (" << a.channels << " channel(s) of " << bits << " bits)";
      a.samples.resize(n / size_t(bits / 8));
      for (size_t k = 0; k < a.samples.size(); ++k) {
        if (format == 1) {
          a.samples[k] = float(int16_t(u16(b, body + 2 * k))) / 32768.0f;
        } else {
          const uint32_t w = u32(b, body + 4 * k);
          std::memcpy(&a.samples[k], &w, 4);
        }
      }
      return a;
    }
    at = body + size + (size & 1);
  }
  SLUICE_FAIL(ValueError, "wav") << path << ": truncated or not audio: no data chunk in its " << b.size()
                                 << " bytes" << (have_fmt ? "" : " (and no fmt chunk)");
}

std::vector<float> read_mono(const std::string& path, int rate) {
  Audio a = read_wav(path);
  SLUICE_CHECK_IN(ValueError, "wav", a.channels == 1 && a.sample_rate == rate)
      << path << ": " << a.channels << " channel(s) at " << a.sample_rate
      << " Hz; voice activity detection needs mono at " << rate << " Hz (resample it first, e.g. sox IN -r "
      << rate << " -c 1 OUT)";
  SLUICE_CHECK_IN(ValueError, "wav", !a.samples.empty()) << path << ": holds no samples";
  return std::move(a.samples);
}

void write_wav(const std::string& path, const std::vector<float>& samples, int rate) {
  std::vector<uint8_t> b;
  auto put32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
  };
  auto put16 = [&](uint16_t v) { b.push_back(uint8_t(v)), b.push_back(uint8_t(v >> 8)); };
  const uint32_t data = uint32_t(samples.size() * 2);
  b.insert(b.end(), {'R', 'I', 'F', 'F'});
  put32(36 + data);
  b.insert(b.end(), {'W', 'A', 'V', 'E', 'f', 'm', 't', ' '});
  put32(16), put16(1), put16(1), put32(uint32_t(rate)), put32(uint32_t(rate) * 2), put16(2), put16(16);
  b.insert(b.end(), {'d', 'a', 't', 'a'});
  put32(data);
  // The scale read_wav divides by, so a sample reads back within half a step.
  for (float s : samples)
    put16(uint16_t(int16_t(std::clamp(std::lround(double(s) * 32768.0), -32768L, 32767L))));
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    SLUICE_CHECK_IN(ValueError, "wav", out.good()) << tmp << ": write failed";
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace sluice::vad
