#include "models/mnist/mnist.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>

#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/idx.h"

namespace sluice::mnist {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kPixels = 28 * 28;
constexpr float kMean = 0.2860f, kStd = 0.3530f;  // of the training images scaled to [0, 1]

}  // namespace

Dataset load(const std::string& dir, const std::string& part) {
  const std::string images = dir + "/" + part + "-images-idx3-ubyte.gz";
  const std::string labels = dir + "/" + part + "-labels-idx1-ubyte.gz";
  // Read on the host, which assembles every batch: no device is needed for the data.
  const IdxArray x = read_idx(images), y = read_idx(labels);
  auto str = [](const IdxArray& a) { return a.data->dtype.name() + " " + tuple_str(a.shape); };
  SLUICE_CHECK_IN(
      ValueError, "mnist::load",
      x.data->dtype == dtypes::uint8 && x.shape.size() == 3 && x.shape[1] == 28 && x.shape[2] == 28)
      << images << ": expected (n, 28, 28) uint8 images, got " << str(x);
  SLUICE_CHECK_IN(ValueError, "mnist::load",
                  y.data->dtype == dtypes::uint8 && y.shape.size() == 1 && y.shape[0] == x.shape[0])
      << labels << ": expected " << x.shape[0] << " uint8 labels, got " << str(y);
  Dataset d;
  d.images.resize(x.data->bytes.size());
  std::memcpy(d.images.data(), x.data->bytes.data(), d.images.size());
  for (std::byte b : y.data->bytes) {
    const uint8_t l = uint8_t(b);
    SLUICE_CHECK_IN(ValueError, "mnist::load", l < 10)
        << labels << ": label " << int(l) << " is not a class 0..9";
    d.labels.push_back(l);
  }
  return d;
}

double EpochReport::mean_loss() const {
  return losses.empty() ? 0 : std::accumulate(losses.begin(), losses.end(), 0.0) / double(losses.size());
}

Cnn::Cnn(uint64_t seed, const std::string& device)
    : conv1(1, 16, 3, {.padding = 1, .seed = 3 * seed}, device),
      conv2(16, 32, 3, {.padding = 1, .seed = 3 * seed + 1}, device),
      fc(32 * 7 * 7, 10, true, 3 * seed + 2, device) {
  child("conv1", conv1);
  child("conv2", conv2);
  child("fc", fc);
}

Tensor Cnn::operator()(const Tensor& x) const {
  Tensor h = conv1(x).relu().max_pool2d();
  h = conv2(h).relu().max_pool2d();
  return fc(h.reshape({h.shape(0), -1}));
}

Trainer::Trainer(Cnn& model, const std::string& device, TrainOptions o)
    : model_(model),
      device_(device),
      o_(o),
      opt_(model.parameters(), {.lr = o.lr}),
      // The whole step in one function of the batch: the JIT captures it on its second call and replays
      // it after, writing the parameters and Adam's state in place.
      step_([this](const std::vector<Tensor>& in) {
        opt_.zero_grad();
        Tensor loss = model_(in[0]).cross_entropy(in[1]);
        loss.backward();
        std::vector<Tensor> out = opt_.step_lazy();
        for (Tensor& t : model_.take_updates()) out.push_back(std::move(t));  // running statistics, if any
        out.insert(out.begin(), loss);
        return out;
      }) {
  SLUICE_CHECK_IN(ValueError, "mnist::Trainer", o.batch >= 1) << "batch size " << o.batch << " must be >= 1";
}

Tensor Trainer::batch_images(const Dataset& data, const std::vector<int64_t>& order, int64_t first,
                             int64_t n) const {
  std::vector<float> x(static_cast<size_t>(n * kPixels));
  for (int64_t b = 0; b < n; ++b) {
    const uint8_t* img = &data.images[size_t(order[size_t(first + b)] * kPixels)];
    for (int64_t p = 0; p < kPixels; ++p) x[size_t(b * kPixels + p)] = (float(img[p]) / 255.f - kMean) / kStd;
  }
  return Tensor::from(x, {n, 1, 28, 28}, device_);
}

Tensor Trainer::batch_labels(const Dataset& data, const std::vector<int64_t>& order, int64_t first,
                             int64_t n) const {
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) y[size_t(b)] = data.labels[size_t(order[size_t(first + b)])];
  return Tensor::from(y, {n}, device_);
}

EpochReport Trainer::epoch(const Dataset& data, int epoch_index,
                           const std::function<void(int64_t, int64_t, float)>& progress) {
  const std::vector<int64_t> order = this->order(data.size(), epoch_index);
  int64_t steps = data.size() / o_.batch;
  if (o_.max_steps >= 0) steps = std::min(steps, o_.max_steps);
  model_.train();
  EpochReport r;
  const auto t0 = Clock::now();
  for (int64_t s = 0; s < steps; ++s) {
    Tensor loss = step_({batch_images(data, order, s * o_.batch, o_.batch),
                         batch_labels(data, order, s * o_.batch, o_.batch)})
                      .at(0);
    r.losses.push_back(loss.item<float>());
    if (progress) progress(s + 1, steps, r.losses.back());
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.images_per_second = r.seconds > 0 ? double(steps * o_.batch) / r.seconds : 0;
  return r;
}

std::vector<int64_t> Trainer::order(int64_t n, int epoch_index) const {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o_.seed * 1000003 + uint64_t(epoch_index));
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

double Trainer::accuracy(const Dataset& data) {
  NoGrad no_grad;
  model_.eval();
  std::vector<int64_t> order(static_cast<size_t>(data.size()));
  std::iota(order.begin(), order.end(), 0);
  int64_t correct = 0;
  for (int64_t first = 0; first < data.size(); first += 1000) {
    const int64_t n = std::min<int64_t>(1000, data.size() - first);
    const std::vector<int32_t> predicted =
        model_(batch_images(data, order, first, n)).argmax(-1).cast(dtypes::int32).to_vector<int32_t>();
    for (int64_t b = 0; b < n; ++b) correct += predicted[size_t(b)] == data.labels[size_t(first + b)];
  }
  model_.train();
  return data.size() ? double(correct) / double(data.size()) : 0;
}

}  // namespace sluice::mnist
