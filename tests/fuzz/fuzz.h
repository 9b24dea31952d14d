#pragma once
// Fuzz targets: the parsers of files a user hands sluice. Each <target>.cpp here is one target and
// defines
//   - LLVMFuzzerTestOneInput, libFuzzer's entry point: parse the bytes; a sluice::Error is the expected
//     rejection of a malformed input (reject_errors); anything else (a crash, a sanitizer report, another
//     exception) is a finding;
//   - seeds(): valid inputs that mutations start from.
// mutate.cpp's seeded mutation loop is their main: CTest runs each target for a few thousand mutated
// inputs in every build (so scripts/sanitize.sh runs them under ASan and TSan too) and replays
// regressions/<target>/, the inputs that crashed it once. The entry point is libFuzzer's, so the same
// files link with `clang -fsanitize=fuzzer` for a coverage-guided campaign.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/error.h"

namespace sluice::fuzz {

using Bytes = std::vector<uint8_t>;

std::vector<Bytes> seeds();

// Inputs the target rejected with a sluice::Error, for the driver's summary.
inline long rejected = 0;

template <class F>
int reject_errors(F&& f) {
  try {
    f();
  } catch (const Error&) { ++rejected; }
  return 0;
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
