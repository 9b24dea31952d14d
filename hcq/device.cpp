#include "hcq/device.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "base/error.h"
#include "hcq/error.h"

namespace sluice::hcq {

namespace {
// A kernel that goes this long without progress while someone waits on its queue is taken for hung. Long
// enough for a whole kernel on devices that count from its start (Vulkan, CUDA).
constexpr std::chrono::nanoseconds kDefaultHangTimeout = std::chrono::seconds(10);

// $SLUICE_HANG_TIMEOUT: seconds, fractions allowed; 0 or "off" for no limit.
std::chrono::nanoseconds hang_timeout_from_env() {
  const char* e = std::getenv("SLUICE_HANG_TIMEOUT");
  if (!e || !*e) return kDefaultHangTimeout;
  if (std::string(e) == "off") return kNoHangTimeout;
  char* end = nullptr;
  const double s = std::strtod(e, &end);
  const double limit = double(kNoHangTimeout.count()) / 1e9;
  SLUICE_CHECK_IN(ValueError, "Device", end != e && *end == 0 && std::isfinite(s) && s >= 0 && s < limit)
      << "SLUICE_HANG_TIMEOUT='" << e << "': expected seconds (such as 30 or 0.5), or 0 or off for no limit";
  return s == 0 ? kNoHangTimeout : std::chrono::nanoseconds(std::max<int64_t>(1, int64_t(s * 1e9)));
}
}  // namespace

Device::Device(std::string name, uint32_t compute_queues, uint32_t copy_queues)
    : name_(std::move(name)),
      compute_queues_(compute_queues),
      copy_queues_(copy_queues),
      hang_timeout_ns_(hang_timeout_from_env().count()) {
  timelines_.push_back(std::make_unique<Signal>(name_ + " timeline", 0, this));
  timeline_.store(timelines_.back().get());
}

Device::~Device() = default;

// A wait without a timeout is the owner's hang policy ("Hangs and faults"), so it lives with the device.
void Signal::wait(uint64_t v) const {
  using std::chrono::nanoseconds;
  Device* dev = owner();
  if (!dev) return wait(v, kDefaultTimeout);
  uint64_t seen = value();
  for (auto quiet_since = Clock::now();;) {
    // Slices of a quarter of the hang timeout: a stuck kernel is declared within 1.25 times it.
    const nanoseconds hang = dev->hang_timeout();
    const nanoseconds slice =
        std::clamp<nanoseconds>(hang / 4, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
    const auto deadline = Clock::now() + slice;
    if (value() < v && !failed()) dev->wait_in_driver(*this, v, deadline);
    wait_until(v, deadline);
    if (failed()) throw FaultError(error());
    if (value() >= v) return;
    const std::string why = dev->explain_stall(*this, v);
    if (failed()) throw FaultError(error());  // the device declared the work hung
    const auto now = Clock::now();
    if (value() != seen || dev->busy()) {
      seen = value();
      quiet_since = now;
    } else if (const nanoseconds quiet = now - quiet_since;
               quiet >= std::max<nanoseconds>(kDefaultTimeout, hang)) {
      SLUICE_FAIL(TimeoutError, "wait")
          << dev->name() << ": signal '" << name() << "' did not reach " << v
          << " while nothing advanced for " << double(quiet.count()) / 1e6 << " ms (value " << value() << ")"
          << (why.empty() ? "" : "; ") << why;
    }
  }
}

void Device::synchronize() const { timeline().wait(timeline_value()); }

void Device::synchronize(std::chrono::nanoseconds timeout) const {
  timeline().wait(timeline_value(), timeout);
}

void Device::check_submit(const HwQueue& q) const {
  SLUICE_CHECK_AS(::sluice::hcq::Error, q.index() < queue_count(q.kind()))
      << name_ << " has " << queue_count(q.kind()) << " " << queue_kind_name(q.kind()) << " queues, no queue "
      << q.index();
  // The backend calls the program through its own type: a program of another device would be garbage.
  if (q.programs_on(*this)) return;
  for (packet::Ref r : packet::each(q.packets())) {
    if (r.op != packet::Exec) continue;
    const Program& p = *packet::ExecView(r.p).program;
    SLUICE_CHECK_AS(::sluice::hcq::Error, &p.device() == this)
        << "kernel '" << p.name() << "' was loaded on " << p.device().name() << ", not on " << name_;
  }
}

uint64_t Device::submit(const HwQueue& q) {
  check_submit(q);
  return do_submit(q);
}

uint64_t Device::submit_graph(const HwQueue& q, uint64_t graph) {
  check_submit(q);
  return do_submit_graph(q, graph);
}

void Device::retire(uint64_t value, uint64_t timestamp_ns) { retire_.done(value, timestamp_ns); }

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
