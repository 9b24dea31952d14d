#include "hcq/signal.h"

#include <algorithm>
#include <sstream>

#include "hcq/device.h"
#include "hcq/error.h"
#include "hcq/queue.h"

namespace sluice::hcq {

// What a Signal is, shared with the queues that reference it (SignalRef).
struct SignalRef::State {
  explicit State(std::string n, uint64_t initial) : name(std::move(n)), value(initial) {}
  std::string name;
  Counter value;
  std::atomic<uint64_t> timestamp{0};
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::string error;
};

bool SignalRef::refers_to(const Signal& s) const { return state_ == s.ref().state_; }
const std::string& SignalRef::name() const { return state_->name; }
uint64_t SignalRef::value() const { return state_->value.value(); }
bool SignalRef::failed() const { return state_->failed.load(std::memory_order_acquire); }

std::string SignalRef::error() const {
  std::lock_guard lk(state_->error_mu);
  return state_->error;
}

void SignalRef::device_write(uint64_t v, uint64_t timestamp_ns) const {
  // The timestamp goes first so that a host that sees the value also sees (at least) its timestamp.
  state_->timestamp.store(timestamp_ns, std::memory_order_release);
  state_->value.store_max(v);
}

void SignalRef::device_timestamp(uint64_t timestamp_ns) const {
  state_->timestamp.store(timestamp_ns, std::memory_order_release);
}

void SignalRef::fail(const std::string& message) const {
  {
    std::lock_guard lk(state_->error_mu);
    if (state_->failed.load(std::memory_order_relaxed)) return;
    state_->error = message;
    state_->failed.store(true, std::memory_order_seq_cst);
  }
  state_->value.wake_all();
}

bool SignalRef::wait_until(uint64_t v, Clock::time_point deadline, const std::atomic<bool>* abort,
                           bool spin) const {
  return state_->value.wait_until(v, deadline, {&state_->failed, abort}, spin) || failed();
}

void SignalRef::wake() const { state_->value.wake_all(); }

Signal::Signal(std::string name, uint64_t initial, Device* owner) : owner_(owner) {
  ref_.state_ = std::make_shared<SignalRef::State>(std::move(name), initial);
}

uint64_t Signal::timestamp_ns() const { return ref_.state_->timestamp.load(std::memory_order_acquire); }

void Signal::set(uint64_t v) {
  // Concurrent setters race by design of the caller; the check catches the single-writer mistake.
  uint64_t cur = value();
  SLUICE_CHECK_AS(::sluice::hcq::Error, v >= cur)
      << "signal '" << name() << "' is at " << cur << "; a timeline cannot go back to " << v;
  ref_.state_->value.store_max(v);
}

void Signal::wait(uint64_t v, std::chrono::nanoseconds timeout) const {
  auto now = Clock::now();
  auto deadline = timeout >= Clock::time_point::max() - now ? Clock::time_point::max() : now + timeout;
  if (owner_ && value() < v && !failed()) owner_->wait_in_driver(*this, v, deadline);
  ref_.wait_until(v, deadline);
  if (failed()) throw FaultError(error());
  if (value() >= v) return;
  std::ostringstream os;
  os << (owner_ ? owner_->name() : std::string("host")) << ": signal '" << name() << "' did not reach " << v
     << " within " << double(timeout.count()) / 1e6 << " ms (value " << value() << ")";
  if (owner_) {
    std::string why = owner_->explain_stall(*this, v);
    if (!why.empty()) os << "; " << why;
  }
  SLUICE_FAIL(TimeoutError, "wait") << os.str();
}

SubmissionSignals::SubmissionSignals(std::span<const uint64_t> words) {
  for (packet::Ref r : packet::each(words))
    if (packet::names_signal(r.op))
      refs_.push_back({r.at, r.op == packet::Signal, packet::ptr<const Signal>(r.p[1])->ref()});
}

const SignalRef& SubmissionSignals::at(size_t offset) const {
  if (slots_) return slots_[(base_ + offset) / 2];
  if (live_) return packet::ptr<const Signal>(words_[offset + 1])->ref();
  auto it =
      std::lower_bound(refs_.begin(), refs_.end(), offset, [](const Entry& e, size_t o) { return e.at < o; });
  SLUICE_ASSERT(it != refs_.end() && it->at == offset);
  return it->ref;
}

std::vector<SignalRef> SubmissionSignals::written_from(size_t offset) const {
  std::vector<SignalRef> out;
  if (slots_ || live_) {
    for (packet::Ref r : packet::each(words_.subspan(offset)))
      if (r.op == packet::Signal) out.push_back(at(offset + r.at));
    return out;
  }
  for (const Entry& e : refs_)
    if (e.at >= offset && e.write) out.push_back(e.ref);
  return out;
}

}  // namespace sluice::hcq
