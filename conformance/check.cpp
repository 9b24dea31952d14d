#include "conformance/check.h"

#include "hcq/error.h"

namespace sluice::conformance {

// The groups of the table, one file each.
std::vector<Check> queue_checks();     // queue_checks.cpp: queues and signals
std::vector<Check> memory_checks();    // memory_checks.cpp: copies, the allocator, graphs
std::vector<Check> failure_checks();   // failure_checks.cpp: failed waits, hangs, abandoned work
std::vector<Check> compiler_checks();  // compiler_checks.cpp: the disk cache

const std::vector<Check>& checks() {
  static const std::vector<Check> all = [] {
    std::vector<Check> v;
    for (auto group : {queue_checks, memory_checks, failure_checks, compiler_checks})
      for (const Check& c : group()) v.push_back(c);
    return v;
  }();
  return all;
}

Context::Context(const DeviceEntry& entry, hcq::Device& dev, std::string name)
    : entry_(entry), dev_(dev), name_(std::move(name)) {}

Context::~Context() {
  kernels_.reset();  // programs go before their device
  second_.reset();
}

const Kernels& Context::kernels() {
  if (!kernels_ && kernels_error_.empty()) {
    try {
      kernels_ = std::make_unique<Kernels>(load_kernels(dev_, entry_.language));
    } catch (const std::exception& e) { kernels_error_ = e.what(); }
  }
  if (!kernels_) throw Skip("the suite's kernels cannot be built on " + name_ + ": " + kernels_error_);
  return *kernels_;
}

hcq::Device& Context::second() {
  if (!second_) {
    try {
      second_ = entry_.open(1);
    } catch (const std::exception& e) {
      throw Skip("no second " + entry_.kind + " device opens: " + e.what());
    }
  }
  return *second_;
}

bool Context::runs(const std::string& check) const {
  const Expectation* e = expectation_for(name_, check);
  return !e || e->expect != Expect::Unsupported;
}

std::string fault_of(const hcq::Signal& s, uint64_t value) {
  try {
    s.wait(value);
  } catch (const hcq::FaultError& e) { return e.what(); }
  return "";
}

Verdict run_check(const Check& check, Context& ctx) {
  if (const Expectation* e = expectation_for(ctx.name(), check.name); e && e->expect == Expect::Unsupported)
    return {CaseStatus::Skip, e->reason};
  std::string failure;
  try {
    check.run(ctx);
  } catch (const Skip& e) { return {CaseStatus::Skip, e.what()}; } catch (const std::exception& e) {
    failure = e.what();
    if (failure.empty()) failure = "failed";
  } catch (...) { failure = "threw something that is not a std::exception"; }
  return judge(ctx.name(), check.name, failure);
}

}  // namespace sluice::conformance
