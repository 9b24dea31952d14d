#include "hcq/signal.h"

#include <sstream>

#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::hcq {

Signal::Signal(std::string name, uint64_t initial, Device* owner)
    : name_(std::move(name)), owner_(owner), value_(initial) {}

void Signal::set(uint64_t v) {
  // Concurrent setters race by design of the caller; the check catches the single-writer mistake.
  uint64_t cur = value();
  SLUICE_CHECK_AS(::sluice::hcq::Error, v >= cur)
      << "signal '" << name_ << "' is at " << cur << "; a timeline cannot go back to " << v;
  value_.store_max(v);
}

void Signal::device_write(uint64_t v, uint64_t timestamp_ns) {
  // The timestamp goes first so that a host that sees the value also sees (at least) its timestamp.
  timestamp_.store(timestamp_ns, std::memory_order_release);
  value_.store_max(v);
}

bool Signal::wait_until(uint64_t v, Clock::time_point deadline) const {
  return value_.wait_until(v, deadline, &failed_) || failed();
}

void Signal::wait(uint64_t v, std::chrono::nanoseconds timeout) const {
  auto now = Clock::now();
  auto deadline = timeout >= Clock::time_point::max() - now ? Clock::time_point::max() : now + timeout;
  if (owner_ && value() < v && !failed()) owner_->wait_in_driver(*this, v, deadline);
  bool reached = value_.wait_until(v, deadline, &failed_);
  if (failed()) throw FaultError(error());
  if (reached) return;
  std::ostringstream os;
  os << (owner_ ? owner_->name() : std::string("host")) << ": signal '" << name_ << "' did not reach " << v
     << " within " << double(timeout.count()) / 1e6 << " ms (value " << value() << ")";
  if (owner_) {
    std::string why = owner_->explain_stall(*this, v);
    if (!why.empty()) os << "; " << why;
  }
  SLUICE_FAIL(TimeoutError, "wait") << os.str();
}

void Signal::fail(const std::string& message) {
  {
    std::lock_guard lk(error_mu_);
    if (failed_.load(std::memory_order_relaxed)) return;
    error_ = message;
    failed_.store(true, std::memory_order_seq_cst);
  }
  value_.wake_all();
}

std::string Signal::error() const {
  std::lock_guard lk(error_mu_);
  return error_;
}

}  // namespace sluice::hcq
