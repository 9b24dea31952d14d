#include "backends/null/queue.h"

namespace sluice::null {
namespace {

// Its encoder executes (Config::executes): there is nothing to run, so a command is done when recorded.
class Queue final : public hcq::CommandProcessor {
 public:
  explicit Queue(Config cfg) : CommandProcessor(std::move(cfg)) { start(); }
  ~Queue() override { shutdown(); }

 private:
  void encode_exec(const hcq::packet::ExecView&, Marks*) override {}
  void encode_copy(uint64_t, uint64_t, uint64_t, Marks*) override {}
  void encode_barrier() override {}
};

}  // namespace

std::unique_ptr<hcq::CommandProcessor> start_queue(hcq::CommandProcessor::Config cfg) {
  cfg.executes = true;
  return std::make_unique<Queue>(std::move(cfg));
}

}  // namespace sluice::null
