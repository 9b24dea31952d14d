// A slow kernel is not a stuck one (#21 item 2): waits without a timeout keep waiting while a CPU kernel
// completes parts of its grid, however long past the hang timeout it runs, and declare a kernel hung once
// it stops for that long; SLUICE_HANG_TIMEOUT and sluice::set_hang_timeout set the limit.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/device.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "hcq/error.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

using namespace std::chrono_literals;
using namespace sluice;
using Clock = std::chrono::steady_clock;

namespace {

// Sets SLUICE_HANG_TIMEOUT (nullptr: unsets it) and restores what the environment had, which the
// sanitizer presets set.
struct HangEnv {
  explicit HangEnv(const char* v) {
    if (const char* was = std::getenv("SLUICE_HANG_TIMEOUT")) before = was;
    v ? setenv("SLUICE_HANG_TIMEOUT", v, 1) : unsetenv("SLUICE_HANG_TIMEOUT");
  }
  ~HangEnv() { before ? setenv("SLUICE_HANG_TIMEOUT", before->c_str(), 1) : unsetenv("SLUICE_HANG_TIMEOUT"); }
  std::optional<std::string> before;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Work-group g returns once the host's counter passes g, so the host paces the kernel: it progresses one
// work-group per tick, for as long as the host ticks. A stuck kernel is the same kernel never ticked.
constexpr const char* kPacedSource =
    "void paced(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores) {\n"
    "  (void)vars;\n"
    "  unsigned long n = (unsigned long)launch[0] * launch[1] * launch[2];\n"
    "  volatile const int* ticks = (volatile const int*)bufs[0];\n"
    "  int* out = (int*)bufs[1];\n"
    "  for (unsigned long g = n * core_id / n_cores; g < n * (core_id + 1) / n_cores; ++g) {\n"
    "    while (*ticks <= (int)g) {}\n"
    "    out[g] = (int)g * 3;\n"
    "  }\n"
    "}\n";

constexpr uint32_t kGroups = 300;

// What a paced kernel reads and writes: its counter and its output. Host memory is device memory on the
// CPU, and this lives for the whole process: the threads of an abandoned kernel use it after the test is
// over (released, they finish the kernel). A deque never moves its elements.
struct Pace {
  std::atomic<int> ticks{0};
  int out[kGroups] = {};
};
Pace& new_pace() {
  static auto* all = new std::deque<Pace>();
  return all->emplace_back();
}

// Submits the paced kernel over kGroups work-groups; returns the signal it sets when done.
std::unique_ptr<hcq::Signal> submit(hcq::Device& dev, const hcq::Program& paced, Pace& p) {
  auto done = dev.new_signal("paced done");
  hcq::HwQueue()
      .exec(paced, {{uint64_t(uintptr_t(&p.ticks)), uint64_t(uintptr_t(p.out))}, {}}, {kGroups})
      .signal(*done, 1)
      .submit(dev);
  return done;
}

std::unique_ptr<hcq::Program> load_paced(hcq::Device& dev) {
  return dev.load_program("paced", dev.compiler().compile(kPacedSource), {2, 0});
}

}  // namespace

TEST(HangTimeout, TheEnvironmentSetsIt) {
  {
    HangEnv unset(nullptr);
    EXPECT_EQ(cpu::open_device(3)->hang_timeout(), 10s) << "the default";
  }
  const std::pair<const char*, std::chrono::nanoseconds> cases[] = {
      {"0.25", 250ms}, {"3", 3s}, {"0", hcq::kNoHangTimeout}, {"off", hcq::kNoHangTimeout}};
  for (const auto& [v, want] : cases) {
    HangEnv env(v);
    EXPECT_EQ(cpu::open_device(3)->hang_timeout(), want) << "SLUICE_HANG_TIMEOUT=" << v;
  }
}

TEST(HangTimeout, ABadValueIsAnErrorNamingTheVariableAndTheValue) {
  for (const char* bad : {"abc", "-1", "10s", "nan", "inf", "1e300"}) {
    HangEnv env(bad);
    try {
      cpu::open_device(3);
      ADD_FAILURE() << "SLUICE_HANG_TIMEOUT=" << bad << " was accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("SLUICE_HANG_TIMEOUT='" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(HangTimeout, TheRuntimeLimitAppliesToOpenAndLaterDevices) {
  hcq::Device& cpu = open_device("CPU");
  set_hang_timeout(300ms);
  EXPECT_EQ(cpu.hang_timeout(), 300ms);
  EXPECT_EQ(open_device("NULL").hang_timeout(), 300ms) << "a device opened later";
  set_hang_timeout(0s);
  EXPECT_EQ(cpu.hang_timeout(), hcq::kNoHangTimeout) << "zero: never declare a kernel hung";
  set_hang_timeout(10s);
}

// The host ticks the kernel along for about 1.5 s, each work-group 5 ms, under a hang timeout of 200 ms:
// parts of its grid keep completing, so the wait (no timeout) waits it out.
TEST(Hang, AKernelThatProgressesPastTheHangTimeoutFinishes) {
  auto dev = cpu::open_device(4);
  dev->set_hang_timeout(200ms);
  auto paced = load_paced(*dev);
  Pace& p = new_pace();
  std::thread pace([&p] {
    for (uint32_t i = 0; i < kGroups; ++i) {
      std::this_thread::sleep_for(5ms);
      p.ticks.fetch_add(1);
    }
  });
  const auto t0 = Clock::now();
  auto done = submit(*dev, *paced, p);
  EXPECT_NO_THROW(done->wait(1));
  const double took = seconds_since(t0);
  pace.join();
  EXPECT_GT(took, 1.0) << "the kernel ran well past the hang timeout";
  for (uint32_t g = 0; g < kGroups; ++g) ASSERT_EQ(p.out[g], int(g) * 3) << "work-group " << g;
}

// The same kernel never ticked: the wait declares it hung within about the hang timeout, and the device
// goes on with fresh work.
TEST(Hang, AStuckKernelIsDeclaredHungWithinAboutTheLimitAndTheDeviceGoesOn) {
  auto dev = cpu::open_device(4);
  dev->set_hang_timeout(200ms);
  auto paced = load_paced(*dev);
  Pace& stuck = new_pace();
  const auto t0 = Clock::now();
  auto done = submit(*dev, *paced, stuck);
  try {
    done->wait(1);
    FAIL() << "the kernel never returns: the wait must fail";
  } catch (const hcq::FaultError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel 'paced' on compute:0 did not finish"), std::string::npos) << m;
    EXPECT_NE(m.find("0 of "), std::string::npos) << "no part of its grid completed: " << m;
    EXPECT_NE(m.find("past the hang timeout of 200 ms"), std::string::npos) << m;
  }
  EXPECT_LT(seconds_since(t0), 2.0) << "declared hung within about the limit, not at a fixed timeout";
  Pace& free_run = new_pace();
  free_run.ticks.store(int(kGroups));
  submit(*dev, *paced, free_run)->wait(1);
  dev->synchronize();
  EXPECT_EQ(free_run.out[7], 21);
  stuck.ticks.store(int(kGroups));  // let the abandoned threads finish and exit
}

// Through the Tensor API: a matmul whose kernel runs for most of a second on two cores (its left side is
// computed inside it), under a hang timeout of 100 ms, read back through the readback's own wait. Its
// result against a host loop.
TEST(Hang, ATensorKernelLongerThanTheHangTimeoutGivesItsResult) {
  constexpr int64_t n = 768;
  Tensor a = Tensor::arange(0, n * n, 1, dtypes::int32, "CPU").mod(7).cast(dtypes::float32).reshape({n, n});
  Tensor c = a.matmul(Tensor::ones({n, n}, dtypes::float32, "CPU"));
  set_hang_timeout(100ms);
  const auto t0 = Clock::now();
  std::vector<float> got = c.to_vector<float>();
  const double took = seconds_since(t0);
  set_hang_timeout(10s);
  ASSERT_EQ(got.size(), size_t(n * n));
  for (int64_t i = 0; i < n; i += 37) {
    float row = 0;  // every column of row i: the row sum of a
    for (int64_t k = 0; k < n; ++k) row += float((i * n + k) % 7);
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(got[size_t(i * n + j)], row) << i << "," << j;
  }
  std::cout << "the realize and readback took " << took * 1e3 << " ms under a hang timeout of 100 ms\n";
}
