#pragma once
// Runs op cases (op_cases.h) on a device through the whole pipeline (schedule, lower, render, compile, run)
// and compares each result with the reference evaluator: floats within atol + rtol*|want| (NaN matches NaN,
// infinities exactly), integers and bools exactly, elements the reference marks undefined not compared;
// a kernel that writes past its buffer fails its case when the Realizer has guard bytes
// (RealizeOptions::guard_bytes). The expectations table applies (runtime/expectations.h), and a case that
// needs a dtype the device does not report skips with that reason.
// Threads: one call at a time per Realizer.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "conformance/op_cases.h"
#include "runtime/expectations.h"
#include "runtime/realize.h"

namespace sluice::conformance {

constexpr uint64_t kGuardBytes = 64;  // sentinel bytes around every buffer, where a device has contents

struct OpRunOptions {
  // Cases scheduled together: one Realizer::run per batch, so their kernels compile in one compiler
  // invocation. A batch that throws or trips a guard is rerun case by case to find the culprit.
  size_t batch = 64;
  // Cases an Unsupported row names still run end to end (scheduled, rendered, compiled, submitted); only
  // their result's shape is checked. Off: they skip with the row's reason.
  bool run_unsupported = false;
  std::function<void(size_t cases_done)> progress;  // after each batch, or each skipped case
};

struct OpResult {
  const OpCase* op = nullptr;
  Verdict verdict;
  double error = 0;  // worst |got - want| / max(1, |want|) over the case's float elements
  std::vector<RealizeReport::KernelRun> kernels;  // what it ran, when it ran alone (a batch of one)
};

// The cases in order, each with its verdict. Never throws: a case that cannot be built or run fails.
std::vector<OpResult> run_op_cases(const std::string& device, Realizer& realizer,
                                   const std::vector<const OpCase*>& cases, const OpRunOptions& options = {});

}  // namespace sluice::conformance
