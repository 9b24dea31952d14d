// The CPU device's buffers: cache-line aligned, and one of 4 MB or more a mapping of its own, aligned to a
// huge page and advised to use huge pages (first touching it costs a fault per 2 MB, not per 4 KB).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/cpu/device.h"
#include "gtest/gtest.h"
#include "hcq/allocator.h"

namespace {

// The VmFlags line of the mapping in /proc/self/smaps that holds `addr` ("" if none does).
std::string vm_flags_of(uint64_t addr) {
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find('-')) {
      inside = addr >= lo && addr < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line + " ";
    }
  }
  return "";
}

TEST(CpuAllocator, ABufferOf4MbOrMoreIsAlignedToAHugePageAndAdvisedHuge) {
  auto dev = sluice::cpu::open_device();
  sluice::hcq::Allocator& a = dev->allocator();
  const sluice::hcq::Buffer big = a.alloc(5u << 20), mid = a.alloc(3u << 20), small = a.alloc(1000);
  EXPECT_EQ(big.addr % (2u << 20), 0u);
  EXPECT_EQ(small.addr % 64, 0u);
  EXPECT_EQ(mid.addr % 64, 0u);
  std::vector<float> in(big.size / 4), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 977);
  a.copyin(big, in.data(), big.size);
  a.copyout(out.data(), big, big.size);
  EXPECT_EQ(in, out);
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  EXPECT_NE(vm_flags_of(big.addr).find(" hg "), std::string::npos) << vm_flags_of(big.addr);
  EXPECT_EQ(vm_flags_of(mid.addr).find(" hg "), std::string::npos) << "under 4 MB: " << vm_flags_of(mid.addr);
  a.free(big);
  a.free(mid);
  a.free(small);
}

}  // namespace
