#pragma once
// What the simulated libamdhip64 (hip_sim_driver.cpp) counts and how a test steers it: the library
// exports `sim_hip::State* sim_hip_state()`. One test at a time steers it; the counters are written by
// the device's threads.
#include <atomic>
#include <cstdint>

namespace sim_hip {

struct State {
  // Steering.
  int memops = 1;              // hipDeviceAttributeCanUseStreamWaitValue
  bool refuse_graphs = false;  // hipGraphAddKernelNode fails with hipErrorInvalidDeviceFunction
  // Counters.
  std::atomic<int> rejected{0};  // calls the real runtime would fail (a wrong argument of ours)
  std::atomic<int> launches{0}, graph_launches{0}, nodes_added{0}, nodes_updated{0};
  std::atomic<int> stream_waits{0}, signal_words{0}, set_device{0};
  // The launch sizes of the last kernel node added or updated.
  std::atomic<uint32_t> last_grid[3] = {}, last_block[3] = {};

  void reset() {
    memops = 1;
    refuse_graphs = false;
    for (std::atomic<int>* c : {&rejected, &launches, &graph_launches, &nodes_added, &nodes_updated,
                                &stream_waits, &signal_words, &set_device})
      c->store(0);
    for (int i = 0; i < 3; ++i) last_grid[i] = last_block[i] = 0;
  }
};

}  // namespace sim_hip
