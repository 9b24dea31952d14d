#pragma once
// What each device is known not to do, in ONE table (expectations.cpp): a conformance case whose name
// matches a row's glob on a device of the row's kind is either skipped (Unsupported, with the reason) or
// run and expected to fail (KnownFailure: a failure is reported as expected; a pass is reported as
// unexpected, so the row gets removed once the bug is fixed).
#include <string>

namespace sluice::cli {

enum class Expect { Unsupported, KnownFailure };

struct Expectation {
  const char* kind;  // device kind ("CPU" matches CPU, CPU:1, ...); "*" every device
  const char* glob;  // case names (cli.h glob_match)
  Expect expect;
  const char* reason;
};

// The first row matching (device, case), or null.
const Expectation* expectation_for(const std::string& device, const std::string& case_name);

}  // namespace sluice::cli
