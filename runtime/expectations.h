#pragma once
// What each device is known not to do, in ONE table (expectations.cpp), shared by `sluice conformance`
// and the test suites: a conformance case whose name ("queue/host_wait", "ops/add/float16/...",
// "onnx/node/test_adam") matches a row's glob on a device of the row's kind is either skipped
// (Unsupported, with the reason) or run and expected to fail (KnownFailure: a failure is reported as
// expected; a pass is reported as unexpected, so the row gets removed once the bug is fixed).
#include <span>
#include <string>

namespace sluice {

enum class Expect { Unsupported, KnownFailure };

struct Expectation {
  const char* kind;  // device kind ("CPU" matches CPU, CPU:1, ...); "*" every device
  const char* glob;  // case names (glob_match)
  Expect expect;
  const char* reason;
};

// What became of one case on one device.
enum class CaseStatus { Pass, Fail, Skip, XFail, XPass };
const char* case_status_name(CaseStatus s);  // "passed", "failed", "skipped", "expected failure", ...

struct Verdict {
  CaseStatus status;
  std::string detail;  // why it failed, or what the row says; empty when it passed
};
// The table applied to a case that ran on `device`: `failure` says why it failed, empty when it passed.
// A KnownFailure row turns a failure into XFail and a pass into XPass (the row is then to be removed).
Verdict judge(const std::string& device, const std::string& case_name, const std::string& failure);

// The first row matching (device, case), or null.
const Expectation* expectation_for(const std::string& device, const std::string& case_name);
// Every row, in order (tests check that each still names a case).
std::span<const Expectation> expectations();

// Glob with `*` (any run of characters, '/' included) and `?` (one character).
bool glob_match(const std::string& pattern, const std::string& text);

}  // namespace sluice
