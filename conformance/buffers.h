#pragma once
// Device buffers of int32 for the checks: made with contents, read back, and freed once the device is
// done with the submission that last used them.
#include <cstdint>
#include <vector>

#include "hcq/device.h"

namespace sluice::conformance {

inline hcq::Buffer ints(hcq::Device& d, uint32_t n, int value) {
  hcq::Buffer b = d.allocator().alloc(uint64_t(n) * sizeof(int));
  std::vector<int> v(n, value);
  d.allocator().copyin(b, v.data(), b.size);
  return b;
}
inline std::vector<int> read_ints(hcq::Device& d, const hcq::Buffer& b) {
  std::vector<int> v(b.size / sizeof(int));
  d.allocator().copyout(v.data(), b, b.size);
  return v;
}
inline void release(hcq::Device& d, hcq::Buffer& b, uint64_t last_use) {
  b.last_use = last_use;
  d.allocator().free(b);
}

}  // namespace sluice::conformance
