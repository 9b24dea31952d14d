// nn layers (runtime/nn.h) on the CPU device: each layer's output against the same math written with
// Tensor ops and evaluated by the reference evaluator, PyTorch's initialization bounds, seeds, the
// state_dict's keys and load_state_dict's checks, and a state round trip through a safetensors file.
// On every device: MultiheadAttention against PyTorch's (tests/data/nn_torch.safetensors, written by
// scripts/nn_torch.py: its state loaded by key, output and gradients compared), and Dropout's masks.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "base/error.h"
#include "runtime/jit.h"
#include "runtime/nn.h"
#include "runtime/reference.h"
#include "runtime/safetensors.h"
#include "tests/error_of.h"
#include "tests/ops/test_devices.h"

namespace sluice {
namespace {

void expect_close(const Tensor& got, const Tensor& want) {
  const std::vector<float> g = Tensor(got).to_vector<float>();
  const eval::HostArray w = reference(want);
  ASSERT_EQ(g.size(), w.f.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w.f[i], 1e-5 + 1e-5 * std::abs(w.f[i])) << i;
}

Tensor input(const Shape& s, uint64_t seed) {
  return Tensor::uniform(s, -1, 1, seed, dtypes::float32, "CPU");
}

struct Net : nn::Module {
  nn::Conv2d conv{2, 4, 3, {.padding = 1, .seed = 1}, "CPU"};
  nn::Linear fc{4, 3, true, 2, "CPU"};
  nn::LayerNorm norm{{3}, 1e-5, "CPU"};
  Net() {
    child("conv", conv);
    child("fc", fc);
    child("norm", norm);
  }
};

TEST(Nn, LayersComputeWhatTheirDefinitionsSay) {
  Net n;
  const Tensor x = input({2, 2, 5, 5}, 7);
  expect_close(n.conv(x), x.conv2d(n.conv.weight, {.bias = n.conv.bias, .padding = {1}}));
  const Tensor v = input({6, 4}, 8);
  expect_close(n.fc(v), v.matmul(n.fc.weight.transpose()) + *n.fc.bias);
  const Tensor u = input({6, 3}, 9);
  const Tensor c = u - u.mean({1}, true);
  expect_close(n.norm(u), c / (c.square().mean({1}, true) + 1e-5).sqrt());
  nn::Embedding e(5, 3, 4, "CPU");
  const Tensor idx = Tensor::from(std::vector<int32_t>{4, 0, 4, 2}, {2, 2}, "CPU");
  const Tensor rows = e(idx);
  EXPECT_EQ(rows.shape(), (Shape{2, 2, 3}));
  const std::vector<float> w = e.weight.to_vector<float>(), r = Tensor(rows).to_vector<float>();
  for (int k = 0; k < 3; ++k) EXPECT_EQ(r[size_t(k)], w[size_t(4 * 3 + k)]);
}

TEST(Nn, NormalizationLayersAndTheTransposedConvolution) {
  const Tensor x = input({4, 3, 2, 2}, 11);
  nn::BatchNorm bn(3, 1e-5, 0.1, "CPU");
  const Tensor mean = x.mean({0, 2, 3}, true), var = (x - mean).square().mean({0, 2, 3}, true);
  expect_close(bn(x), (x - mean) / (var + 1e-5).sqrt());
  std::vector<Tensor> updates = bn.take_updates();
  ASSERT_EQ(updates.size(), 3u);
  std::vector<Tensor*> ptrs;
  for (Tensor& t : updates) ptrs.push_back(&t);
  Tensor::realize_all(ptrs);
  // The running averages moved 10% toward the batch's mean and unbiased variance (16 values a channel).
  expect_close(bn.running_mean, mean.reshape({3}) * 0.1);
  expect_close(bn.running_var, var.reshape({3}) * (0.1 * 16 / 15) + 0.9);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  bn.eval();
  expect_close(bn(x), (x - bn.running_mean.reshape({1, 3, 1, 1})) /
                          (bn.running_var.reshape({1, 3, 1, 1}) + 1e-5).sqrt());
  EXPECT_TRUE(bn.take_updates().empty()) << "evaluation moves no statistics";

  nn::GroupNorm gn(2, 4, 1e-5, "CPU");
  const Tensor y = input({2, 4, 3}, 12), g = y.reshape({2, 2, 6});
  const Tensor c = g - g.mean({2}, true);
  expect_close(gn(y), (c / (c.square().mean({2}, true) + 1e-5).sqrt()).reshape({2, 4, 3}));
  nn::RMSNorm rms(3, 1e-6, "CPU");
  const Tensor z = input({2, 3}, 13);
  expect_close(rms(z), z / (z.square().mean({1}, true) + 1e-6).sqrt());
  nn::ConvTranspose2d ct(2, 3, 2, {.stride = 2, .seed = 5}, "CPU");
  const Tensor w = input({1, 2, 3, 3}, 14);
  expect_close(ct(w), w.conv_transpose2d(ct.weight, {.bias = ct.bias, .stride = {2}}));
  EXPECT_EQ(ct.weight.shape(), (Shape{2, 3, 2, 2}));
}

TEST(Nn, InitializersFollowPyTorchsBoundsAndSeeds) {
  nn::Linear a(50, 20, true, 3, "CPU"), b(50, 20, true, 3, "CPU"), c(50, 20, true, 4, "CPU");
  const std::vector<float> wa = a.weight.to_vector<float>();
  const double bound = 1 / std::sqrt(50.0);  // kaiming_uniform(a = sqrt(5)) on fan_in 50
  double lo = 1, hi = -1;
  for (float v : wa) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  EXPECT_LT(lo, -0.9 * bound) << "1000 draws should reach near the bound";
  EXPECT_GT(hi, 0.9 * bound);
  EXPECT_EQ(wa, b.weight.to_vector<float>());
  EXPECT_NE(wa, c.weight.to_vector<float>());
  EXPECT_EQ(nn::fans({8, 3, 5, 5}), (std::pair<int64_t, int64_t>{75, 200}));
  const std::vector<float> xv = nn::xavier_uniform({30, 20}, 1, 1, "CPU").to_vector<float>();
  for (float v : xv) EXPECT_LE(std::abs(v), std::sqrt(6.0 / 50));
  // The normal initializers: 20000 draws with the standard deviation PyTorch's definitions give.
  auto stddev = [](Tensor t) {
    const std::vector<float> v = t.to_vector<float>();
    double s1 = 0, s2 = 0;
    for (float x : v) s1 += x, s2 += double(x) * x;
    return std::sqrt(s2 / double(v.size()) - (s1 / double(v.size())) * (s1 / double(v.size())));
  };
  EXPECT_NEAR(stddev(nn::kaiming_normal({200, 100}, 5, 0, "CPU")), std::sqrt(2.0 / 100),
              0.02 * std::sqrt(0.02));
  EXPECT_NEAR(stddev(nn::kaiming_normal({200, 100}, 5, 1, "CPU")), std::sqrt(1.0 / 100), 0.02 * 0.1);
  EXPECT_NEAR(stddev(nn::xavier_normal({200, 100}, 6, 2, "CPU")), 2 * std::sqrt(2.0 / 300), 0.02 * 0.163);
}

using testing_errors::error_of;

TEST(Nn, DropoutDropsAndScalesOnlyWhileTraining) {
  nn::Dropout d(0.25, 7, "CPU");
  const Tensor x = Tensor::ones({10000}, dtypes::float32, "CPU");
  auto step = [&] {
    Tensor y = d(x);
    std::vector<Tensor> updates = d.take_updates();
    std::vector<Tensor*> all{&y};
    for (Tensor& t : updates) all.push_back(&t);
    Tensor::realize_all(all);
    return y.to_vector<float>();
  };
  const std::vector<float> a = step(), b = step();
  size_t zeros = 0;
  for (float v : a) {
    ASSERT_TRUE(v == 0 || std::abs(v - 1 / 0.75f) < 1e-6) << v;
    zeros += v == 0;
  }
  EXPECT_NEAR(double(zeros) / 10000, 0.25, 0.015);
  EXPECT_NE(a, b) << "each step draws a new mask";
  nn::Dropout same(0.25, 7, "CPU");
  Tensor first = same(x);
  EXPECT_EQ(first.to_vector<float>(), a) << "a seed gives the same masks";
  EXPECT_NE(Tensor(same(x)).to_vector<float>(), a) << "a second call before the update draws another";
  d.eval();
  EXPECT_EQ(Tensor(d(x)).to_vector<float>(), std::vector<float>(10000, 1.0f));
  EXPECT_TRUE(d.take_updates().empty());
  EXPECT_TRUE(d.state_dict().empty()) << "PyTorch's Dropout has no state";
  EXPECT_NE(error_of<ValueError>([] { nn::Dropout(1.5); }).find("[Dropout] probability 1.5 is not in [0, 1]"),
            std::string::npos);
}

// The counter lives on the device, so a replayed jitted step draws a new mask every time, and the
// gradient flows through the kept elements only.
TEST(Nn, DropoutInAJittedStepDrawsNewMasksAndPassesGradients) {
  nn::Dropout d(0.5, 3, "CPU");
  Tensor w = Tensor::ones({64}, dtypes::float32, "CPU").contiguous();
  w.realize();
  w.requires_grad(true);
  Jit jit([&](const std::vector<Tensor>& in) {
    w.zero_grad();
    Tensor y = d(in[0] * w);
    y.sum().backward();
    std::vector<Tensor> out{y, *w.grad()};
    for (Tensor& t : d.take_updates()) out.push_back(t);
    return out;
  });
  std::set<std::vector<float>> masks;
  for (int i = 0; i < 6; ++i) {
    std::vector<Tensor> out = jit({Tensor::from(std::vector<float>(64, 1.0f), {64}, "CPU")});
    const std::vector<float> y = out[0].to_vector<float>(), g = out[1].to_vector<float>();
    EXPECT_EQ(y, g) << "d(sum(dropout(x * w)))/dw is the scaled mask, as is the output for x = w = 1";
    masks.insert(y);
  }
  EXPECT_TRUE(jit.captured()) << jit.why();
  EXPECT_EQ(masks.size(), 6u) << "every step, replays included, drew its own mask";
}

TEST(Nn, StateDictNamesEveryTensorByItsPath) {
  Net n;
  std::vector<std::string> keys;
  for (const auto& [k, t] : n.state_dict()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"conv.bias", "conv.weight", "fc.bias", "fc.weight", "norm.bias",
                                            "norm.weight"}));
  EXPECT_EQ(n.parameters().size(), 6u);
  for (Tensor* p : n.parameters()) EXPECT_TRUE(p->requires_grad());
}

TEST(Nn, LoadStateDictChecksBeforeItWrites) {
  Net n;
  std::map<std::string, Tensor> s = n.state_dict();
  const std::vector<float> before = n.fc.weight.to_vector<float>();
  s.erase("fc.bias");
  s.emplace("fc.extra", Tensor::zeros({1}, dtypes::float32, "CPU"));
  s.at("fc.weight") = Tensor::zeros({3, 4}, dtypes::float32, "CPU");
  EXPECT_NE(error_of<ValueError>([&] {
              n.load_state_dict(s);
            }).find("[load_state_dict] Module: missing 'fc.bias'; unexpected 'fc.extra'"),
            std::string::npos);
  EXPECT_EQ(n.fc.weight.to_vector<float>(), before) << "a failed load changes nothing";
  std::map<std::string, Tensor> bad = n.state_dict();
  bad.at("fc.weight") = Tensor::zeros({4, 3}, dtypes::float32, "CPU");
  EXPECT_NE(error_of<ValueError>([&] {
              n.load_state_dict(bad);
            }).find("Linear 'fc.weight': the state has shape (4, 3), the layer (3, 4)"),
            std::string::npos);
}

TEST(Nn, StateRoundTripsThroughSafetensors) {
  Net a, b;
  // Make b different from a first, then load a's state into it through a file.
  b.fc.weight.assign(b.fc.weight * 0 + 5).realize();
  const std::filesystem::path f =
      std::filesystem::temp_directory_path() / ("sluice_nn_" + std::to_string(::getpid()) + ".safetensors");
  safe_save(a.state_dict(), f);
  b.load_state_dict(safe_load(f, "CPU"));
  std::filesystem::remove(f);
  for (const auto& [k, t] : a.state_dict())
    EXPECT_EQ(Tensor(t).to_vector<float>(), Tensor(b.state_dict().at(k)).to_vector<float>()) << k;
  EXPECT_TRUE(b.fc.weight.requires_grad()) << "loading keeps the parameter trainable";
}

// The forms PyTorch's comparison does not cover, against the batched, bool-masked form it does.
TEST(Nn, MultiheadAttentionUnbatchedInputsFloatAndPerHeadMasksAndBadShapes) {
  nn::MultiheadAttention m(4, 2, {.batch_first = true, .seed = 1}, "CPU");
  const Tensor x = input({1, 3, 4}, 21);
  const std::vector<bool> masked = {false, true, false, false, false, true, false, false, false};
  std::vector<uint8_t> bits(masked.begin(), masked.end());
  const Tensor bmask = Tensor::from(bits, {3, 3}, "CPU").cast(dtypes::bool_);
  const std::vector<float> want = Tensor(m(x, x, x, bmask)).to_vector<float>();
  EXPECT_EQ(Tensor(m(x.reshape({3, 4}), x.reshape({3, 4}), x.reshape({3, 4}), bmask)).to_vector<float>(),
            want);
  const Tensor fmask = bmask.where(Tensor::full({}, -INFINITY, dtypes::float32, "CPU"), 0.0);
  EXPECT_EQ(Tensor(m(x, x, x, fmask)).to_vector<float>(), want);
  const Tensor per_head = bmask.reshape({1, 3, 3}).expand({2, 3, 3});
  EXPECT_EQ(Tensor(m(x, x, x, per_head)).to_vector<float>(), want);
  EXPECT_NE(error_of<ShapeError>([&] {
              m(x, x, x, Tensor::zeros({3, 2}, dtypes::bool_, "CPU"));
            }).find("[MultiheadAttention] attn_mask must be (3, 3) or (2, 3, 3), got (3, 2)"),
            std::string::npos);
  EXPECT_NE(error_of<ShapeError>([&] {
              m(x, input({1, 3, 5}, 22), x);
            }).find("with E = 4"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([] {
              nn::MultiheadAttention(6, 4);
            }).find("[MultiheadAttention] embed_dim 6 is not a multiple of num_heads 4"),
            std::string::npos);
}

// PyTorch's nn.MultiheadAttention: its state loads by key, and the output and every gradient match.
class MhaVsTorch : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(MhaVsTorch, MatchesOutputAndGradients) {
  const auto& [device, name] = GetParam();
  if (std::string why = testing_devices::absent(device); !why.empty()) GTEST_SKIP() << why;
  const std::map<std::string, Tensor> file =
      safe_load(std::string(SLUICE_SOURCE_DIR) + "/tests/data/nn_torch.safetensors", device);
  auto get = [&](const std::string& k) -> std::optional<Tensor> {
    auto it = file.find(name + "." + k);
    return it == file.end() ? std::nullopt : std::optional<Tensor>(it->second);
  };
  std::map<std::string, Tensor> state;
  for (const auto& [k, t] : file)
    if (k.rfind(name + ".state.", 0) == 0) state.emplace(k.substr(name.size() + 7), t);
  const Tensor q0 = *get("query");
  const bool masked = name == "masked";
  const int64_t e = q0.shape(-1);
  nn::MultiheadAttention m(e, masked ? 2 : 3, {.bias = masked, .batch_first = !masked}, device);
  m.load_state_dict(state);
  Tensor q = q0.contiguous(), k = get("key") ? get("key")->contiguous() : q,
         v = get("value") ? get("value")->contiguous() : q;
  std::vector<Tensor> xs{q};
  if (get("key")) xs.insert(xs.end(), {k, v});
  const Tensor y = m(q, k, v, get("attn_mask"), get("key_padding_mask"), !masked);
  std::vector<std::string> names{"query"};
  if (get("key")) names.insert(names.end(), {"key", "value"});
  for (auto& [key, p] : m.named_tensors()) {
    xs.push_back(*p);
    names.push_back(key);
  }
  std::vector<Tensor> grads = gradients(y, xs, *get("upstream"));
  grads.insert(grads.begin(), y);
  names.insert(names.begin(), "out");
  std::vector<Tensor*> all;
  for (Tensor& g : grads) all.push_back(&g);
  Tensor::realize_all(all);
  for (size_t i = 0; i < grads.size(); ++i) {
    const std::vector<float> got = grads[i].to_vector<float>(),
                             want = get(i == 0 ? "out" : "grad." + names[i])->to_vector<float>();
    ASSERT_EQ(got.size(), want.size()) << names[i];
    for (size_t j = 0; j < got.size(); ++j)
      ASSERT_NEAR(got[j], want[j], 2e-5 + 2e-4 * std::abs(want[j])) << names[i] << " element " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Nn, MhaVsTorch,
                         testing::Combine(testing::ValuesIn(testing_devices::devices_with_values()),
                                          testing::Values("masked", "causal")),
                         [](const auto& i) { return std::get<1>(i.param) + "_" + std::get<0>(i.param); });

}  // namespace
}  // namespace sluice
