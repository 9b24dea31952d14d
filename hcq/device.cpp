#include "hcq/device.h"

#include <utility>

#include "hcq/error.h"

namespace sluice::hcq {

namespace {
// A kernel that runs this long while someone waits on its queue is taken for hung. Long enough for real
// work; shorter than kDefaultTimeout so that a default wait both times out and names the stuck kernel.
constexpr std::chrono::nanoseconds kDefaultHangTimeout = std::chrono::seconds(10);
}  // namespace

Device::Device(std::string name, uint32_t compute_queues, uint32_t copy_queues)
    : name_(std::move(name)),
      compute_queues_(compute_queues),
      copy_queues_(copy_queues),
      hang_timeout_ns_(kDefaultHangTimeout.count()) {
  timelines_.push_back(std::make_unique<Signal>(name_ + " timeline", 0, this));
  timeline_.store(timelines_.back().get());
}

Device::~Device() = default;

void Device::synchronize(std::chrono::nanoseconds timeout) const {
  timeline().wait(timeline_value(), timeout);
}

uint64_t Device::submit(const HwQueue& q) {
  SLUICE_CHECK_AS(::sluice::hcq::Error, q.index() < queue_count(q.kind()))
      << name_ << " has " << queue_count(q.kind()) << " " << queue_kind_name(q.kind()) << " queues, no queue "
      << q.index();
  // The backend calls the program through its own type: a program of another device would be garbage.
  auto words = q.packets();
  for (size_t i = 0; i < words.size(); i += packet::words(words[i])) {
    if (packet::op(words[i]) != packet::Exec) continue;
    const Program& p = *packet::ExecView(&words[i]).program;
    SLUICE_CHECK_AS(::sluice::hcq::Error, &p.device() == this)
        << "kernel '" << p.name() << "' was loaded on " << p.device().name() << ", not on " << name_;
  }
  return do_submit(q);
}

void Device::replace_timeline(const std::string& error) {
  std::lock_guard lk(mu_);
  timeline().fail(error);
  timelines_.push_back(std::make_unique<Signal>(name_ + " timeline#" + std::to_string(timelines_.size() + 1),
                                                timeline_value(), this));
  timeline_.store(timelines_.back().get(), std::memory_order_release);
}

void Device::add_profile(ProfileRecord r) {
  std::lock_guard lk(mu_);
  profile_.push_back(std::move(r));
}

std::vector<ProfileRecord> Device::take_profile() {
  std::lock_guard lk(mu_);
  return std::exchange(profile_, {});
}

}  // namespace sluice::hcq
