// The gradient cases (conformance/grad_cases.h) on every device against PyTorch: for each case, float32
// inputs on the device, grads = gradients(case.f(xs), xs, upstream), realized there and read back, and
// compared with torch.autograd's for the same inputs and upstream gradient, from
// tests/data/grad_cases_torch.json (written by scripts/grad_cases_torch.py, so CI needs no torch). Where
// tests/unit/gradient_test.cpp checks the rules in float64 against finite differences through the
// reference evaluator, this checks that the backward graphs schedule, fuse and run on each device, and that
// each op means what torch's does.
//   gradient_vs_torch.<case>/<DEVICE>   one case on one device; absent devices and the ones the
//                                       expectations table (runtime/expectations.cpp, as `ops/grad/<case>`)
//                                       marks Unsupported (NULL computes nothing) skip with the reason
//   gradient_vs_torch.TableCoversEveryCase   the JSON has every case of the C++ table and no other
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "conformance/grad_cases.h"
#include "runtime/expectations.h"
#include "test_devices.h"

namespace sluice {
namespace {

using conformance::Domain;
using conformance::grad_case_values;
using conformance::grad_cases;
using conformance::GradCase;

constexpr const char* kRegenerate =
    "rerun scripts/grad_cases_torch.py and commit tests/data/grad_cases_torch.json";

// Float32 gradients of small graphs against exact ones (torch's, computed in float64 and rounded once).
// CPU, CL and VULKAN stay within a hundredth of it: all within 1e-7 + 1e-6 |want| but conv_transpose2d's
// sums, which cancel to 4e-7 off a 0.099.
constexpr double kAbs = 1e-5, kRel = 1e-4;

struct TorchCase {
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> inputs;
  Shape output_shape;
  std::vector<float> upstream;
  std::vector<std::vector<float>> grads;
};

// The script writes each float32 as a decimal that, read as a double and cast, gives it back exactly.
std::vector<float> floats(const nlohmann::json& j) {
  std::vector<float> out;
  for (const auto& v : j) out.push_back(static_cast<float>(v.get<double>()));
  return out;
}

// The JSON's cases by name, read once; a file that does not parse throws, failing every test that reads it.
const std::map<std::string, TorchCase>& torch_cases() {
  static const std::map<std::string, TorchCase> table = [] {
    const std::string path = std::string(SLUICE_SOURCE_DIR) + "/tests/data/grad_cases_torch.json";
    std::ifstream f(path);
    if (!f) throw std::runtime_error("[gradient_vs_torch] cannot read " + path);
    const nlohmann::json j = nlohmann::json::parse(f);
    std::map<std::string, TorchCase> out;
    for (const auto& c : j.at("cases")) {
      TorchCase t;
      for (const auto& in : c.at("inputs")) {
        t.shapes.push_back(in.at("shape").get<Shape>());
        t.inputs.push_back(floats(in.at("values")));
      }
      t.output_shape = c.at("output_shape").get<Shape>();
      t.upstream = floats(c.at("upstream"));
      for (const auto& g : c.at("grads")) t.grads.push_back(floats(g));
      out.emplace(c.at("name").get<std::string>(), std::move(t));
    }
    return out;
  }();
  return table;
}

std::vector<float> draw_f32(int64_t n, Domain d, uint64_t seed) {
  std::vector<float> out;
  for (double v : grad_case_values(n, d, seed)) out.push_back(static_cast<float>(v));
  return out;
}

// Why the JSON's case no longer fits the C++ one ("" when it does): the inputs and upstream must be this
// table's draw, or torch differentiated another function than the device runs.
std::string stale(const GradCase& c, const TorchCase& t) {
  std::ostringstream why;
  if (t.shapes.size() != c.inputs.size() || t.grads.size() != c.inputs.size()) {
    why << "has " << t.shapes.size() << " inputs and " << t.grads.size() << " gradients, the case "
        << c.inputs.size() << " inputs";
    return why.str();
  }
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const int64_t n = prod(c.inputs[i].shape);
    if (t.shapes[i] != c.inputs[i].shape)
      why << "input " << i << " has shape " << tuple_str(t.shapes[i]) << ", the case "
          << tuple_str(c.inputs[i].shape) << "; ";
    else if (t.inputs[i] != draw_f32(n, c.inputs[i].domain, i + 1))
      why << "input " << i << " is not grad_case_values(" << n << ", domain, " << i + 1 << "); ";
    else if (int64_t(t.grads[i].size()) != n)
      why << "gradient " << i << " has " << t.grads[i].size() << " values for " << n << " elements; ";
  }
  if (t.upstream != draw_f32(prod(t.output_shape), Domain::Any, 99))
    why << "the upstream gradient is not grad_case_values(numel(output), Any, 99); ";
  return why.str();
}

// The mismatches of one gradient, worst first ("" when every element is within the tolerance).
std::string compare(size_t input, const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return "gradient " + std::to_string(input) + ": " + std::to_string(got.size()) + " values, torch " +
           std::to_string(want.size()) + "\n";
  std::ostringstream out;
  size_t bad = 0, worst = 0;
  double worst_excess = -1;
  for (size_t k = 0; k < got.size(); ++k) {
    const double err = std::abs(double(got[k]) - double(want[k])), tol = kAbs + kRel * std::abs(want[k]);
    if (!(err <= tol)) {  // NaN fails too
      ++bad;
      if (!(err / tol <= worst_excess)) worst_excess = err / tol, worst = k;
    }
  }
  if (bad == 0) return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "gradient %zu: %zu of %zu elements off, worst element %zu: got %.9g, torch %.9g (|diff| "
                "%.3g, tolerance %.3g)\n",
                input, bad, got.size(), worst, double(got[worst]), double(want[worst]),
                std::abs(double(got[worst]) - double(want[worst])), kAbs + kRel * std::abs(want[worst]));
  return line;
}

// Why `device` cannot run ("" when it can), asked once per device.
std::string absent(const std::string& device) {
  static std::mutex mu;
  static std::map<std::string, std::string> why;
  std::lock_guard lk(mu);
  auto [it, fresh] = why.try_emplace(device);
  if (fresh) it->second = testing_devices::absent(device);
  return it->second;
}

class GradientVsTorch : public testing::Test {
 public:
  GradientVsTorch(const GradCase* c, std::string device) : c_(c), device_(std::move(device)) {}

  void TestBody() override {
    if (std::string why = absent(device_); !why.empty()) GTEST_SKIP() << device_ << ": " << why;
    const std::string name = std::string("ops/grad/") + c_->name;
    if (const Expectation* e = expectation_for(device_, name); e && e->expect == Expect::Unsupported)
      GTEST_SKIP() << device_ << ": " << e->reason;
    const auto it = torch_cases().find(c_->name);
    if (it == torch_cases().end())
      FAIL() << "'" << c_->name << "' is not in the torch table: " << kRegenerate;
    const TorchCase& t = it->second;
    if (std::string why = stale(*c_, t); !why.empty()) FAIL() << "stale torch table: " << why << kRegenerate;

    std::vector<Tensor> xs;
    for (size_t i = 0; i < t.inputs.size(); ++i)
      xs.push_back(Tensor::from(t.inputs[i], t.shapes[i], device_));
    const Tensor y = c_->f(xs);
    ASSERT_EQ(y.shape(), t.output_shape) << "the output's shape differs from torch's";
    ASSERT_EQ(y.dtype(), dtypes::float32);
    std::vector<Tensor> grads = gradients(y, xs, Tensor::from(t.upstream, t.output_shape, device_));
    // One schedule for all of a case's gradients, as a training step would realize them.
    std::vector<Tensor*> all;
    for (Tensor& g : grads) all.push_back(&g);
    Tensor::realize_all(all);
    std::string failure;
    for (size_t i = 0; i < grads.size(); ++i) {
      EXPECT_EQ(grads[i].shape(), t.shapes[i]);
      failure += compare(i, grads[i].to_vector<float>(), t.grads[i]);
    }
    const Verdict v = judge(device_, name, failure);
    if (v.status == CaseStatus::XFail) GTEST_SKIP() << device_ << ": expected failure: " << v.detail;
    if (v.status == CaseStatus::Fail || v.status == CaseStatus::XPass)
      ADD_FAILURE() << device_ << " '" << c_->name << "': " << case_status_name(v.status) << ":\n"
                    << v.detail;
  }

 private:
  const GradCase* c_;
  std::string device_;
};

// Missing cases also fail their own tests; this one names them all at once, and the stale extras too.
TEST(gradient_vs_torch, TableCoversEveryCase) {
  std::set<std::string> cases, missing;
  for (const GradCase& c : grad_cases()) {
    cases.insert(c.name);
    if (!torch_cases().count(c.name)) missing.insert(c.name);
  }
  std::vector<std::string> extra;
  for (const auto& [name, _] : torch_cases())
    if (!cases.count(name)) extra.push_back(name);
  EXPECT_TRUE(missing.empty()) << missing.size() << " cases missing, first '" << *missing.begin()
                               << "': " << kRegenerate;
  EXPECT_TRUE(extra.empty()) << extra.size() << " cases no longer in grad_cases(), first '" << extra.front()
                             << "': " << kRegenerate;
}

// Test names from case names: "pow scalar" -> pow_scalar.
std::string test_name(const std::string& s) {
  std::string n = s;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// Registered from main: the case table and the device registry are other files' statics.
void register_tests() {
  for (const GradCase& c : grad_cases())
    for (const std::string& d : testing_devices::device_names())
      testing::RegisterTest("gradient_vs_torch", (test_name(c.name) + "/" + d).c_str(), nullptr, nullptr,
                            __FILE__, __LINE__,
                            [c = &c, d]() -> testing::Test* { return new GradientVsTorch(c, d); });
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  sluice::register_tests();
  const int rc = RUN_ALL_TESTS();
  // What CTest's SKIP_REGULAR_EXPRESSION looks for (tests/ops/CMakeLists.txt): an absent device's run.
  const testing::UnitTest& u = *testing::UnitTest::GetInstance();
  if (u.skipped_test_count() > 0 && u.successful_test_count() == 0 && u.failed_test_count() == 0)
    std::printf("gradient_vs_torch: every test skipped\n");
  return rc;
}
