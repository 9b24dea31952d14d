#pragma once
// The queue conformance checks (DESIGN.md §4): ONE table of named checks, `queue/<name>`, each a function
// over a Context (a device, its kernels, a second device when there is one). The test suite (tests/cts)
// registers every check on every device as a GoogleTest test; `sluice conformance` runs the same table.
// A check fails by throwing Failure with a message saying what was wrong (the CONF_* macros below), and
// skips by throwing Skip with the reason. What a device does not support is a row of the one
// expectations table (runtime/expectations.cpp), applied by run_check.
// Threads: one thread runs a Context's checks at a time; a check may start threads of its own.
#include <cstdint>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "conformance/devices.h"
#include "conformance/kernels.h"
#include "hcq/device.h"
#include "runtime/expectations.h"

namespace sluice::conformance {

class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class Skip : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a check runs on. The device is the caller's and outlives the context; the kernels and the second
// device are made on first use and owned by the context.
class Context {
 public:
  Context(const DeviceEntry& entry, hcq::Device& dev, std::string name);
  ~Context();
  const DeviceEntry& entry() const { return entry_; }
  hcq::Device& dev() const { return dev_; }
  const std::string& name() const { return name_; }  // the registry's name: "CPU", "VULKAN:1"
  // The suite's kernels on dev (kernels.h). Throws Skip, with the reason, when they cannot be built.
  const Kernels& kernels();
  // Another device of the same kind (entry().open(1)). Throws Skip when none opens.
  hcq::Device& second();
  // False where the expectations table marks check `name` Unsupported on this device: a check that
  // covers part of another's ground asks before it relies on it.
  bool runs(const std::string& check) const;

 private:
  const DeviceEntry& entry_;
  hcq::Device& dev_;
  std::string name_;
  std::unique_ptr<Kernels> kernels_;
  std::string kernels_error_;
  std::unique_ptr<hcq::Device> second_;
};

struct Check {
  const char* name;  // "queue/exec"
  void (*run)(Context&);
};
// Every check, in the order they run.
const std::vector<Check>& checks();

// The hcq::FaultError message a wait on s for `value` throws; "" when the wait returns instead. The
// default value is never reached: the wait ends only when the signal fails.
std::string fault_of(const hcq::Signal& s, uint64_t value = UINT64_MAX);

// Runs one check with the expectations table applied (runtime/expectations.h): an Unsupported row skips it
// with its reason, a KnownFailure row turns a failure into XFail and a pass into XPass. Never throws.
Verdict run_check(const Check& check, Context& ctx);

namespace detail {
template <class A, class B>
std::string got_want(const A& got, const B& want) {
  std::ostringstream os;
  os << "got " << got << ", want " << want << "; ";
  return os.str();
}
}  // namespace detail
}  // namespace sluice::conformance

// Fails the running check unless cond holds; more of the message may follow: `CONF_EXPECT(ok) << "at " << i;`
// The message starts with the condition in brackets.
#define CONF_EXPECT(cond) SLUICE_CHECK_IN(::sluice::conformance::Failure, #cond, cond)
// The same for got == want, with both values in the message.
#define CONF_EXPECT_EQ(got, want)                                                 \
  if (const auto& [got_, want_] = std::make_pair((got), (want)); got_ == want_) { \
  } else                                                                          \
    ::sluice::detail::Raise<::sluice::conformance::Failure>{} &                   \
        ::sluice::detail::ErrorStream(#got " == " #want)                          \
            << ::sluice::conformance::detail::got_want(got_, want_)
// Fails unless stmt throws E.
#define CONF_EXPECT_THROW(stmt, E)                      \
  do {                                                  \
    bool thrown_ = false;                               \
    try {                                               \
      stmt;                                             \
    } catch (const E&) { thrown_ = true; }              \
    CONF_EXPECT(thrown_) << #stmt " did not throw " #E; \
  } while (0)
