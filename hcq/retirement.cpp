#include "hcq/retirement.h"

#include <algorithm>

#include "hcq/signal.h"

namespace sluice::hcq {

void Retirement::done(uint64_t value, uint64_t ns) {
  Signal& t = *timeline_.load(std::memory_order_acquire);
  if (t.value() == value - 1) {
    t.device_write(value, ns);  // sequentially consistent: the read below comes after it
    if (waiting_.load(std::memory_order_seq_cst) != 0) drain();
    return;
  }
  {
    std::lock_guard lk(mu_);
    early_.emplace(value, ns);
    waiting_.fetch_add(1, std::memory_order_seq_cst);
  }
  drain();
}

// Takes every waiting value next in line as one advance, written with the latest of their times, and
// drops those a replaced timeline counted already.
void Retirement::drain() {
  std::lock_guard lk(mu_);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the Dekker pair's read of the value
  Signal& t = *timeline_.load(std::memory_order_acquire);
  const uint64_t from = t.value();
  uint64_t to = from, ns = 0;
  for (auto it = early_.begin(); it != early_.end() && it->first <= to + 1; it = early_.erase(it)) {
    if (it->first == to + 1) to = it->first, ns = std::max(ns, it->second);
    waiting_.fetch_sub(1, std::memory_order_relaxed);
  }
  // Nobody else moves the timeline from `from`: the value after it waited here.
  if (to != from) t.device_write(to, ns);
}

}  // namespace sluice::hcq
