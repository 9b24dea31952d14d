#include "hcq/processor_device.h"

namespace sluice::hcq {

CommandProcessor::Config ProcessorDevice::config(int k) {
  CommandProcessor::Config c;
  c.device_name = name();
  c.queue_name = kQueueNames[size_t(k)];
  c.profiling = [this] { return profiling(); };
  c.profile = [this](ProfileRecord r) { add_profile(std::move(r)); };
  c.retire = [this](uint64_t v, uint64_t ns) { retire(v, ns); };
  c.hang_timeout = [this] { return hang_timeout(); };
  c.settled = [this] {
    for (const auto& q : live_)
      if (!q.load(std::memory_order_acquire)->quiet()) return false;
    return true;
  };
  return c;
}

void ProcessorDevice::start_queues() {
  for (int k : {kCompute, kCopy}) {
    queues_[k] = make_queue(k, config(k));
    live_[k].store(queues_[k].get(), std::memory_order_release);
  }
  queues_[kCompute]->pair_with(queues_[kCopy].get());
  queues_[kCopy]->pair_with(queues_[kCompute].get());
}

bool ProcessorDevice::stop_queues() {
  std::lock_guard reset(reset_mu_);  // no queue is replaced meanwhile
  // Every queue closes before any drains: a wait on one may be met by the other's work.
  for (auto& q : queues_)
    if (q) q->close();
  bool clean = true;
  for (auto& q : queues_)
    if (q) clean = q->shutdown() && clean;
  for (auto& q : graveyard_) clean = q->shutdown() && clean;  // abandoned queues wait for their work
  return clean;
}

void ProcessorDevice::release_queues() {
  std::lock_guard reset(reset_mu_);
  for (auto& q : queues_) q.reset();
  graveyard_.clear();
}

uint64_t ProcessorDevice::do_submit_graph(const HwQueue& q, uint64_t graph) {
  const int k = q.kind() == QueueKind::Compute ? kCompute : kCopy;
  std::lock_guard lk(submit_mu_[k]);
  const uint64_t v = next_timeline_value();
  queues_[k]->push(q, v, graph);
  return v;
}

void ProcessorDevice::wait_in_driver(const Signal& s, uint64_t value, Clock::time_point deadline) {
  const uint64_t tv = &s == &timeline() ? value : 0;
  for (int k : {kCompute, kCopy}) queue(k).wait_for(s, value, tv, deadline);
}

std::string ProcessorDevice::explain_stall(const Signal&, uint64_t) {
  std::lock_guard reset(reset_mu_);
  const std::string no_reset = why_no_reset();
  std::string out = explain_queues(
      2, [&](size_t k) { return queues_[k]->status(); },
      [&](size_t k) { return std::string(kQueueNames[k]); }, uint64_t(hang_timeout().count()),
      [&](size_t k, const QueueStatus& st, uint64_t now) {
        return no_reset.empty() && reset_hung_queue(int(k), st, now);
      });
  return no_reset.empty() ? out : out + "; " + no_reset;
}

bool ProcessorDevice::busy() {
  if (!why_no_reset().empty()) return false;
  std::lock_guard reset(reset_mu_);
  for (auto& q : queues_)
    if (q->status().phase == QueueStatus::Running) return true;
  return false;
}

void ProcessorDevice::forget_graph(uint64_t graph) {
  std::lock_guard reset(reset_mu_);
  queues_[kCompute]->forget_graph(graph);
}

bool ProcessorDevice::reset_hung_queue(int k, const QueueStatus& st, uint64_t now) {
  const std::string msg =
      hung_message(name(), kQueueNames[size_t(k)], st, now, uint64_t(hang_timeout().count()));
  if (!queues_[k]->abandon(st.token)) return false;
  std::scoped_lock lk(submit_mu_[kCompute], submit_mu_[kCopy]);
  for (const SignalRef& s : queues_[k]->dropped_signals()) s.fail(msg);
  graveyard_.push_back(std::move(queues_[k]));
  queues_[k] = make_queue(k, config(k));
  queues_[k]->pair_with(queues_[1 - k].get());
  queues_[1 - k]->pair_with(queues_[k].get());  // the replaced one stays alive in graveyard_
  live_[k].store(queues_[k].get(), std::memory_order_release);
  replace_timeline(msg);
  return true;
}

}  // namespace sluice::hcq
