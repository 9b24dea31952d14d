#pragma once
// Band-limited resampling of mono audio (Blackman-windowed sinc), for clips whose rate is not the 16 kHz
// Silero reads: espeak-ng writes 22050 Hz. Downsampling low-passes at 95% of the new Nyquist frequency
// first, so nothing above it folds back into speech. Any two positive rates; the output has
// ceil(n * to / from) samples, sample k at time k / to.
// Failures: ValueError "[resample] ..." for a rate <= 0.
#include <vector>

namespace sluice::vad {

std::vector<float> resample(const std::vector<float>& samples, int from_rate, int to_rate);

}  // namespace sluice::vad
