// The umbrella header alone is enough for a user's program: tensors, devices, synchronize, the JIT and
// profiling traces (issue #18). This file includes nothing else of sluice on purpose.
#include <sluice/sluice.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

TEST(Umbrella, GivesEverythingAUserNeeds) {
  using sluice::Tensor;
  bool cpu_listed = false;
  for (const sluice::DeviceInfo& d : sluice::list_devices()) cpu_listed |= d.name == "CPU" && d.available;
  EXPECT_TRUE(cpu_listed);
  EXPECT_FALSE(sluice::default_device().empty());

  sluice::start_profiling();
  auto f = sluice::jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * 2).relu()}; });
  for (float v : {1.f, -1.f, 3.f}) {
    Tensor x = Tensor::from({v, 2 * v}, {2}, "CPU");
    Tensor y = f({x}).at(0);
    sluice::synchronize("CPU");
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{std::max(2 * v, 0.f), std::max(4 * v, 0.f)}));
  }
  sluice::synchronize();

  const auto path = std::filesystem::temp_directory_path() / "sluice_umbrella_trace.json";
  sluice::write_profile(path.string());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("traceEvents"), std::string::npos);
  std::filesystem::remove(path);

  std::ostringstream os;
  os << sluice::dtypes::float16;
  EXPECT_EQ(os.str(), sluice::dtypes::float16.name());
}

}  // namespace
