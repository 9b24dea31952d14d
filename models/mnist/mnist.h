#pragma once
// Fashion-MNIST training (the example of DESIGN.md §5 "Training", read in one sitting): Debian's
// dataset-fashion-mnist files (runtime/idx.h reads them), a two-conv CNN (nn.h), and a training loop whose
// whole step — forward, cross-entropy, backward, Adam update — is captured once by sluice::jit and then
// replayed as one graph per batch, with the batch as its only new input.
//
// The data: 60,000 training and 10,000 test images, 28x28 grey levels, 10 classes. Images are scaled to
// [0, 1] and normalized with the training set's mean and standard deviation (0.2860, 0.3530). Each epoch
// visits the training set in an order drawn from the seed; a last partial batch is dropped (the
// captured step has one batch shape).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/jit.h"
#include "runtime/nn.h"
#include "runtime/optim.h"

namespace sluice::mnist {

// Where Debian's dataset-fashion-mnist package puts the files.
inline constexpr const char* kDebianDir = "/usr/share/datasets/fashion-mnist";

struct Dataset {
  std::vector<uint8_t> images;  // n * 784, row-major
  std::vector<int32_t> labels;  // n, 0..9
  int64_t size() const { return int64_t(labels.size()); }
};
// "train" or "t10k" from `dir` ({part}-images-idx3-ubyte.gz, {part}-labels-idx1-ubyte.gz). Throws ValueError
// naming the file when it is missing, malformed, or its images and labels disagree.
Dataset load(const std::string& dir, const std::string& part);

// conv 1->16 3x3 -> relu -> maxpool 2 -> conv 16->32 3x3 -> relu -> maxpool 2 -> linear 1568 -> 10.
class Cnn : public nn::Module {
 public:
  explicit Cnn(uint64_t seed, const std::string& device);
  Tensor operator()(const Tensor& x) const;  // (N, 1, 28, 28) normalized -> (N, 10) logits
  nn::Conv2d conv1, conv2;
  nn::Linear fc;
};

struct TrainOptions {
  int64_t batch = 64;
  double lr = 1e-3;
  uint64_t seed = 0;
  int64_t max_steps = -1;  // per epoch; -1: the whole training set
};
struct EpochReport {
  std::vector<float> losses;  // one per step
  double seconds = 0, images_per_second = 0;
  double mean_loss() const;
};

class Trainer {
 public:
  Trainer(Cnn& model, const std::string& device, TrainOptions o);
  // One pass over `data`; `progress(step, steps, loss)` after each step (the loss is read back, which
  // waits for the step).
  EpochReport epoch(const Dataset& data, int epoch_index,
                    const std::function<void(int64_t, int64_t, float)>& progress = {});
  // The fraction of `data` the model classifies correctly (batches of 1000, no gradients).
  double accuracy(const Dataset& data);
  // The order epoch `epoch_index` visits `n` training images in (drawn from the seed).
  std::vector<int64_t> order(int64_t n, int epoch_index) const;

 private:
  Tensor batch_images(const Dataset& data, const std::vector<int64_t>& order, int64_t first, int64_t n) const;
  Tensor batch_labels(const Dataset& data, const std::vector<int64_t>& order, int64_t first, int64_t n) const;

  Cnn& model_;
  std::string device_;
  TrainOptions o_;
  optim::Adam opt_;
  Jit step_;
};

}  // namespace sluice::mnist
