// The conformance library's op cases (conformance/op_cases.h) on every device of the registry
// (runtime/device.h) through the whole pipeline against the reference evaluator, run by the same runner
// as `sluice conformance` (conformance/op_runner.h: tolerances by dtype, guard bytes around every buffer,
// the one expectations table):
//   ops.<case>/<DEVICE>         each composite case (`ops/<case>`) alone; on a device whose table row
//                               marks it Unsupported (NULL computes nothing) it still runs end to end
//   ops_sweep.<group>/<DEVICE>  the sweep's --quick cases of a group (`ops/unary`, ...) in batches, as
//                               `sluice conformance --quick` runs them; SLUICE_CONFORMANCE_FULL=1: every
//                               case of the group, as `sluice conformance` does
// plus this suite's own: a planted out-of-bounds write the guards must catch, and an unoptimized sum over
// llvmpipe's loop limit. Devices that are absent skip with their reason. A table of the kernels the
// composite cases ran is printed at the end.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "conformance/op_cases.h"
#include "conformance/op_runner.h"
#include "core/ir/shape_tracker.h"
#include "runtime/device.h"
#include "runtime/device_name.h"
#include "runtime/expectations.h"
#include "runtime/realize.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

using conformance::OpCase;
using conformance::OpResult;

// Why the table says `device` has no values to check for `name` ("" when it has).
std::string no_values(const std::string& device, const std::string& name) {
  const Expectation* e = expectation_for(device, "ops/" + name);
  return e && e->expect == Expect::Unsupported ? e->reason : "";
}

// Every device kind of the registry, present or not.
std::vector<std::string> device_names() {
  std::vector<std::string> out;
  for (const DeviceInfo& d : list_devices()) out.push_back(d.name);
  return out;
}
// Why `device` cannot run at all ("" when it can): absent from the registry, or failing to open. Turns on
// the guards where the device has memory to check them in.
std::string absent(const std::string& device) {
  static std::mutex mu;
  static std::map<std::string, std::string> why;
  std::lock_guard lk(mu);
  auto [it, fresh] = why.try_emplace(device);
  if (!fresh) return it->second;
  for (const DeviceInfo& d : list_devices())
    if (d.name == device && !d.available) return it->second = d.reason;
  try {
    if (no_values(device, "guards").empty())
      realizer(device).set_options({.guard_bytes = conformance::kGuardBytes, .edit_schedule = {}});
  } catch (const std::exception& e) { it->second = std::string("cannot open: ") + e.what(); }
  return it->second;
}

std::mutex g_table_mu;
std::vector<std::string> g_table;  // kernels run, printed at the end

class OpsEnvironment : public testing::Environment {
 public:
  void TearDown() override {
    std::printf("\n%-8s %-26s %-22s %8s %4s  %s\n", "device", "case", "kernel", "groups", "new",
                "tensor ops");
    for (const std::string& r : g_table) std::printf("%s\n", r.c_str());
  }
};
const auto* const kEnv = testing::AddGlobalTestEnvironment(new OpsEnvironment);

// Reports one result: a failure fails the test, a skip or known failure skips it.
void report(const std::string& dev, const OpResult& r) {
  const Verdict& v = r.verdict;
  if (v.status == CaseStatus::Fail || v.status == CaseStatus::XPass)
    ADD_FAILURE() << dev << " " << r.op->name << ": " << case_status_name(v.status) << ": " << v.detail;
}

// A list of cases on one device, as one test, run with `options` (op_runner.h).
class OpCasesTest : public testing::Test {
 public:
  OpCasesTest(std::string device, std::vector<const OpCase*> cases, conformance::OpRunOptions options)
      : device_(std::move(device)), cases_(std::move(cases)), options_(std::move(options)) {}
  void TestBody() override {
    if (std::string why = absent(device_); !why.empty()) GTEST_SKIP() << device_ << ": " << why;
    std::vector<OpResult> results = conformance::run_op_cases(device_, realizer(device_), cases_, options_);
    size_t ran = 0;
    for (const OpResult& r : results) {
      report(device_, r);
      ran += r.verdict.status != CaseStatus::Skip && r.verdict.status != CaseStatus::XFail;
      std::lock_guard lk(g_table_mu);
      for (const auto& k : r.kernels) {
        char line[256];
        std::snprintf(line, sizeof line, "%-8s %-26s %-22s %8llu %4s  %s", device_.c_str(),
                      r.op->name.substr(4).c_str(), k.name.c_str(), (unsigned long long)k.work_groups,
                      k.compiled ? "yes" : "", k.metadata.c_str());
        g_table.push_back(line);
      }
    }
    if (ran == 0 && !results.empty()) GTEST_SKIP() << device_ << ": " << results[0].verdict.detail;
  }

 private:
  std::string device_;
  std::vector<const OpCase*> cases_;
  conformance::OpRunOptions options_;
};

void add(const std::string& suite, const std::string& name, const std::string& device,
         std::vector<const OpCase*> cases, conformance::OpRunOptions options) {
  testing::RegisterTest(suite.c_str(), (name + "/" + device).c_str(), nullptr, nullptr, __FILE__, __LINE__,
                        [=]() -> testing::Test* { return new OpCasesTest(device, cases, options); });
}

// Registered from main: the case tables are built from other files' statics, which static initialization
// may not have reached yet.
void register_op_tests() {
  const bool full = std::getenv("SLUICE_CONFORMANCE_FULL") && *std::getenv("SLUICE_CONFORMANCE_FULL") == '1';
  std::vector<std::string> groups;  // the sweep's, in table order
  std::map<std::string, std::vector<const OpCase*>> sweep;
  std::vector<const OpCase*> composites;
  for (const OpCase& c : conformance::op_cases()) {
    if (c.group == "ops/composite") {
      composites.push_back(&c);
    } else if (full || c.quick) {
      if (!sweep.count(c.group)) groups.push_back(c.group);
      sweep[c.group].push_back(&c);
    }
  }
  // A composite case alone, run end to end even where its row marks it Unsupported (NULL); a sweep group
  // in batches. Every device kind, present or not: absent() tells.
  const conformance::OpRunOptions alone{.batch = 1, .run_unsupported = true, .progress = {}};
  for (const OpCase* c : composites)
    for (std::string_view d : known_device_kinds()) add("ops", c->name.substr(4), std::string(d), {c}, alone);
  for (const std::string& g : groups)
    for (std::string_view d : known_device_kinds())
      add("ops_sweep", g.substr(4), std::string(d), sweep[g], {});
}

// A kernel whose store index is shifted one element past its buffer (the schedule edited through the
// test-only hook): the sentinel bytes after the output must report it, and the ones before must not.
class Guards : public testing::TestWithParam<std::string> {};

TEST_P(Guards, CatchPlantedOutOfBoundsWrite) {
  const std::string dev = GetParam();
  if (std::string why = absent(dev); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  if (std::string why = no_values(dev, "guards"); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  Realizer& r = realizer(dev);
  const RealizeOptions saved = r.options();
  RealizeOptions o = saved;
  o.edit_schedule = [](Schedule& s) {
    for (ScheduleItem& it : s.items) {
      if (it.ast.op() != Op::Sink) continue;
      const UOp& store = it.ast.src(0);
      ShapeTracker st = *std::dynamic_pointer_cast<const ShapeTracker>(
          store.src(1).arg_as<std::shared_ptr<const ArgObject>>());
      st.views.front().offset += 1;  // every store lands one element later: the last one is past the end
      UOp view = UOp::make(Op::View, dtypes::void_, {}, std::make_shared<const ShapeTracker>(st));
      it.ast = it.ast.with_src({store.with_src({store.src(0), view, store.src(2)})});
      return;
    }
  };
  r.set_options(o);
  RealizeReport rep;
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[size_t(i)] = float(i) * 0.25f;
  (void)r.run({Tensor::from(v, {16}, dev) + 1}, &rep);
  r.set_options(saved);
  ASSERT_EQ(rep.guard_violations.size(), 1u);
  EXPECT_NE(rep.guard_violations[0].find("byte 0 after the end"), std::string::npos)
      << rep.guard_violations[0];
  // The same kernel unedited stays inside its buffer.
  v[0] = 7;
  (void)r.run({Tensor::from(v, {16}, dev) + 1}, &rep);
  EXPECT_TRUE(rep.guard_violations.empty()) << rep.guard_violations.front();
}

INSTANTIATE_TEST_SUITE_P(Devices, Guards, testing::ValuesIn(device_names()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

// Without optimizations a sum is one loop per work-item: 65543 iterations, over llvmpipe's limit of 65535
// loop iterations per shader invocation, which it used to end silently (a sum of 65535). Codegen unrolls
// to fit the device's max_loop.
class LongLoops : public testing::TestWithParam<std::string> {};
TEST_P(LongLoops, UnoptimizedSumOverTheLoopLimit) {
  const std::string& dev = GetParam();
  if (std::string why = absent(dev); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  if (std::string why = no_values(dev, "long_loop_sum"); !why.empty()) GTEST_SKIP() << dev << ": " << why;
  const char* was = std::getenv("SLUICE_NOOPT");
  const std::string saved = was ? was : "";
  setenv("SLUICE_NOOPT", "1", 1);
  const int32_t got = Tensor::from(std::vector<int32_t>(65543, 1), {65543}, dev).sum().item<int32_t>();
  if (was)
    setenv("SLUICE_NOOPT", saved.c_str(), 1);
  else
    unsetenv("SLUICE_NOOPT");
  EXPECT_EQ(got, 65543);
}
INSTANTIATE_TEST_SUITE_P(Devices, LongLoops, testing::ValuesIn(device_names()),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  sluice::register_op_tests();
  return RUN_ALL_TESTS();
}
