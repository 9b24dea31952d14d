// The one expectations table (runtime/expectations.h) against the conformance library's cases: every row
// for a queue check or an op case names at least one that exists, so a renamed check cannot leave a row
// behind that skips nothing; and judge() turns a KnownFailure row's failure into XFail and its pass into
// XPass.
#include <gtest/gtest.h>

#include <string>

#include "conformance/check.h"
#include "conformance/op_cases.h"
#include "runtime/expectations.h"

namespace sluice {
namespace {

TEST(Expectations, EveryQueueAndOpRowNamesACase) {
  for (const Expectation& e : expectations()) {
    const std::string glob = e.glob;
    if (glob.rfind("queue/", 0) != 0 && glob.rfind("ops/", 0) != 0) continue;  // onnx/: data-dependent
    bool found = false;
    for (const conformance::Check& c : conformance::checks()) found = found || glob_match(glob, c.name);
    for (const conformance::OpCase& c : conformance::op_cases()) found = found || glob_match(glob, c.name);
    EXPECT_TRUE(found) << e.kind << " " << glob << ": no queue check or op case has that name";
  }
}

TEST(Expectations, JudgeAppliesKnownFailureRows) {
  EXPECT_EQ(judge("CPU", "queue/exec", "").status, CaseStatus::Pass);
  EXPECT_EQ(judge("CPU", "queue/exec", "boom").status, CaseStatus::Fail);
  EXPECT_EQ(judge("CPU", "queue/exec", "boom").detail, "boom");
  const Verdict xfail = judge("VULKAN", "ops/maximum_nan", "element 0 differs");
  EXPECT_EQ(xfail.status, CaseStatus::XFail);
  EXPECT_NE(xfail.detail.find("element 0 differs"), std::string::npos) << xfail.detail;
  EXPECT_EQ(judge("VULKAN", "ops/maximum_nan", "").status, CaseStatus::XPass);
  EXPECT_EQ(judge("VULKAN:1", "ops/maximum_nan", "").status, CaseStatus::XPass);  // a kind matches ordinals
}

}  // namespace
}  // namespace sluice
