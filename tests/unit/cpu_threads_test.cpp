// SLUICE_CPU_THREADS sizes the CPU device's kernel threads; a bad value is an error naming it. A kernel
// split between the threads finishes when one of them is held up: the others take over its parts.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "backends/cpu/device.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "hcq/device.h"
#include "hcq/queue.h"

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

// The call that starts the second core's share waits until every other work-group is done (or gives up
// after 3 s, and says so): with shares fixed per core that never happens, since the rest of that share
// waits behind it on the same thread.
constexpr const char* kHeldSource =
    "#include <time.h>\n"
    "void held(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores) {\n"
    "  (void)vars;\n"
    "  unsigned long n = (unsigned long)launch[0] * launch[1] * launch[2];\n"
    "  unsigned long b = n * core_id / n_cores, e = n * (core_id + 1) / n_cores;\n"
    "  int* done = (int*)bufs[0];\n"
    "  int* out = (int*)bufs[1];\n"
    "  if (b == n / 2) {\n"
    "    time_t give_up = time(0) + 3;\n"
    "    while (__atomic_load_n(done, __ATOMIC_ACQUIRE) < (int)(n - (e - b)))\n"
    "      if (time(0) > give_up) { done[1] = 1; break; }\n"
    "  }\n"
    "  for (unsigned long g = b; g < e; ++g) out[g] = (int)g * 3;\n"
    "  __atomic_fetch_add(done, (int)(e - b), __ATOMIC_RELEASE);\n"
    "}\n";

TEST(CpuThreads, ASplitKernelFinishesWhenOneThreadIsHeldUp) {
  auto dev = sluice::cpu::open_device(2);
  dev->set_hang_timeout(std::chrono::seconds(0));  // the held thread makes no progress for a while
  auto held = dev->load_program("held", dev->compiler().compile(kHeldSource), {2, 0});
  constexpr uint32_t kGroups = 300;
  int done[2] = {0, 0};  // work-groups done; whether the held call gave up
  int out[kGroups] = {};
  auto finished = dev->new_signal("held done");
  const auto t0 = std::chrono::steady_clock::now();
  sluice::hcq::HwQueue()
      .exec(*held, {{uint64_t(uintptr_t(done)), uint64_t(uintptr_t(out))}, {}}, {kGroups})
      .signal(*finished, 1)
      .submit(*dev);
  finished->wait(1);
  EXPECT_EQ(done[1], 0) << "the held call waited 3 s: no other thread ran the rest of its share";
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_EQ(done[0], int(kGroups));
  for (uint32_t g = 0; g < kGroups; ++g) ASSERT_EQ(out[g], int(g) * 3) << "work-group " << g;
}

}  // namespace
