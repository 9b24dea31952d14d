// Fashion-MNIST training, sluice beside PyTorch CPU (2 threads) in one run: the CNN of models/mnist from
// the same initial weights (written to a safetensors file), on the same data order and with the same
// Adam settings, `--steps` steps each (default: one epoch), `--rounds` times alternating which side runs
// first. Reports the median seconds per epoch of each side, the ratio, and the two loss curves over the
// first 100 steps (they start from identical weights and batches, so they should track each other).
// Run: build/default/tools/bench/mnist_vs_torch [--steps N] [--rounds R] [--device CPU]
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/mnist/mnist.h"
#include "runtime/safetensors.h"

namespace sluice {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  using namespace sluice;
  int64_t steps = 60000 / 64, rounds = 1;
  std::string device = "CPU";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps") steps = std::atoll(argv[i + 1]);
    if (a == "--rounds") rounds = std::atoll(argv[i + 1]);
    if (a == "--device") device = argv[i + 1];
  }
  const mnist::Dataset train = mnist::load(mnist::kDebianDir, "train");
  const mnist::TrainOptions opts{.batch = 64, .lr = 1e-3, .seed = 0, .max_steps = steps};
  const auto dir = std::filesystem::temp_directory_path() / ("sluice_mnist_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string weights = (dir / "init.safetensors").string(), order = (dir / "order.bin").string();
  {
    mnist::Cnn init(0, device);
    safe_save(init.state_dict(), weights);
    const std::vector<int64_t> o = mnist::Trainer(init, device, opts).order(train.size(), 0);
    std::ofstream(order, std::ios::binary)
        .write(reinterpret_cast<const char*>(o.data()), std::streamsize(o.size() * 8));
  }
  const char* script_dir = std::getenv("SLUICE_SOURCE_DIR");
  const std::string script = std::string(script_dir ? script_dir : ".") + "/scripts/mnist_torch.py";
  std::vector<double> ours, theirs;
  std::vector<float> our_losses, their_losses;
  for (int64_t r = 0; r < rounds; ++r) {
    for (int side : r % 2 ? std::vector<int>{1, 0} : std::vector<int>{0, 1}) {
      if (side == 0) {
        mnist::Cnn model(0, device);
        model.load_state_dict(safe_load(weights, device));
        mnist::Trainer t(model, device, opts);
        const mnist::EpochReport rep = t.epoch(train, 0);
        ours.push_back(rep.seconds);
        our_losses = rep.losses;
      } else {
        const std::string cmd = "/usr/bin/python3 " + script + " " + weights + " " + order + " " +
                                std::to_string(steps) + " 64 0.001";
        std::string out;
        if (FILE* p = popen(cmd.c_str(), "r")) {
          char buf[4096];
          while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
          pclose(p);
        }
        const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
        if (j.is_discarded()) {
          std::fprintf(stderr, "mnist_vs_torch: the PyTorch side failed (needs python3-torch): %s\n",
                       cmd.c_str());
          return 1;
        }
        theirs.push_back(j["seconds"].get<double>());
        their_losses = j["losses"].get<std::vector<float>>();
      }
    }
  }
  std::filesystem::remove_all(dir);
  const double per_epoch = double(60000 / 64) / double(steps);
  std::printf("Fashion-MNIST CNN, batch 64, Adam 1e-3, %lld steps x %lld rounds, sluice on %s\n",
              (long long)steps, (long long)rounds, device.c_str());
  std::printf("  sluice   %8.2f s per epoch (median; min %.2f max %.2f)\n", median(ours) * per_epoch,
              *std::min_element(ours.begin(), ours.end()) * per_epoch,
              *std::max_element(ours.begin(), ours.end()) * per_epoch);
  std::printf("  PyTorch  %8.2f s per epoch (median; min %.2f max %.2f)\n", median(theirs) * per_epoch,
              *std::min_element(theirs.begin(), theirs.end()) * per_epoch,
              *std::max_element(theirs.begin(), theirs.end()) * per_epoch);
  std::printf("  ratio sluice / PyTorch: %.2f\n", median(ours) / median(theirs));
  double worst = 0;
  const size_t n = std::min<size_t>({100, our_losses.size(), their_losses.size()});
  std::printf("  loss   step:  sluice   PyTorch\n");
  for (size_t s = 0; s < n; ++s) {
    worst = std::max(worst, double(std::abs(our_losses[s] - their_losses[s])));
    if (s == 0 || (s + 1) % 10 == 0)
      std::printf("        %5zu:  %.4f   %.4f\n", s + 1, our_losses[s], their_losses[s]);
  }
  std::printf("  largest loss difference over the first %zu steps: %.4f\n", n, worst);
  return 0;
}
