// Fashion-MNIST training (models/mnist) on Debian's data set: a short run on every device must lower the
// loss and classify well above chance, from the same initial weights. The full three-epoch run (>= 90%
// test accuracy on the CPU device) is `sluice train fashion-mnist`, a benchmark: too long for the suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "models/mnist/mnist.h"
#include "tests/ops/test_devices.h"

namespace sluice {
namespace {

const mnist::Dataset* data(const std::string& part) {
  static std::map<std::string, mnist::Dataset> cache;
  if (!std::filesystem::exists(std::string(mnist::kDebianDir) + "/train-images-idx3-ubyte.gz"))
    return nullptr;
  auto it = cache.find(part);
  if (it == cache.end()) it = cache.emplace(part, mnist::load(mnist::kDebianDir, part)).first;
  return &it->second;
}

TEST(Mnist, TheDataSetHasItsDocumentedSizes) {
  if (!data("train")) GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  EXPECT_EQ(data("train")->size(), 60000);
  EXPECT_EQ(data("t10k")->size(), 10000);
  std::vector<int> counts(10);
  for (int32_t l : data("t10k")->labels) ++counts[size_t(l)];
  for (int c : counts) EXPECT_EQ(c, 1000) << "the test set is balanced";
}

class MnistTraining : public testing::TestWithParam<std::string> {};

TEST_P(MnistTraining, AShortRunLearns) {
  const std::string device = GetParam();
  if (std::string why = testing_devices::absent(device); !why.empty()) GTEST_SKIP() << why;
  if (!data("train")) GTEST_SKIP() << "Debian's dataset-fashion-mnist is not installed";
  // The emulated GPUs (lavapipe, PoCL) run a step many times slower than the CPU device: fewer steps.
  const int64_t steps = device == "CPU" ? 120 : 40;
  mnist::Cnn model(0, device);
  mnist::Trainer trainer(model, device, {.batch = 64, .lr = 2e-3, .seed = 0, .max_steps = steps});
  const mnist::EpochReport r = trainer.epoch(*data("train"), 0);
  ASSERT_EQ(r.losses.size(), size_t(steps));
  const double last = std::accumulate(r.losses.end() - 10, r.losses.end(), 0.0) / 10;
  EXPECT_NEAR(r.losses[0], 2.3, 0.3) << "ten classes start near ln 10";
  EXPECT_LT(last, device == "CPU" ? 0.9 : 1.3) << "the mean loss of the last ten steps";
  mnist::Dataset head = *data("t10k");  // the first 1000 test images keep the suite fast
  head.images.resize(1000 * 784);
  head.labels.resize(1000);
  EXPECT_GT(trainer.accuracy(head), device == "CPU" ? 0.65 : 0.5);
}

INSTANTIATE_TEST_SUITE_P(Devices, MnistTraining, testing::ValuesIn(testing_devices::devices_with_values()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace sluice
