#include "backends/vulkan/queue.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "backends/vulkan/graph.h"
#include "backends/vulkan/program.h"
#include "hcq/error.h"

namespace sluice::vulkan {
namespace {

namespace pk = hcq::packet;

constexpr uint32_t kQueries = 4096;                    // timestamp slots in flight per queue
constexpr auto kPoll = std::chrono::milliseconds(50);  // how often blocked threads look at the stop flags
// Segments in flight per queue. A caller that submits faster than the device runs, and never waits, is
// held back here rather than piling up command buffers (lavapipe: about 4 KB each, kept for reuse once
// done) and events without end: 1024 keep any device busy and cost a few MB.
constexpr size_t kMaxSegments = 1024;

// What the completion thread does once a segment finished, in record order.
struct Event {
  enum Kind : uint8_t { Signal, Timestamp, Fail, Profile, Retire };
  Event(Kind k, hcq::SignalRef s = {}, uint64_t v = 0, uint32_t slot = UINT32_MAX,
        const hcq::Program* p = nullptr, std::shared_ptr<std::string> err = nullptr)
      : kind(k), signal(std::move(s)), value(v), slot(slot), program(p), error(std::move(err)) {}
  Kind kind;
  hcq::SignalRef signal;        // not a Signal*: the Signal may be gone before the event applies (signal.h)
  uint64_t value;               // Signal/Retire: the value; Profile: bytes
  uint32_t slot;                // timestamp query (Profile: the start; the end is slot + 1)
  const hcq::Program* program;  // Profile: null for a copy
  std::shared_ptr<std::string> error;  // Fail
  uint64_t submission = 0;             // Profile: the command's timeline value and packet offset
  uint32_t at = 0;
};

struct Segment {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> pools;
  std::vector<Event> events;
  std::vector<const hcq::Program*> programs;
  uint32_t slots = 0;  // timestamp queries it took
  uint64_t value = 0;  // of the queue's semaphore once it finished
  uint64_t submit_ns = 0;
  bool recording = false;
  bool external = false;  // cmd belongs to the graph cache, not to the queue's free list
};

class VkQueueImpl final : public Queue {
 public:
  explicit VkQueueImpl(QueueConfig cfg) : cfg_(std::move(cfg)), ctx_(*cfg_.ctx), vk_(ctx_.vk) {
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
          ctx_, *cfg_.allocator, cfg_.device_name, cfg_.family,
          [this] {
            uint64_t v = 0;
            check(ctx_.semaphore_value(sem_, &v), "vkGetSemaphoreCounterValue");
            return v;
          },
          [this](uint64_t v) {
            if (auto err = wait_gpu(v)) throw DeviceError(*err);
          });
    worker_ = std::thread([this] { work(); });
    completer_ = std::thread([this] { complete(); });
  }

  ~VkQueueImpl() override {
    if (!shutdown()) {
      // The GPU may still run this queue's work: its objects stay alive rather than go under it.
      (void)graphs_.release();
      return;
    }
    for (auto& s : inflight_) recycle(s);
    graphs_.reset();
    for (VkDescriptorPool p : free_pools_) vk_.vkDestroyDescriptorPool(ctx_.dev, p, nullptr);
    if (queries_) vk_.vkDestroyQueryPool(ctx_.dev, queries_, nullptr);
    vk_.vkDestroyCommandPool(ctx_.dev, cmd_pool_, nullptr);
    vk_.vkDestroySemaphore(ctx_.dev, sem_, nullptr);
  }

  void close() override {
    closing_ = true;
    std::lock_guard lk(mu_);
    notify_all();
  }

  bool shutdown() override {
    if (shut_) return clean_;
    shut_ = true;
    close();
    const auto limit = cfg_.hang_timeout();
    bool hung = false;
    {
      // Drain: the worker empties its FIFO (its host waits give up, close()), the completion thread
      // retires every segment (unless abandoned). The wait for the GPU is bounded by the hang timeout,
      // counted while the oldest submitted segment stays the same.
      std::unique_lock lk(mu_);
      uint64_t front = 0;
      auto since = hcq::Clock::now();
      while (!(fifo_.empty() && !busy_ && inflight_.empty()) && !abandoned_) {
        cv_.wait_for(lk, kPoll);
        const uint64_t f = inflight_.empty() ? 0 : inflight_.front().value;
        const auto now = hcq::Clock::now();
        if (f == 0 || f != front) {
          front = f, since = now;
        } else if (now - since > limit) {
          hung = true;
          abandoned_ = true;
          break;
        }
      }
      stop_ = true;
    }
    notify_all();
    worker_.join();
    completer_.join();
    { std::lock_guard c(complete_mu_); }  // a host thread applying the last segments (wait_for) is done
    if (hung) {
      const std::string msg = "[~Device] " + cfg_.device_name + " was destroyed while " + cfg_.queue_name +
                              " held work the GPU did not finish within the hang timeout of " +
                              std::to_string(double(limit.count()) / 1e6) + " ms";
      for (const hcq::SignalRef& s : dropped_signals()) s.fail(msg);
      clean_ = false;
    } else if (abandoned_ && submitted_) {
      // Reset after a hang (device.h): its abandoned work must finish before its objects go, but a hung
      // GPU is not waited for without end.
      auto wi = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
      wi.semaphoreCount = 1;
      wi.pSemaphores = &sem_;
      wi.pValues = &submitted_;
      clean_ = ctx_.wait_semaphores(wi, uint64_t(limit.count())) != VK_TIMEOUT;
    }
    return clean_;
  }

  bool quiet() override {
    std::lock_guard lk(mu_);
    if (!inflight_.empty()) return false;
    if (waiting_on_) return waiting_on_.value() < waiting_for_ && !waiting_on_.failed();
    return !busy_ && fifo_.empty();
  }

  void push(std::span<const uint64_t> words, uint64_t tv, uint64_t graph) override {
    std::unique_lock lk(mu_);
    if (fifo_.empty() && !busy_ && ready(words)) {
      busy_ = true;  // the worker leaves the queue to this thread until it is done
      lk.unlock();
      process(words, tv, hcq::SubmissionSignals(words), graph);
      lk.lock();
      busy_ = false;
      if (!fifo_.empty()) work_cv_.notify_one();
      cv_.notify_all();
      return;
    }
    fifo_.push_back(
        {std::vector<uint64_t>(words.begin(), words.end()), tv, hcq::SubmissionSignals(words), graph});
    work_cv_.notify_one();
  }

  void forget_graph(uint64_t graph) override {
    std::lock_guard lk(mu_);
    forgotten_.push_back(graph);  // the thread that records drops it (GraphCache is not thread-safe)
  }

  QueueStatus status() override {
    std::lock_guard lk(mu_);
    QueueStatus st;
    if (waiting_on_) {
      st.phase = QueueStatus::Waiting;
      st.signal = waiting_on_;
      st.value = waiting_for_;
    }
    if (!inflight_.empty() && !inflight_.front().programs.empty()) {
      const Segment& s = inflight_.front();
      st.phase = QueueStatus::Running;
      for (size_t i = 0; i < s.programs.size(); ++i)
        st.kernels += (i ? ", '" : "'") + s.programs[i]->name() + "'";
      st.since_ns = std::max(s.submit_ns, last_done_ns_);
      st.token = s.value;
    }
    return st;
  }

  void wait_for(const hcq::Signal& s, uint64_t v, uint64_t tv, hcq::Clock::time_point deadline) override {
    uint64_t target = 0;
    {
      std::lock_guard lk(mu_);
      for (const Segment& seg : inflight_) {
        for (const Event& e : seg.events)
          if ((e.kind == Event::Signal && e.signal.refers_to(s) && e.value >= v) ||
              (tv && e.kind == Event::Retire && e.value >= tv)) {
            target = seg.value;
            break;
          }
        if (target || seg.value == 0) break;  // a segment never submitted completes on the other threads
      }
    }
    if (!target) return;
    auto wi = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem_;
    wi.pValues = &target;
    // In slices, so that a failed signal or an abandoned queue ends the wait (a hung GPU never answers).
    for (;;) {
      const auto now = hcq::Clock::now();
      if (now >= deadline || abandoned_ || s.failed()) return;
      const auto slice = std::min<hcq::Clock::duration>(deadline - now, kPoll);
      VkResult r = ctx_.wait_semaphores(wi, uint64_t(std::chrono::nanoseconds(slice).count()));
      if (r == VK_SUCCESS) break;
      if (r != VK_TIMEOUT) return;  // the completion thread sees the failure and reports it
    }
    std::lock_guard c(complete_mu_);
    drain(target, nullptr);
  }

  bool abandon(uint64_t token) override {
    std::lock_guard lk(mu_);
    if (inflight_.empty() || inflight_.front().value != token) return false;
    abandoned_ = true;
    notify_all();
    return true;
  }

  std::vector<hcq::SignalRef> dropped_signals() override {
    std::lock_guard lk(mu_);
    std::vector<hcq::SignalRef> out;
    for (const Segment& s : inflight_)
      for (const Event& e : s.events)
        if (e.kind == Event::Signal || e.kind == Event::Fail) out.push_back(e.signal);
    for (const Submission& sub : fifo_)
      for (hcq::SignalRef& r : sub.signals.written_from(0)) out.push_back(std::move(r));
    return out;
  }

 private:
  // Every wait of the submission is satisfied (or failed) already: it can run without blocking.
  static bool ready(std::span<const uint64_t> w) {
    for (pk::Ref r : pk::each(w))
      if (r.op == pk::Wait) {
        const auto* s = pk::ptr<const hcq::Signal>(r.p[1]);
        if (s->value() < r.p[2] && !s->failed()) return false;
      }
    return true;
  }

  void work() {
    std::unique_lock lk(mu_);
    for (;;) {
      work_cv_.wait(lk, [&] { return stop_ || abandoned_ || (!fifo_.empty() && !busy_); });
      if (stop_ || abandoned_) return;
      Submission sub = std::move(fifo_.front());
      fifo_.pop_front();
      busy_ = true;
      lk.unlock();
      process(sub.words, sub.tv, sub.signals, sub.graph);
      lk.lock();
      busy_ = false;
      cv_.notify_all();
    }
  }

  // --- Recording (one thread at a time: the worker, or a pusher while busy_) ---

  // The packets' signals are read through `signals`: the Signals themselves may be gone by now.
  void process(std::span<const uint64_t> w, uint64_t tv, const hcq::SubmissionSignals& signals,
               uint64_t graph) {
    std::shared_ptr<std::string> error;
    std::vector<uint64_t> forgotten;
    {
      std::lock_guard lk(mu_);
      error = lost_;
      forgotten.swap(forgotten_);
    }
    if (graphs_)
      for (uint64_t g : forgotten) graphs_->forget(g);
    size_t i = 0;           // where the submission stopped: the signals recorded from here on fail
    bool replayed = false;  // the graph cache's command buffer runs the whole submission
    if (!error && graph && graphs_ && !cfg_.profiling() && GraphCache::supports(w)) {
      try {
        cur_.cmd = graphs_->prepare(graph, w, cur_.programs);
        cur_.external = cur_.cmd != VK_NULL_HANDLE;
        replayed = cur_.external;
        if (replayed) i = w.size();
      } catch (const std::exception& e) {
        error = std::make_shared<std::string>(e.what());
        if (std::string(e.what()).find("VK_ERROR_DEVICE_LOST") != std::string::npos) set_lost(error);
        cur_.programs.clear();
      }
    }
    for (pk::Ref r : pk::each(w)) {
      if (error || replayed) break;
      const uint64_t* p = r.p;
      i = r.at + pk::words(p[0]);
      tv_ = tv, at_ = r.at;
      try {
        switch (r.op) {
          case pk::Wait: error = wait(signals.at(r.at), p[2]); break;
          case pk::Signal: event(Event(Event::Signal, signals.at(r.at), p[2]), true); break;
          case pk::Timestamp: event(Event(Event::Timestamp, signals.at(r.at)), true); break;
          case pk::Exec: exec(pk::ExecView(p)); break;
          case pk::Copy: copy(p[1], p[2], p[3]); break;
          case pk::Barrier:
            barrier(true);
            first_cmd_ = true;  // the next command needs no barrier of its own
            break;
          default: break;
        }
      } catch (const std::exception& e) {
        error = std::make_shared<std::string>(e.what());
        if (std::string(e.what()).find("VK_ERROR_DEVICE_LOST") != std::string::npos) set_lost(error);
        if (cur_.recording) discard();
        break;
      }
    }
    // The rest of a failed submission is skipped: its signals fail; it still retires in order.
    for (hcq::SignalRef& s : signals.written_from(i))
      cur_.events.push_back(Event(Event::Fail, std::move(s), 0, UINT32_MAX, nullptr, error));
    cur_.events.push_back(Event(Event::Retire, {}, tv));
    try {
      flush();
    } catch (const std::exception& e) {
      // The segment could not be submitted: hand its events to the completion thread as failures.
      auto err = std::make_shared<std::string>(e.what());
      if (std::string(e.what()).find("VK_ERROR_DEVICE_LOST") != std::string::npos) set_lost(err);
      for (Event& ev : cur_.events)
        if (ev.kind == Event::Signal) ev.kind = Event::Fail, ev.error = err;
      if (cur_.recording) discard();
      flush_host_only();
    }
  }

  void set_lost(const std::shared_ptr<std::string>& e) {
    std::lock_guard lk(mu_);
    if (!lost_) lost_ = e;
  }

  // Host-side wait in the worker. Returns the error that fails the submission, if any.
  std::shared_ptr<std::string> wait(const hcq::SignalRef& s, uint64_t v) {
    if (s.value() >= v && !s.failed()) return nullptr;
    flush();  // earlier work must not wait behind the signal
    {
      std::lock_guard lk(mu_);
      waiting_on_ = s, waiting_for_ = v;
    }
    bool given_up = false;
    while (!s.wait_until(v, hcq::Clock::now() + kPoll) && !abandoned_) {
      // The device is being destroyed and nothing of it can write s any more: only the host could, and a
      // destructor does not wait for the host (queue.h: close).
      if (closing_ && cfg_.settled() && s.value() < v && !s.failed()) {
        given_up = true;
        break;
      }
    }
    {
      std::lock_guard lk(mu_);
      waiting_on_ = {};
    }
    if (s.failed()) return std::make_shared<std::string>(s.error());
    if (given_up)
      return std::make_shared<std::string>("[~Device] " + cfg_.device_name + " was destroyed while " +
                                           cfg_.queue_name + " waited for signal '" + s.name() +
                                           "' to reach " + std::to_string(v));
    if (abandoned_)
      return std::make_shared<std::string>("[wait] " + cfg_.device_name + ": " + cfg_.queue_name +
                                           " was reset");
    return nullptr;
  }

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

  uint32_t take_slot() {
    std::unique_lock lk(mu_);
    if (slots_taken_ - slots_freed_ >= kQueries) {
      lk.unlock();
      flush();
      lk.lock();
      cv_.wait(lk, [&] { return slots_taken_ - slots_freed_ < kQueries || abandoned_; });
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

  // A signal or timestamp: a query at this point of the command buffer (queue.h: not on a CPU device).
  void event(Event e, bool stamp) {
    if (stamp && queries_ && !cfg_.cpu_device) {
      begin();
      e.slot = take_slot();
      timestamp(e.slot, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    }
    cur_.events.push_back(std::move(e));
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

  uint32_t profile_start() {
    if (!queries_ || !cfg_.profiling()) return UINT32_MAX;
    uint32_t a = take_slot(), b = take_slot();
    if (b != a + 1) {  // the ring wrapped between them: take a fresh pair
      a = take_slot(), b = take_slot();
    }
    timestamp(a, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
    return a;
  }
  void profile_end(uint32_t slot, const hcq::Program* p, uint64_t bytes) {
    if (slot == UINT32_MAX) return;
    timestamp(slot + 1, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    cur_.events.push_back(Event(Event::Profile, {}, bytes, slot, p));
    cur_.events.back().submission = tv_, cur_.events.back().at = at_;
  }

  void exec(const pk::ExecView& e) {
    const auto& prog = static_cast<const Program&>(*e.program);
    const std::vector<uint32_t>& bind = prog.bindings();
    std::vector<VkDescriptorBufferInfo> infos(bind.size());
    const uint64_t align = ctx_.props.limits.minStorageBufferOffsetAlignment;
    for (size_t i = 0; i < bind.size(); ++i) {
      BufferRef r = cfg_.allocator->resolve(e.bufs[bind[i]], "exec");
      SLUICE_CHECK_IN(hcq::Error, "exec", r.offset % align == 0)
          << cfg_.device_name << ": buffer " << bind[i] << " of kernel '" << prog.name() << "' starts "
          << r.offset << " bytes into its allocation; storage buffers must start at a multiple of " << align;
      infos[i] = {r.buffer, r.offset, VK_WHOLE_SIZE};
    }
    before_command();
    uint32_t slot = profile_start();
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
        << cfg_.device_name << ": kernel '" << prog.name() << "' launched with " << e.global
        << " work-groups; the device allows (" << max[0] << "," << max[1] << "," << max[2] << ")";
    vk_.vkCmdDispatch(cur_.cmd, e.global.x, e.global.y, e.global.z);
    profile_end(slot, &prog, 0);
    cur_.programs.push_back(&prog);
  }

  void copy(uint64_t dst, uint64_t src, uint64_t size) {
    BufferRef d = cfg_.allocator->resolve(dst, "copy"), s = cfg_.allocator->resolve(src, "copy");
    SLUICE_CHECK_IN(hcq::Error, "copy", size <= d.size && size <= s.size)
        << cfg_.device_name << ": copy of " << size << " bytes runs past its buffer (" << s.size
        << " bytes left at the source, " << d.size << " at the destination)";
    before_command();
    uint32_t slot = profile_start();
    if (size) {
      VkBufferCopy c{s.offset, d.offset, size};
      vk_.vkCmdCopyBuffer(cur_.cmd, s.buffer, d.buffer, 1, &c);
    }
    profile_end(slot, nullptr, size);
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

  // Drops the command buffer being recorded (after an error): its commands never run.
  void discard() {
    vk_.vkEndCommandBuffer(cur_.cmd);
    std::lock_guard lk(mu_);
    free_cmds_.push_back(cur_.cmd);
    cur_.cmd = VK_NULL_HANDLE;
    cur_.recording = false;
    cur_.programs.clear();
    for (Event& e : cur_.events) e.slot = UINT32_MAX;
    for (auto it = cur_.events.begin(); it != cur_.events.end();)
      it = it->kind == Event::Profile ? cur_.events.erase(it) : it + 1;
  }

  // Submits the segment recorded so far (if it holds anything) to the GPU and hands it to the completion
  // thread.
  void flush() {
    if (!cur_.recording && cur_.events.empty()) return;
    make_room();
    if (cur_.recording) check(vk_.vkEndCommandBuffer(cur_.cmd), "vkEndCommandBuffer");
    cur_.recording = false;
    // No wait: vkQueueSubmit's semaphore signal covers every command submitted earlier to the VkQueue, and
    // begin() put a barrier in front of the segment's commands.
    const uint64_t signal_value = submitted_ + 1;
    auto ti = vk_struct<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &signal_value;
    auto si = vk_struct<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    si.pNext = &ti;
    si.commandBufferCount = cur_.cmd ? 1 : 0;
    si.pCommandBuffers = &cur_.cmd;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &sem_;
    cur_.submit_ns = hcq::now_ns();
    ctx_.submit(cfg_.queue, si, VK_NULL_HANDLE);
    if (cur_.external) graphs_->submitted(signal_value);
    submitted_ = signal_value;
    cur_.value = signal_value;
    enqueue();
  }

  // For a segment that cannot be submitted: its semaphore value is signalled from the host once the one
  // before it finished, so it still completes in order.
  void flush_host_only() {
    make_room();
    cur_.submit_ns = hcq::now_ns();
    cur_.value = 0;  // the completion thread applies it without waiting on the semaphore
    enqueue();
  }

  // Blocks while kMaxSegments are in flight, until the completion thread retired one (or the queue was
  // abandoned: its segments never retire).
  void make_room() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return inflight_.size() < kMaxSegments || abandoned_; });
  }

  void enqueue() {
    std::lock_guard lk(mu_);
    inflight_.push_back(std::move(cur_));
    cur_ = Segment{};
    done_cv_.notify_one();
  }

  // --- Completion ---

  // Segments finish in the order they were submitted; whichever thread sees one finished applies it
  // (complete_mu_ keeps that in order): the completion thread, which blocks in vkWaitSemaphores, or a
  // host thread waiting on one of the queue's signals (wait_for), so that it wakes straight from the
  // driver. The submitting thread leaves completions alone: it is the one that limits eager throughput.
  void complete() {
    std::unique_lock lk(mu_);
    for (;;) {
      done_cv_.wait(lk, [&] { return stop_ || abandoned_ || !inflight_.empty(); });
      if (abandoned_ || (stop_ && inflight_.empty())) return;
      const uint64_t value = inflight_.front().value;
      lk.unlock();
      std::shared_ptr<std::string> error = value ? wait_gpu(value) : nullptr;
      uint64_t reached = value;
      if (value && !error) ctx_.semaphore_value(sem_, &reached);  // later segments may be done too
      {
        std::lock_guard c(complete_mu_);
        drain(std::max(reached, value), error);
      }
      lk.lock();
    }
  }

  // Applies the segments at the front of inflight_ that are done: semaphore value <= `reached` (0: a
  // segment that was never submitted). `error` (the wait for `reached` failed) fails the front one.
  // Called with complete_mu_ held.
  void drain(uint64_t reached, std::shared_ptr<std::string> error) {
    for (;;) {
      Segment s;
      {
        std::lock_guard lk(mu_);
        if (abandoned_ || inflight_.empty()) return;  // abandoned: the device failed its signals
        const Segment& f = inflight_.front();
        if (!error && f.value > reached) return;
        if (error && f.value > reached && f.value != 0) return;
        s = std::move(inflight_.front());
        inflight_.pop_front();
        last_done_ns_ = hcq::now_ns();
      }
      apply(s, error);
      recycle(s);
      error = nullptr;
      std::lock_guard lk(mu_);
      slots_freed_ += s.slots;
      cv_.notify_all();
    }
  }

  // Waits for the semaphore to reach `value`; returns an error if the device was lost.
  std::shared_ptr<std::string> wait_gpu(uint64_t value) {
    auto wi = vk_struct<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem_;
    wi.pValues = &value;
    for (;;) {
      VkResult r = ctx_.wait_semaphores(wi, uint64_t(std::chrono::nanoseconds(kPoll).count()));
      if (r == VK_SUCCESS) return nullptr;
      if (r == VK_TIMEOUT) {
        if (abandoned_) return nullptr;
        continue;
      }
      auto err = std::make_shared<std::string>("[vkWaitSemaphores] " + cfg_.device_name + " " +
                                               cfg_.queue_name + ": failed: " + result_name(r));
      std::lock_guard lk(mu_);
      if (!lost_) lost_ = err;
      return err;
    }
  }

  void apply(Segment& s, const std::shared_ptr<std::string>& error) {
    const uint64_t done = hcq::now_ns();
    std::vector<uint64_t> ticks;
    auto ns_of = [&](uint32_t slot) -> uint64_t {
      if (slot == UINT32_MAX || !queries_ || error) return done;
      uint64_t t = 0;
      if (vk_.vkGetQueryPoolResults(ctx_.dev, queries_, slot, 1, 8, &t, 8, VK_QUERY_RESULT_64_BIT) !=
          VK_SUCCESS)
        return done;
      // Clamped into the window in which the host saw the segment run: a calibration error never puts a
      // device timestamp before the submit or after the host saw it done.
      auto ns = int64_t(double(t) * cfg_.period_ns) + cfg_.offset_ns;
      return std::clamp<uint64_t>(uint64_t(std::max<int64_t>(ns, 0)), s.submit_ns, done);
    };
    for (const Event& e : s.events) {
      switch (e.kind) {
        case Event::Signal:
          if (error)
            e.signal.fail(*error);
          else
            e.signal.device_write(e.value, ns_of(e.slot));
          break;
        case Event::Timestamp:
          if (!error) e.signal.device_timestamp(ns_of(e.slot));
          break;
        case Event::Fail: e.signal.fail(*e.error); break;
        case Event::Profile:
          if (!error)
            cfg_.profile({cfg_.device_name, cfg_.queue_name, e.program ? e.program->name() : "copy",
                          ns_of(e.slot), ns_of(e.slot + 1), e.value, e.submission, e.at,
                          e.program ? hcq::Transfer::None : hcq::Transfer::DeviceToDevice});
          break;
        case Event::Retire: cfg_.retire(e.value, done); break;
      }
    }
  }

  void recycle(Segment& s) {
    for (VkDescriptorPool p : s.pools) vk_.vkResetDescriptorPool(ctx_.dev, p, 0);
    std::lock_guard lk(mu_);
    if (s.cmd && !s.external) free_cmds_.push_back(s.cmd);
    free_pools_.insert(free_pools_.end(), s.pools.begin(), s.pools.end());
    s.cmd = VK_NULL_HANDLE;
    s.pools.clear();
  }

  QueueConfig cfg_;
  Context& ctx_;
  const DeviceTable& vk_;
  VkSemaphore sem_ = VK_NULL_HANDLE;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;

  // Recording state: touched only by the thread that holds busy_.
  Segment cur_;
  bool first_cmd_ = true;
  uint64_t submitted_ = 0;  // the semaphore value of the last submitted segment
  uint64_t tv_ = 0;         // the packet being recorded: its submission's timeline value, its offset
  uint32_t at_ = 0;

  std::mutex mu_;  // everything below
  // Each waiter has its own condition variable, so a notification wakes only the thread it is for.
  std::condition_variable work_cv_;  // the worker: fifo_, busy_, stop_, abandoned_
  std::condition_variable done_cv_;  // the completion thread: inflight_, stop_, abandoned_
  std::condition_variable cv_;       // the rest: slots and segments freed, the queue drained (destructor)
  void notify_all() {
    work_cv_.notify_all();
    done_cv_.notify_all();
    cv_.notify_all();
  }
  struct Submission {
    std::vector<uint64_t> words;
    uint64_t tv;
    hcq::SubmissionSignals signals;  // referenced at push, while the caller kept them alive
    uint64_t graph;                  // the hcq::Graph it replays, 0: none
  };
  std::vector<uint64_t> forgotten_;  // hcq::Graphs destroyed, for the recording thread to drop
  std::deque<Submission> fifo_;
  bool busy_ = false, stop_ = false;
  std::atomic<bool> abandoned_{false};
  std::atomic<bool> closing_{false};  // close(): host waits give up once the device is settled
  bool shut_ = false, clean_ = true;  // shutdown() ran; its answer (destructor's thread only)
  hcq::SignalRef waiting_on_;
  uint64_t waiting_for_ = 0;
  std::deque<Segment> inflight_;
  std::shared_ptr<std::string> lost_;  // set once the device is lost: later work fails with it
  uint64_t last_done_ns_ = 0;
  uint64_t slots_taken_ = 0, slots_freed_ = 0;
  std::vector<VkCommandBuffer> free_cmds_;
  std::vector<VkDescriptorPool> free_pools_;
  std::mutex complete_mu_;              // held while applying finished segments (drain)
  std::unique_ptr<GraphCache> graphs_;  // compute queues: graph replays (graph.h)
  std::thread worker_, completer_;
};

}  // namespace

std::unique_ptr<Queue> start_queue(QueueConfig cfg) { return std::make_unique<VkQueueImpl>(std::move(cfg)); }

}  // namespace sluice::vulkan
