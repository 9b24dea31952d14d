#pragma once
// Graph replays as pre-recorded command buffers (DESIGN.md §4). hcq::Graph (hcq/graph.h) records a fixed
// list of kernels and copies into one queue and submits it again with patched arguments, telling the
// device which graph it replays (Device::submit_graph). A graph of at least two exec or copy commands
// (one memory_barrier between each two) runs as a command buffer recorded from its items on its first
// replay, and later replays patch what the recorded commands read instead of recording again:
//
// | patch           | how a replay applies it                                                          |
// |-----------------|----------------------------------------------------------------------------------|
// | kernel buffer   | vkUpdateDescriptorSets on the exec's set (program.h, graph()); recorded again     |
// |                 | unless the device has update-after-bind storage buffers (lavapipe does not)      |
// | kernel variable | memcpy into the exec's slice of a host-coherent buffer the kernel reads them from |
// | launch size     | the command buffer is recorded again                                             |
// | copy address    | the command buffer is recorded again                                             |
//
// Signal and wait values are not in the recorded commands: they are submit-time parameters (queue.h).
// A recorded command buffer in flight is never touched: an entry keeps up to kInstances copies and a
// replay takes one whose last submission finished (the queue's semaphore says which), preferring one
// recorded with the same buffers, so replays pipeline and a graph fed from alternating buffers is not
// recorded again on each replay.
//
// Entries are keyed by hcq::Graph::id() and dropped when the graph is destroyed (forget), once their
// copies finished. An entry holds its programs' graph variants, so its recordings never outlive the
// pipelines they use; entries of freed programs are dropped when a new entry is made, and beyond
// kMaxEntries the least recently used one. Ordinary submissions never run as recorded graphs.
//
// Threading: not thread-safe; the queue calls it from the thread that records (queue.cpp). Failures: a
// failing Vulkan call throws DeviceError naming the call (driver.h); a replay that cannot be patched
// throws hcq::Error as the eager path would (an address in no live buffer, a launch size past the limit).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backends/vulkan/allocator.h"
#include "backends/vulkan/context.h"
#include "hcq/program.h"

namespace sluice::vulkan {

class GraphCache {
 public:
  // `completed()` reads the queue's timeline semaphore (throws if the device is lost); `wait(v)` blocks
  // until it reaches v (throws on failure).
  GraphCache(Context& ctx, Allocator& allocator, std::string device, uint32_t family,
             std::function<uint64_t()> completed, std::function<void(uint64_t)> wait);
  ~GraphCache();  // the caller makes sure nothing it handed out is still running
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Whether a graph's recorded queue (its packets, hcq/queue.h) replays as a recorded command buffer.
  static bool supports(std::span<const uint64_t> words);

  // The command buffer to submit for the replay of hcq::Graph `graph` (words: its recorded queue),
  // patched; `programs` receives the kernels it runs. The caller submits it, then calls submitted() with
  // the semaphore value that marks it done. Null when a kernel has no graph variant (program.h): the
  // caller records it as usual.
  VkCommandBuffer prepare(uint64_t graph, std::span<const uint64_t> words,
                          std::vector<const hcq::Program*>& programs);
  void submitted(uint64_t value);
  // The hcq::Graph is gone: drops its entry once its copies finished.
  void forget(uint64_t graph);

 private:
  struct Instance;
  struct Entry;
  static constexpr size_t kInstances = 4, kMaxEntries = 64;

  Instance& take(Entry& e, std::span<const uint64_t> words);
  static bool matches(const Instance& in, std::span<const uint64_t> words);
  void record(Instance& in);
  void patch(const Entry& e, Instance& in, std::span<const uint64_t> words);
  void destroy(Instance& in);
  void drop(Entry& e);

  Context& ctx_;
  Allocator& allocator_;
  std::string device_;
  std::function<uint64_t()> completed_;
  std::function<void(uint64_t)> wait_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> spare_;  // of dropped instances, for the next ones (graph.cpp: destroy)
  uint32_t host_type_ = UINT32_MAX;
  std::vector<std::unique_ptr<Entry>> entries_;  // most recently used last
  Instance* last_ = nullptr;                     // handed out by the last prepare()
};

}  // namespace sluice::vulkan
