#pragma once
// hcq::ProcessorDevice — a Device whose hardware queues are hcq::CommandProcessors
// (command_processor.h): one compute queue and one copy queue, "compute:0" and "copy:0". What such a
// device does with its queues is written here once: submitting in timeline order per queue, waiting in
// the driver (Device::wait_in_driver), describing a stall and resetting a hung queue (device.h: the
// queue is abandoned, kept until its device work ends, a fresh one takes its place, its signals and the
// timeline fail), and stopping the queues without a hang when the device goes. A backend supplies only
// make_queue(); VULKAN, CUDA and HIP derive from it.
//
// A derived class calls start_queues() at the end of its constructor (make_queue may use its state) and
// stop_queues() then release_queues() first in its destructor (the queues may use its state).
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hcq/command_processor.h"
#include "hcq/device.h"

namespace sluice::hcq {

class ProcessorDevice : public Device {
 public:
  static constexpr int kCompute = 0, kCopy = 1;
  static constexpr std::array<const char*, 2> kQueueNames = {"compute:0", "copy:0"};

  void wait_in_driver(const Signal& s, uint64_t value, Clock::time_point deadline) override;
  std::string explain_stall(const Signal& s, uint64_t value) override;
  bool busy() override;
  void forget_graph(uint64_t graph) override;  // the compute queue's native graph forms
  // Every queue closes, then drains (CommandProcessor::close, shutdown); false when one did not finish
  // within the hang timeout (what it may still use must then stay alive). Repeated calls: the first answer.
  bool stop_queues();

 protected:
  explicit ProcessorDevice(std::string name) : Device(std::move(name), 1, 1) {}

  // Why this device never resets a hung queue ("" : it does). A device whose driver cannot stop a kernel
  // and stays busy with it (OpenCL) gains nothing from a fresh queue: its stalls are described, not
  // declared hung, busy() is false, and a wait without a timeout ends by the no-progress rule (device.h).
  virtual std::string why_no_reset() const { return ""; }
  // Queue k's processor (kCompute, kCopy), its Config filled in by the device (names, profiling,
  // retirement, hang timeout, settled).
  virtual std::unique_ptr<CommandProcessor> make_queue(int k, CommandProcessor::Config cfg) = 0;
  void start_queues();
  void release_queues();                  // destroys the queues, abandoned ones included
  CommandProcessor& queue(int k) const {  // the current one
    return *live_[k].load(std::memory_order_acquire);
  }

  uint64_t do_submit(const HwQueue& q) override { return do_submit_graph(q, 0); }
  uint64_t do_submit_graph(const HwQueue& q, uint64_t graph) override;

 private:
  CommandProcessor::Config config(int k);
  bool reset_hung_queue(int k, const QueueStatus& st, uint64_t now);  // under reset_mu_

  std::mutex submit_mu_[2];  // timeline values reach each queue in increasing order
  std::mutex reset_mu_;      // queues_ and graveyard_ against a reset
  std::shared_ptr<CommandProcessor> queues_[2];
  // queues_ for wait_in_driver, which takes no lock: a replaced queue stays alive in graveyard_.
  std::atomic<CommandProcessor*> live_[2] = {nullptr, nullptr};
  std::vector<std::shared_ptr<CommandProcessor>> graveyard_;  // abandoned queues, until their work ends
};

}  // namespace sluice::hcq
