// `sluice train fashion-mnist`: trains the small CNN of models/mnist on Debian's Fashion-MNIST files with a
// jitted training step, and reports per epoch the mean loss, test accuracy, seconds and images per second.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "models/mnist/mnist.h"
#include "runtime/device.h"
#include "tools/sluice/cli.h"

namespace sluice::cli {
namespace {

struct Options {
  std::string task, device, data = mnist::kDebianDir;
  int epochs = 3;
  int64_t batch = 64, steps = -1;
  double lr = 1e-3;
  uint64_t seed = 0;
  bool json = false;
};

int run(const Options& o) {
  if (o.task != "fashion-mnist")
    throw UsageError("unknown task '" + o.task + "': the one task is fashion-mnist");
  if (!std::filesystem::exists(o.data + "/train-images-idx3-ubyte.gz"))
    throw UsageError("no Fashion-MNIST files in " + o.data +
                     " (install Debian's dataset-fashion-mnist, or give --data DIR)");
  const std::string device = o.device.empty() ? default_device_name() : select_devices(o.device).at(0);
  const mnist::Dataset train = mnist::load(o.data, "train"), test = mnist::load(o.data, "t10k");
  mnist::Cnn model(o.seed, device);
  mnist::Trainer trainer(model, device, {.batch = o.batch, .lr = o.lr, .seed = o.seed, .max_steps = o.steps});
  if (!o.json)
    std::printf("Fashion-MNIST on %s: %lld training and %lld test images, batch %lld, Adam lr %g\n",
                device.c_str(), (long long)train.size(), (long long)test.size(), (long long)o.batch, o.lr);
  nlohmann::json epochs = nlohmann::json::array();
  for (int e = 0; e < o.epochs; ++e) {
    const int64_t steps = o.steps >= 0 ? std::min(o.steps, train.size() / o.batch) : train.size() / o.batch;
    Progress bar("epoch " + std::to_string(e + 1), size_t(steps), !o.json && stdout_is_terminal());
    const mnist::EpochReport r = trainer.epoch(train, e, [&](int64_t, int64_t, float) { bar.step(); });
    const double acc = trainer.accuracy(test);
    if (o.json) {
      epochs.push_back({{"epoch", e + 1},
                        {"mean_loss", r.mean_loss()},
                        {"test_accuracy", acc},
                        {"seconds", r.seconds},
                        {"images_per_second", r.images_per_second},
                        {"losses", r.losses}});
    } else {
      std::printf("epoch %d: loss %.4f, test accuracy %.2f%%, %.1f s, %.0f images/s\n", e + 1, r.mean_loss(),
                  100 * acc, r.seconds, r.images_per_second);
    }
  }
  if (o.json)
    std::cout << nlohmann::json{{"task", o.task}, {"device", device}, {"batch", o.batch},
                                {"lr", o.lr},     {"seed", o.seed},   {"epochs", epochs}}
                     .dump(1)
              << "\n";
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("train", "Train a model on a data set (fashion-mnist)");
  cmd->add_option("task", o.task, "What to train: fashion-mnist")->required();
  cmd->add_option("--device", o.device, "Device to train on (default: the default device)");
  cmd->add_option("--epochs", o.epochs, "Passes over the training set")->check(at_least(1));
  cmd->add_option("--batch", o.batch, "Images per step")->check(at_least(1));
  cmd->add_option("--steps", o.steps, "Steps per epoch at most (default: the whole set)")->check(at_least(0));
  cmd->add_option("--lr", o.lr, "Adam's learning rate")->check(at_least(0));
  cmd->add_option("--seed", o.seed, "Initial weights and data order");
  cmd->add_option("--data", o.data, "Folder of the IDX files (default: Debian's dataset-fashion-mnist)");
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout, with every step's loss");
  cmd->footer(
      "Examples:\n"
      "  sluice train fashion-mnist\n"
      "  sluice train fashion-mnist --device VULKAN --epochs 1 --steps 100 --json\n"
      "The model: conv 3x3 (16) - relu - maxpool - conv 3x3 (32) - relu - maxpool -\n"
      "linear (10), cross-entropy, Adam; the step (forward, backward, update) is\n"
      "captured once by the JIT and replayed per batch.\n"
      "Exit codes: 0 trained, 1 a device or file failed, 2 bad arguments or no data.");
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
