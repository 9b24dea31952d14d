// Fuzz target: .npy files (runtime/npy.h), the arrays `sluice run` and the model tests read.
#include <cstring>
#include <span>
#include <string>

#include "runtime/npy.h"
#include "tests/fuzz/fuzz.h"

namespace sluice::fuzz {
namespace {

// A file of format `major` (1: 2-byte header length; 2, 3: 4-byte) with this dictionary and payload.
Bytes npy(int major, const std::string& dict, size_t payload) {
  const size_t len_bytes = major == 1 ? 2 : 4, fixed = 8 + len_bytes;
  std::string h = dict;
  while ((fixed + h.size() + 1) % 64) h += ' ';
  h += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  for (size_t i = 0; i < len_bytes; ++i) b.push_back(uint8_t(h.size() >> (8 * i)));
  b.insert(b.end(), h.begin(), h.end());
  for (size_t i = 0; i < payload; ++i) b.push_back(uint8_t(i * 37 + 11));
  return b;
}

}  // namespace

std::vector<Bytes> seeds() {
  return {
      npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24),
      npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", 40),
      npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3, 1, 2), }", 6),
      npy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 1),
      npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 3), }", 0),
      npy(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }", 16),
      npy(3, "{'descr': '<u4', 'fortran_order': False, 'shape': (4,), }", 16),
  };
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::reject_errors(
      [&] { sluice::parse_npy(std::as_bytes(std::span(data, size)), "fuzz.npy"); });
}
