#include "backends/vulkan/queue.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "backends/vulkan/graph.h"
#include "backends/vulkan/program.h"
#include "hcq/error.h"

namespace sluice::vulkan {
namespace {

namespace pk = hcq::packet;

constexpr uint32_t kQueries = 4096;  // timestamp slots in flight per queue

// What a segment holds until it was applied: its command buffer and descriptor pools (kept for reuse)
// and how many timestamp slots it took.
struct Resources {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  bool recording = false;
  bool external = false;  // cmd belongs to the graph cache, not to the queue's free list
  std::vector<VkDescriptorPool> pools;
  uint32_t slots = 0;
};

class VkQueueImpl final : public hcq::CommandProcessor {
  using Marks = hcq::CommandProcessor::Marks;

 public:
  explicit VkQueueImpl(QueueConfig cfg)
      : hcq::CommandProcessor(cfg.processor), cfg_(std::move(cfg)), ctx_(*cfg_.ctx), vk_(ctx_.vk) {
    auto ti = vk_struct<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
    ti.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    auto si = vk_struct<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
    si.pNext = &ti;
    check(vk_.vkCreateSemaphore(ctx_.dev, &si, nullptr, &sem_), "vkCreateSemaphore");
    auto pi = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = cfg_.family;
    check(vk_.vkCreateCommandPool(ctx_.dev, &pi, nullptr, &cmd_pool_), "vkCreateCommandPool");
    if (cfg_.period_ns > 0) {
      auto qi = vk_struct<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = kQueries;
      check(vk_.vkCreateQueryPool(ctx_.dev, &qi, nullptr, &queries_), "vkCreateQueryPool");
    }
    if (cfg_.compute)
      graphs_ = std::make_unique<GraphCache>(
          ctx_, *cfg_.allocator, config().device_name, cfg_.family,
          [this] {
            uint64_t v = 0;
            check(ctx_.semaphore_value(sem_, &v), "vkGetSemaphoreCounterValue");
            return v;
          },
          [this](uint64_t v) {
            std::string error;
            while (!wait_segment(v, kPoll, error) && !abandoned())
              if (!error.empty()) throw DeviceError(error);
          });
    start();
  }

  ~VkQueueImpl() override {
    if (!shutdown()) {
      // The GPU may still run this queue's work: its objects stay alive rather than go under it.
      (void)graphs_.release();
      return;
    }
    graphs_.reset();
    for (VkDescriptorPool p : free_pools_) vk_.vkDestroyDescriptorPool(ctx_.dev, p, nullptr);
    if (queries_) vk_.vkDestroyQueryPool(ctx_.dev, queries_, nullptr);
    vk_.vkDestroyCommandPool(ctx_.dev, cmd_pool_, nullptr);
    vk_.vkDestroySemaphore(ctx_.dev, sem_, nullptr);
  }

 private:
  // --- The encoder (hcq::CommandProcessor: the recording thread) ---

  void encode_exec(const pk::ExecView& e, Marks* timing) override {
    const auto& prog = static_cast<const Program&>(*e.program);
    const std::vector<uint32_t>& bind = prog.bindings();
    std::vector<VkDescriptorBufferInfo> infos(bind.size());
    const uint64_t align = ctx_.props.limits.minStorageBufferOffsetAlignment;
    for (size_t i = 0; i < bind.size(); ++i) {
      BufferRef r = cfg_.allocator->resolve(e.bufs[bind[i]], "exec");
      SLUICE_CHECK_IN(hcq::Error, "exec", r.offset % align == 0)
          << config().device_name << ": buffer " << bind[i] << " of kernel '" << prog.name() << "' starts "
          << r.offset << " bytes into its allocation; storage buffers must start at a multiple of " << align;
      infos[i] = {r.buffer, r.offset, VK_WHOLE_SIZE};
    }
    before_command();
    profile_start(timing);
    vk_.vkCmdBindPipeline(cur_.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, prog.pipeline());
    if (!bind.empty()) {
      std::vector<VkWriteDescriptorSet> writes(
          bind.size(), vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET));
      for (size_t i = 0; i < bind.size(); ++i) {
        writes[i].dstBinding = bind[i];
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
      }
      const auto n = uint32_t(writes.size());
      if (prog.push_descriptors()) {
        vk_.vkCmdPushDescriptorSetKHR(cur_.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, prog.pipeline_layout(), 0, n,
                                      writes.data());
      } else {
        VkDescriptorSet set = allocate_set(prog.set_layout());
        for (auto& w : writes) w.dstSet = set;
        vk_.vkUpdateDescriptorSets(ctx_.dev, n, writes.data(), 0, nullptr);
        vk_.vkCmdBindDescriptorSets(cur_.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, prog.pipeline_layout(), 0, 1,
                                    &set, 0, nullptr);
      }
    }
    if (e.nvars) {
      std::vector<int32_t> vars(e.nvars);
      for (uint32_t v = 0; v < e.nvars; ++v) vars[v] = e.var(v);
      vk_.vkCmdPushConstants(cur_.cmd, prog.pipeline_layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, e.nvars * 4,
                             vars.data());
    }
    const auto& max = ctx_.props.limits.maxComputeWorkGroupCount;
    SLUICE_CHECK_IN(hcq::Error, "exec", e.global.x <= max[0] && e.global.y <= max[1] && e.global.z <= max[2])
        << config().device_name << ": kernel '" << prog.name() << "' launched with " << e.global
        << " work-groups; the device allows (" << max[0] << "," << max[1] << "," << max[2] << ")";
    vk_.vkCmdDispatch(cur_.cmd, e.global.x, e.global.y, e.global.z);
    profile_end(timing);
  }

  void encode_copy(uint64_t dst, uint64_t src, uint64_t size, Marks* timing) override {
    BufferRef d = cfg_.allocator->resolve(dst, "copy"), s = cfg_.allocator->resolve(src, "copy");
    SLUICE_CHECK_IN(hcq::Error, "copy", size <= d.size && size <= s.size)
        << config().device_name << ": copy of " << size << " bytes runs past its buffer (" << s.size
        << " bytes left at the source, " << d.size << " at the destination)";
    before_command();
    profile_start(timing);
    if (size) {
      VkBufferCopy c{s.offset, d.offset, size};
      vk_.vkCmdCopyBuffer(cur_.cmd, s.buffer, d.buffer, 1, &c);
    }
    profile_end(timing);
  }

  void encode_barrier() override {
    barrier(true);
    first_cmd_ = true;  // the next command needs no barrier of its own
  }

  // A signal or timestamp: a query at this point of the command buffer (queue.h: not on a CPU device).
  uint32_t encode_mark() override {
    if (!queries_ || cfg_.cpu_device) return kNoMark;
    begin();
    const uint32_t slot = take_slot();
    timestamp(slot, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    return slot;
  }

  bool encode_graph(uint64_t graph, std::span<const uint64_t> words,
                    std::vector<const hcq::Program*>& programs) override {
    if (!graphs_ || !GraphCache::supports(words)) return false;
    cur_.cmd = graphs_->prepare(graph, words, programs);
    cur_.external = cur_.cmd != VK_NULL_HANDLE;
    return cur_.external;
  }
  void drop_graph(uint64_t graph) override {
    if (graphs_) graphs_->forget(graph);
  }

  // A lost device, or a semaphore that cannot be waited for: nothing later on the queue can run.
  bool fatal(const std::string& e) const override {
    return e.find("VK_ERROR_DEVICE_LOST") != std::string::npos || e.rfind("[vkWaitSemaphores]", 0) == 0;
  }

  uint64_t submit_segment() override {
    Resources r = std::move(cur_);
    cur_ = Resources{};
    first_cmd_ = true;
    {
      // First in line for recycle_segment, whether or not the submit below succeeds.
      std::lock_guard lk(mu_);
      segs_.push_back(r);
    }
    if (r.recording) check(vk_.vkEndCommandBuffer(r.cmd), "vkEndCommandBuffer");
    // No wait: vkQueueSubmit's semaphore signal covers every command submitted earlier to the VkQueue, and
    // begin() put a barrier in front of the segment's commands.
    const uint64_t signal_value = last_submitted() + 1;
    auto ti = vk_struct<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &signal_value;
    auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.pNext = &ti;
    si.commandBufferCount = r.cmd ? 1 : 0;
    si.pCommandBuffers = &r.cmd;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &sem_;
    ctx_.submit(cfg_.queue, si, VK_NULL_HANDLE);
    if (r.external) graphs_->submitted(signal_value);
    return signal_value;
  }

  // Drops the command buffer being recorded (after an error): its commands never run.
  void discard_segment() override {
    if (!cur_.recording) {
      if (cur_.external) cur_.cmd = VK_NULL_HANDLE, cur_.external = false;
      return;
    }
    vk_.vkEndCommandBuffer(cur_.cmd);
    std::lock_guard lk(mu_);
    free_cmds_.push_back(cur_.cmd);
    cur_.cmd = VK_NULL_HANDLE;
    cur_.recording = false;
  }

  // --- Completion ---

  bool wait_segment(uint64_t token, std::chrono::nanoseconds slice, std::string& error) override {
    auto wi = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem_;
    wi.pValues = &token;
    const VkResult r = ctx_.wait_semaphores(wi, uint64_t(std::max<int64_t>(slice.count(), 0)));
    if (r == VK_SUCCESS) return true;
    if (r != VK_TIMEOUT)
      error = "[vkWaitSemaphores] " + config().device_name + " " + config().queue_name +
              ": failed: " + result_name(r);
    return false;
  }

  uint64_t finished_segment() override {
    uint64_t v = 0;
    return ctx_.semaphore_value(sem_, &v) == VK_SUCCESS ? v : 0;
  }

  uint64_t mark_ns(uint32_t slot) override {
    uint64_t t = 0;
    if (vk_.vkGetQueryPoolResults(ctx_.dev, queries_, slot, 1, 8, &t, 8, VK_QUERY_RESULT_64_BIT) !=
        VK_SUCCESS)
      return 0;
    return uint64_t(std::max<int64_t>(int64_t(double(t) * cfg_.period_ns) + cfg_.offset_ns, 1));
  }

  void recycle_segment(uint64_t) override {
    Resources r;
    {
      std::lock_guard lk(mu_);
      r = std::move(segs_.front());
      segs_.pop_front();
    }
    for (VkDescriptorPool p : r.pools) vk_.vkResetDescriptorPool(ctx_.dev, p, 0);
    std::lock_guard lk(mu_);
    if (r.cmd && !r.external) free_cmds_.push_back(r.cmd);
    free_pools_.insert(free_pools_.end(), r.pools.begin(), r.pools.end());
    slots_freed_ += r.slots;
    slots_cv_.notify_all();
  }

  // --- Recording helpers ---

  void begin() {
    if (cur_.recording) return;
    cur_.cmd = take_cmd();
    auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vk_.vkBeginCommandBuffer(cur_.cmd, &bi), "vkBeginCommandBuffer");
    cur_.recording = true;
    // A barrier's first scope is every command submitted earlier to the VkQueue, so this orders the
    // segment after the previous ones without a semaphore wait (which would put Mesa's queues into
    // threaded submission). A CPU device runs submissions one after another anyway (queue.h).
    if (!cfg_.cpu_device) barrier(false);
    first_cmd_ = true;
  }

  // A timestamp slot; when the ring is used up, what was recorded is submitted and the segments before
  // it give theirs back.
  uint32_t take_slot() {
    std::unique_lock lk(mu_);
    if (slots_taken_ - slots_freed_ >= kQueries) {
      lk.unlock();
      flush();
      lk.lock();
      while (slots_taken_ - slots_freed_ >= kQueries && !abandoned()) slots_cv_.wait_for(lk, kPoll);
      lk.unlock();
      begin();  // the flush ended the command buffer the caller is recording into
      lk.lock();
    }
    ++cur_.slots;
    return uint32_t(slots_taken_++ % kQueries);
  }

  void timestamp(uint32_t slot, VkPipelineStageFlagBits stage) {
    vk_.vkCmdResetQueryPool(cur_.cmd, queries_, slot, 1);
    vk_.vkCmdWriteTimestamp(cur_.cmd, stage, queries_, slot);
  }

  void barrier(bool host) {
    begin();
    auto mb = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask =
        VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | (host ? VK_ACCESS_HOST_READ_BIT : 0);
    VkPipelineStageFlags src = cfg_.compute
                                   ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT
                                   : VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkPipelineStageFlags dst = src | (host ? VK_PIPELINE_STAGE_HOST_BIT : 0);
    vk_.vkCmdPipelineBarrier(cur_.cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }

  // Commands of one hcq queue never overlap: each one after the first of a segment waits for the last.
  void before_command() {
    begin();
    if (!first_cmd_) barrier(false);
    first_cmd_ = false;
  }

  // A pair of consecutive slots around a profiled command (the device's queries; none: no record).
  void profile_start(Marks* timing) {
    if (!timing || !queries_) return;
    uint32_t a = take_slot(), b = take_slot();
    if (b != a + 1) {  // the ring wrapped between them: take a fresh pair
      a = take_slot(), b = take_slot();
    }
    timestamp(a, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
    timing->start = a;
  }
  void profile_end(Marks* timing) {
    if (!timing || timing->start == kNoMark) return;
    timing->end = timing->start + 1;
    timestamp(timing->end, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
  }

  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (cur_.pools.empty() || attempt == 1) cur_.pools.push_back(take_pool());
      auto ai = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
      ai.descriptorPool = cur_.pools.back();
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &layout;
      VkDescriptorSet set;
      VkResult r = vk_.vkAllocateDescriptorSets(ctx_.dev, &ai, &set);
      if (r == VK_SUCCESS) return set;
      if (attempt == 1 || (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL))
        check(r, "vkAllocateDescriptorSets");
    }
    return VK_NULL_HANDLE;
  }

  VkDescriptorPool take_pool() {
    {
      std::lock_guard lk(mu_);
      if (!free_pools_.empty()) {
        VkDescriptorPool p = free_pools_.back();
        free_pools_.pop_back();
        return p;
      }
    }
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4096};
    auto pi = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
    pi.maxSets = 256;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &size;
    VkDescriptorPool p;
    check(vk_.vkCreateDescriptorPool(ctx_.dev, &pi, nullptr, &p), "vkCreateDescriptorPool");
    return p;
  }

  VkCommandBuffer take_cmd() {
    VkCommandBuffer c = VK_NULL_HANDLE;
    {
      std::lock_guard lk(mu_);
      if (!free_cmds_.empty()) {
        c = free_cmds_.back();
        free_cmds_.pop_back();
      }
    }
    if (c) {
      check(vk_.vkResetCommandBuffer(c, 0), "vkResetCommandBuffer");
      return c;
    }
    auto ai = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
    ai.commandPool = cmd_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(vk_.vkAllocateCommandBuffers(ctx_.dev, &ai, &c), "vkAllocateCommandBuffers");
    return c;
  }

  QueueConfig cfg_;
  Context& ctx_;
  const DeviceTable& vk_;
  VkSemaphore sem_ = VK_NULL_HANDLE;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::unique_ptr<GraphCache> graphs_;  // compute queues: graph replays (graph.h)

  // Recording state: the recording thread's.
  Resources cur_;
  bool first_cmd_ = true;

  std::mutex mu_;  // everything below: the recording thread takes, the completing thread gives back
  std::condition_variable slots_cv_;
  std::deque<Resources> segs_;  // of the segments handed to the processor, oldest first
  uint64_t slots_taken_ = 0, slots_freed_ = 0;
  std::vector<VkCommandBuffer> free_cmds_;
  std::vector<VkDescriptorPool> free_pools_;
};

}  // namespace

std::unique_ptr<hcq::CommandProcessor> start_queue(QueueConfig cfg) {
  return std::make_unique<VkQueueImpl>(std::move(cfg));
}

}  // namespace sluice::vulkan
