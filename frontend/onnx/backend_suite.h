#pragma once
// The ONNX backend test suite (Debian's libonnx-testdata: node/, pytorch-converted/, pytorch-operator/,
// simple/, each case a model.onnx with test_data_set_*/input_*.pb and output_*.pb) run through sluice on a
// device, for the CTest group (tests/onnx) and `sluice conformance --suite onnx`.
//
// A case passes when every output of every data set matches the suite's: floats within
// atol + rtol * |want| (rtol 1e-3, atol 1e-7, the suite's own; float16 and bfloat16 rtol 1e-2, atol 1e-3),
// NaN where it has NaN, integers and bools exactly, dtypes and shapes exactly. Cases are named
// "onnx/<group>/<case>" in the one expectations table (runtime/expectations.h): Unsupported ones are
// skipped with their reason, KnownFailure ones run and a pass is reported as unexpected.
#include <string>
#include <vector>

#include "runtime/expectations.h"

namespace sluice::onnx::suite {

struct Case {
  std::string group;  // "node"
  std::string name;   // "test_abs"
  std::string dir;    // its folder
  std::string id() const { return "onnx/" + group + "/" + name; }
};

// $SLUICE_ONNX_TESTDATA, else Debian's libonnx-testdata folder; "" when neither exists.
std::string data_dir();
// The cases under root (every group folder but real/, whose models are not shipped), sorted, whose id
// matches the glob ("onnx/node/test_conv*").
std::vector<Case> list_cases(const std::string& root, const std::string& glob = "*");

using Status = CaseStatus;  // runtime/expectations.h

struct Result {
  Status status = Status::Pass;
  std::string detail;  // why it failed, was skipped or is expected to fail
  std::string ops;     // the op types of the model, "Conv,Relu"
  double worst = 0;    // worst |got - want| / max(1, |want|) over float outputs
  double ms = 0;       // load + run + compare
};

// Runs one case on a device (expectations applied). Never throws: errors become failures.
Result run_case(const Case& c, const std::string& device);

// One line that reruns the case: "sluice conformance --suite onnx --device CPU --filter onnx/node/test_abs".
std::string reproduce(const Case& c, const std::string& device);

}  // namespace sluice::onnx::suite
