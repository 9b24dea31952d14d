// SLUICE_CPU_THREADS sizes the CPU device's kernel threads; a bad value is an error naming it.
#include <cstdlib>
#include <string>

#include "backends/cpu/device.h"
#include "base/error.h"
#include "gtest/gtest.h"

namespace {

struct ThreadsEnv {
  explicit ThreadsEnv(const char* v) { setenv("SLUICE_CPU_THREADS", v, 1); }
  ~ThreadsEnv() { unsetenv("SLUICE_CPU_THREADS"); }
};

TEST(CpuThreads, TheEnvironmentSetsTheKernelThreads) {
  for (const char* n : {"1", "3"}) {
    ThreadsEnv env(n);
    EXPECT_EQ(sluice::cpu::open_device()->properties().device_name, std::string(n) + " host threads");
  }
}

TEST(CpuThreads, ABadCountIsAnErrorNamingTheVariable) {
  for (const char* bad : {"0", "-2", "two", "4x", "100000"}) {
    ThreadsEnv env(bad);
    try {
      sluice::cpu::open_device();
      ADD_FAILURE() << "SLUICE_CPU_THREADS=" << bad << " was accepted";
    } catch (const sluice::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("SLUICE_CPU_THREADS='" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
