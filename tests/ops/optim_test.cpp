// The optimizers (runtime/optim.h) against PyTorch's trajectories (tests/data/optim_torch.json, written
// by scripts/optim_torch.py; LAMB, which PyTorch lacks, by the reference design's rule in float64), on
// every device: the same (2, 3) parameter, four steps with fixed gradients (fed as d/dp of sum(p * g)),
// the parameter compared after each step. Also: a whole training step captured by sluice::jit replays
// the eager trajectory, and bad arguments are clear errors.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "runtime/jit.h"
#include "runtime/optim.h"
#include "tests/error_of.h"
#include "tests/ops/test_devices.h"

namespace sluice {
namespace {

const nlohmann::json& torch_cases() {
  static const nlohmann::json j = [] {
    std::ifstream f(std::string(SLUICE_SOURCE_DIR) + "/tests/data/optim_torch.json");
    return nlohmann::json::parse(f);
  }();
  return j;
}

std::unique_ptr<optim::Optimizer> make(const nlohmann::json& c, Tensor* p) {
  const auto& o = c["options"];
  const std::string kind = c["optimizer"];
  auto get = [&](const char* k, double d) { return o.contains(k) ? o[k].get<double>() : d; };
  if (kind == "SGD")
    return std::make_unique<optim::SGD>(std::vector<Tensor*>{p},
                                        optim::SGDOptions{.lr = get("lr", 1e-3),
                                                          .momentum = get("momentum", 0),
                                                          .weight_decay = get("weight_decay", 0),
                                                          .nesterov = o.value("nesterov", false)});
  const optim::AdamOptions a{.lr = get("lr", 1e-3),
                             .beta1 = get("beta1", 0.9),
                             .beta2 = get("beta2", 0.999),
                             .eps = get("eps", 1e-8),
                             .weight_decay = get("weight_decay", 0)};
  const auto k = kind == "Adam"    ? optim::Adam::Kind::Adam
                 : kind == "AdamW" ? optim::Adam::Kind::AdamW
                                   : optim::Adam::Kind::Lamb;
  return std::make_unique<optim::Adam>(std::vector<Tensor*>{p}, a, k);
}

std::vector<float> floats(const nlohmann::json& a) { return a.get<std::vector<float>>(); }

struct Param {
  std::string device;
  size_t index;
};

class TorchTrajectory : public testing::TestWithParam<Param> {};

TEST_P(TorchTrajectory, MatchesEveryStep) {
  const Param& t = GetParam();
  if (std::string why = testing_devices::absent(t.device); !why.empty()) GTEST_SKIP() << why;
  const nlohmann::json& doc = torch_cases();
  const nlohmann::json& c = doc["cases"][t.index];
  Tensor p = Tensor::from(floats(doc["p0"]), {2, 3}, t.device);
  p.requires_grad(true);
  auto opt = make(c, &p);
  for (size_t s = 0; s < doc["grads"].size(); ++s) {
    opt->zero_grad();
    (p * Tensor::from(floats(doc["grads"][s]), {2, 3}, t.device)).sum().backward();
    opt->step();
    const std::vector<float> got = p.to_vector<float>(), want = floats(c["params"][s]);
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_NEAR(got[k], want[k], 1e-6 + 2e-5 * std::abs(want[k])) << "step " << s + 1 << ", element " << k;
  }
}

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (const std::string& d : testing_devices::devices_with_values())
    for (size_t i = 0; i < torch_cases()["cases"].size(); ++i) out.push_back({d, i});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Optim, TorchTrajectory, testing::ValuesIn(all_params()),
                         [](const testing::TestParamInfo<Param>& i) {
                           return torch_cases()["cases"][i.param.index]["name"].get<std::string>() + "_" +
                                  i.param.device;
                         });

// A training step (forward, backward, update) captured by the JIT replays as one graph and follows the
// trajectory of the same steps run eagerly.
TEST(Optim, AJittedTrainingStepFollowsTheEagerOne) {
  const std::vector<float> x0 = {1, 2}, y0 = {0.5f, -1, 2};
  auto run = [&](bool jitted) {
    Tensor w = Tensor::from(std::vector<float>{0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f}, {2, 3}, "CPU");
    w.requires_grad(true);
    optim::Adam opt({&w}, {.lr = 0.05});
    auto step = [&](const std::vector<Tensor>& in) {
      opt.zero_grad();
      Tensor loss = (in[0].matmul(w) - in[1]).square().mean();
      loss.backward();
      std::vector<Tensor> out = opt.step_lazy();
      out.insert(out.begin(), loss);
      return out;
    };
    Jit jit(step);
    std::vector<float> losses;
    for (int i = 0; i < 6; ++i) {
      std::vector<float> x = x0;
      for (float& v : x) v *= float(i + 1) / 4;
      const std::vector<Tensor> in = {Tensor::from(x, {1, 2}, "CPU"), Tensor::from(y0, {1, 3}, "CPU")};
      if (jitted) {
        losses.push_back(jit(in)[0].item<float>());
      } else {
        std::vector<Tensor> out = step(in);
        std::vector<Tensor*> all;
        for (Tensor& t : out) all.push_back(&t);
        Tensor::realize_all(all);
        losses.push_back(out[0].item<float>());
      }
    }
    if (jitted) { EXPECT_TRUE(jit.captured()) << jit.why(); }
    return std::make_pair(losses, w.to_vector<float>());
  };
  const auto [eager_loss, eager_w] = run(false);
  const auto [jit_loss, jit_w] = run(true);
  for (size_t i = 0; i < eager_loss.size(); ++i)
    EXPECT_NEAR(jit_loss[i], eager_loss[i], 1e-5) << "step " << i;
  for (size_t i = 0; i < eager_w.size(); ++i) EXPECT_NEAR(jit_w[i], eager_w[i], 1e-6) << "element " << i;
  EXPECT_LT(eager_loss.back(), eager_loss.front() * 2) << "the loss should not blow up";
}

using testing_errors::error_of;

TEST(Optim, BadArgumentsAreClearErrors) {
  Tensor w = Tensor::from(std::vector<float>{1, 2}, {2}, "CPU");
  Tensor n = Tensor::from(std::vector<int32_t>{1, 2}, {2}, "CPU");
  EXPECT_NE(error_of<ValueError>([] { optim::SGD({}); }).find("[SGD] no parameters"), std::string::npos);
  EXPECT_NE(error_of<DTypeError>([&] { optim::Adam({&n}); }).find("[Adam] parameter 0 is int"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              optim::SGD({&w}, {.lr = 0.1, .nesterov = true});
            }).find("[SGD] Nesterov momentum needs a momentum > 0"),
            std::string::npos);
  EXPECT_NE(
      error_of<ValueError>([&] { optim::SGD({&w}, {.lr = -1}); }).find("[SGD] learning rate -1 is negative"),
      std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] { optim::Adam({&w}, {.beta1 = 1}); }).find("[Adam] betas (1, 0.999)"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice
