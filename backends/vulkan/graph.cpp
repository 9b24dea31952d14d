#include "backends/vulkan/graph.h"

#include <algorithm>
#include <cstring>

#include "backends/vulkan/program.h"
#include "hcq/error.h"
#include "hcq/queue.h"

namespace sluice::vulkan {
namespace {

namespace pk = hcq::packet;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

// One recorded command of an instance and what it was recorded (or last patched) with. Buffers are
// compared by address, not VkBuffer: the allocator never hands out an address twice (allocator.h), while
// a driver may reuse a destroyed buffer's handle.
struct GraphCmd {
  uint8_t op = 0;
  const Program* program = nullptr;       // exec (never used once the program is freed: see Entry)
  const Program::Graph* graph = nullptr;  // exec: its variant, kept alive by the entry
  VkDescriptorSet set = VK_NULL_HANDLE;
  std::vector<uint64_t> bufs;  // exec: the address of each binding of program->bindings(); 0: none yet
  hcq::Dims global;
  uint64_t vars_at = 0;        // exec: the variables' offset in the instance's params buffer
  uint64_t dst = 0, src = 0;   // copy: addresses
  BufferRef dst_ref, src_ref;  // copy: what they resolved to
  uint64_t size = 0;
};

struct GraphCache::Instance {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkBuffer params = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t* mapped = nullptr;
  std::vector<GraphCmd> cmds;
  uint64_t busy_until = 0;  // the semaphore value of its last submission
  bool recorded = false;
};

struct GraphCache::Entry {
  uint64_t graph = 0;                                         // hcq::Graph::id()
  std::vector<std::shared_ptr<const Program::Graph>> graphs;  // of each exec, in order
  std::vector<std::unique_ptr<Instance>> instances;
};

GraphCache::GraphCache(Context& ctx, Allocator& allocator, std::string device, uint32_t family,
                       std::function<uint64_t()> completed, std::function<void(uint64_t)> wait)
    : ctx_(ctx),
      allocator_(allocator),
      device_(std::move(device)),
      completed_(std::move(completed)),
      wait_(std::move(wait)) {
  auto pi = vk_struct<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = family;
  check(ctx_.vk.vkCreateCommandPool(ctx_.dev, &pi, nullptr, &pool_), "vkCreateCommandPool");
  for (uint32_t i = 0; i < ctx_.mem.memoryTypeCount && host_type_ == UINT32_MAX; ++i) {
    auto f = ctx_.mem.memoryTypes[i].propertyFlags;
    if ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
      host_type_ = i;
  }
}

GraphCache::~GraphCache() {
  for (auto& e : entries_)
    for (auto& in : e->instances) destroy(*in);
  entries_.clear();  // the graph variants go after the recordings that use them
  ctx_.vk.vkDestroyCommandPool(ctx_.dev, pool_, nullptr);
}

bool GraphCache::supports(std::span<const uint64_t> words) {
  size_t n = 0;  // packets
  for (pk::Ref r : pk::each(words)) {
    if (n++ % 2 ? r.op != pk::Barrier : r.op != pk::Exec && r.op != pk::Copy) return false;
  }
  return n >= 3 && n % 2 == 1;
}

void GraphCache::destroy(Instance& in) {
  const auto& vk = ctx_.vk;
  // Kept for the next instance rather than freed: with the validation layer on, lavapipe (Mesa 22.3)
  // crashes in vkFreeCommandBuffers on a command buffer recorded more than once, while
  // vkDestroyCommandPool frees the same buffers without trouble.
  if (in.cmd) spare_.push_back(in.cmd);
  if (in.pool) vk.vkDestroyDescriptorPool(ctx_.dev, in.pool, nullptr);
  if (in.params) vk.vkDestroyBuffer(ctx_.dev, in.params, nullptr);
  if (in.memory) vk.vkFreeMemory(ctx_.dev, in.memory, nullptr);
  in = Instance{};
}

// Frees an entry's recordings once they finished.
void GraphCache::drop(Entry& e) {
  for (auto& in : e.instances) {
    if (in->busy_until) wait_(in->busy_until);
    destroy(*in);
  }
}

// Whether the instance was recorded with the buffers, launch sizes and copies of `words` (then a replay
// needs no recording, whatever the device).
bool GraphCache::matches(const Instance& in, std::span<const uint64_t> words) {
  if (!in.recorded) return false;
  size_t ci = 0;
  for (pk::Ref r : pk::each(words)) {
    const GraphCmd& c = in.cmds[ci++];
    if (c.op == pk::Copy && (r.p[1] != c.dst || r.p[2] != c.src || r.p[3] != c.size)) return false;
    if (c.op != pk::Exec) continue;
    pk::ExecView e(r.p);
    if (!(e.global == c.global)) return false;
    const std::vector<uint32_t>& bind = c.program->bindings();
    for (size_t b = 0; b < bind.size(); ++b)
      if (e.bufs[bind[b]] != c.bufs[b]) return false;
  }
  return true;
}

// A copy that is not in flight: one recorded with these inputs if there is one (a graph fed from
// alternating buffers keeps a recording per set), else any.
GraphCache::Instance& GraphCache::take(Entry& e, std::span<const uint64_t> words) {
  uint64_t done = 0;
  bool read = false;
  Instance* any = nullptr;
  for (auto& in : e.instances) {
    if (in->busy_until != 0) {
      if (!read) done = completed_(), read = true;
      if (in->busy_until > done) continue;
    }
    if (matches(*in, words)) return *in;
    if (!any) any = in.get();
  }
  if (any) return *any;
  if (e.instances.size() < kInstances) return *e.instances.emplace_back(std::make_unique<Instance>());
  auto& oldest = *std::min_element(e.instances.begin(), e.instances.end(), [](const auto& a, const auto& b) {
    return a->busy_until < b->busy_until;
  });
  wait_(oldest->busy_until);
  return *oldest;
}

void GraphCache::forget(uint64_t graph) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e->graph == graph; });
  if (it == entries_.end()) return;
  drop(**it);
  entries_.erase(it);
}

VkCommandBuffer GraphCache::prepare(uint64_t graph, std::span<const uint64_t> words,
                                    std::vector<const hcq::Program*>& programs) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e->graph == graph; });
  if (it == entries_.end()) {
    // Entries whose programs were freed (only the entry holds their variants now) never match again.
    for (auto e = entries_.begin(); e != entries_.end();) {
      bool dead = std::any_of((*e)->graphs.begin(), (*e)->graphs.end(),
                              [](const auto& g) { return g.use_count() == 1; });
      if (dead) drop(**e);
      e = dead ? entries_.erase(e) : e + 1;
    }
    if (entries_.size() >= kMaxEntries) {
      drop(*entries_.front());
      entries_.erase(entries_.begin());
    }
    entries_.push_back(std::make_unique<Entry>());
    entries_.back()->graph = graph;
  } else if (it + 1 != entries_.end()) {
    std::rotate(it, it + 1, entries_.end());  // most recently used last
  }
  Entry& e = *entries_.back();
  if (e.graphs.empty()) {
    std::vector<std::shared_ptr<const Program::Graph>> graphs;
    for (pk::Ref r : pk::each(words)) {
      if (r.op != pk::Exec) continue;
      try {
        graphs.push_back(static_cast<const Program*>(pk::ExecView(r.p).program)->graph());
      } catch (const std::exception&) {
        return VK_NULL_HANDLE;  // the eager path runs it (and reports what is wrong, if anything)
      }
      if (!graphs.back()) return VK_NULL_HANDLE;
    }
    e.graphs = std::move(graphs);
  }
  Instance& in = take(e, words);
  try {
    patch(e, in, words);
  } catch (...) {
    destroy(in);  // whatever was half patched is rebuilt from scratch next time
    throw;
  }
  for (const GraphCmd& c : in.cmds)
    if (c.program) programs.push_back(c.program);
  last_ = &in;
  return in.cmd;
}

void GraphCache::submitted(uint64_t value) {
  if (last_) last_->busy_until = value;
  last_ = nullptr;
}

// Brings the instance up to `words`: descriptors and variables in place, recorded again where a launch
// size or a copy changed (or it was never recorded).
void GraphCache::patch(const Entry& entry, Instance& in, std::span<const uint64_t> words) {
  const auto& vk = ctx_.vk;
  const uint64_t align = std::max<uint64_t>(ctx_.props.limits.minStorageBufferOffsetAlignment, 16);
  if (!in.cmd) {
    // First use: the command buffer, one descriptor set per exec and the variables' buffer.
    uint32_t sets = 0, descriptors = 0;
    size_t execs = 0;
    uint64_t params = 0;
    for (pk::Ref r : pk::each(words)) {
      GraphCmd c;
      c.op = r.op;
      if (c.op == pk::Exec) {
        pk::ExecView e(r.p);
        c.program = static_cast<const Program*>(e.program);
        c.graph = entry.graphs.at(execs++).get();
        c.bufs.resize(c.program->bindings().size());
        descriptors += uint32_t(c.bufs.size()) + (e.nvars ? 1 : 0);
        if (!c.bufs.empty() || e.nvars) ++sets;
        c.vars_at = params;
        params += e.nvars ? align_up(e.nvars * 4ull, align) : 0;
      }
      in.cmds.push_back(std::move(c));
    }
    if (!spare_.empty()) {
      in.cmd = spare_.back();  // record() resets it
      spare_.pop_back();
    } else {
      auto ai = vk_struct<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
      ai.commandPool = pool_;
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = 1;
      check(vk.vkAllocateCommandBuffers(ctx_.dev, &ai, &in.cmd), "vkAllocateCommandBuffers");
    }
    if (sets) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
      auto pi = vk_struct<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
      pi.flags = ctx_.update_after_bind ? VK_DESCRIPTOR_POOL_CREATE_UPDATE_AFTER_BIND_BIT : 0;
      pi.maxSets = sets;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      check(vk.vkCreateDescriptorPool(ctx_.dev, &pi, nullptr, &in.pool), "vkCreateDescriptorPool");
    }
    if (params) {
      SLUICE_CHECK_AS(DeviceError, host_type_ != UINT32_MAX)
          << device_ << ": no host-visible coherent memory for a graph's kernel variables";
      auto bi = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
      bi.size = params;
      bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
      check(vk.vkCreateBuffer(ctx_.dev, &bi, nullptr, &in.params), "vkCreateBuffer");
      VkMemoryRequirements req;
      vk.vkGetBufferMemoryRequirements(ctx_.dev, in.params, &req);
      auto mi = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
      mi.allocationSize = req.size;
      mi.memoryTypeIndex = host_type_;
      check(vk.vkAllocateMemory(ctx_.dev, &mi, nullptr, &in.memory), "vkAllocateMemory");
      check(vk.vkBindBufferMemory(ctx_.dev, in.params, in.memory, 0), "vkBindBufferMemory");
      void* p = nullptr;
      check(vk.vkMapMemory(ctx_.dev, in.memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
      in.mapped = static_cast<uint8_t*>(p);
    }
  }

  // Descriptors of buffers that moved (all of them the first time), and the variables.
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  infos.reserve(64);
  bool rerecord = !in.recorded;
  size_t ci = 0;
  for (pk::Ref r : pk::each(words)) {
    GraphCmd& c = in.cmds[ci++];
    const uint64_t* p = r.p;
    if (c.op == pk::Copy) {
      BufferRef d = allocator_.resolve(p[1], "copy"), s = allocator_.resolve(p[2], "copy");
      const uint64_t size = p[3];
      SLUICE_CHECK_IN(hcq::Error, "copy", size <= d.size && size <= s.size)
          << device_ << ": copy of " << size << " bytes runs past its buffer (" << s.size
          << " bytes left at the source, " << d.size << " at the destination)";
      if (p[1] != c.dst || p[2] != c.src || size != c.size) rerecord = true;
      c.dst = p[1], c.src = p[2], c.size = size, c.dst_ref = d, c.src_ref = s;
      continue;
    }
    if (c.op != pk::Exec) continue;
    pk::ExecView e(p);
    const Program::Graph* g = c.graph;
    const auto& max = ctx_.props.limits.maxComputeWorkGroupCount;
    SLUICE_CHECK_IN(hcq::Error, "exec", e.global.x <= max[0] && e.global.y <= max[1] && e.global.z <= max[2])
        << device_ << ": kernel '" << c.program->name() << "' launched with " << e.global
        << " work-groups; the device allows (" << max[0] << "," << max[1] << "," << max[2] << ")";
    if (!(e.global == c.global)) rerecord = true, c.global = e.global;
    if (!c.set && (!c.bufs.empty() || e.nvars)) {
      auto ai = vk_struct<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
      ai.descriptorPool = in.pool;
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &g->set_layout;
      check(vk.vkAllocateDescriptorSets(ctx_.dev, &ai, &c.set), "vkAllocateDescriptorSets");
      if (e.nvars) {
        infos.push_back({in.params, c.vars_at, e.nvars * 4ull});
        auto w = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
        w.dstSet = c.set, w.dstBinding = g->vars_binding, w.descriptorCount = 1;
        w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes.push_back(w);
      }
    }
    const std::vector<uint32_t>& bind = c.program->bindings();
    const uint64_t salign = ctx_.props.limits.minStorageBufferOffsetAlignment;
    for (size_t b = 0; b < bind.size(); ++b) {
      const uint64_t addr = e.bufs[bind[b]];
      BufferRef r = allocator_.resolve(addr, "exec");  // also checks that the buffer is still alive
      if (addr == c.bufs[b]) continue;
      SLUICE_CHECK_IN(hcq::Error, "exec", r.offset % salign == 0)
          << device_ << ": buffer " << bind[b] << " of kernel '" << c.program->name() << "' starts "
          << r.offset << " bytes into its allocation; storage buffers must start at a multiple of " << salign;
      c.bufs[b] = addr;
      if (!ctx_.update_after_bind) rerecord = true;  // rewriting a bound set invalidates the recording
      infos.push_back({r.buffer, r.offset, VK_WHOLE_SIZE});
      auto w = vk_struct<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      w.dstSet = c.set, w.dstBinding = bind[b], w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes.push_back(w);
    }
    for (uint32_t v = 0; v < e.nvars; ++v) {
      const int32_t x = e.var(v);
      std::memcpy(in.mapped + c.vars_at + 4 * v, &x, 4);
    }
  }
  // pBufferInfo pointers are set once `infos` stopped growing (reserve() may not have been enough).
  for (size_t w = 0; w < writes.size(); ++w) writes[w].pBufferInfo = &infos[w];
  if (!writes.empty())
    vk.vkUpdateDescriptorSets(ctx_.dev, uint32_t(writes.size()), writes.data(), 0, nullptr);
  if (rerecord) record(in);
}

void GraphCache::record(Instance& in) {
  const auto& vk = ctx_.vk;
  in.recorded = false;
  check(vk.vkResetCommandBuffer(in.cmd, 0), "vkResetCommandBuffer");
  auto bi = vk_struct<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  check(vk.vkBeginCommandBuffer(in.cmd, &bi), "vkBeginCommandBuffer");
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  auto barrier = [&](bool host) {
    auto mb = vk_struct<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask =
        VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | (host ? VK_ACCESS_HOST_READ_BIT : 0);
    vk.vkCmdPipelineBarrier(in.cmd, stages, stages | (host ? VK_PIPELINE_STAGE_HOST_BIT : 0), 0, 1, &mb, 0,
                            nullptr, 0, nullptr);
  };
  // As the eager path (queue.h): ordered after everything submitted before it, commands never overlap,
  // and the host sees the results once the submission's semaphore value is reached.
  barrier(false);
  bool fenced = true;  // no command since the last barrier
  for (const GraphCmd& c : in.cmds) {
    if (c.op == pk::Barrier) {
      barrier(true);
      fenced = true;
      continue;
    }
    if (!fenced) barrier(false);
    fenced = false;
    if (c.op == pk::Copy) {
      if (c.size) {
        VkBufferCopy r{c.src_ref.offset, c.dst_ref.offset, c.size};
        vk.vkCmdCopyBuffer(in.cmd, c.src_ref.buffer, c.dst_ref.buffer, 1, &r);
      }
      continue;
    }
    const Program::Graph* g = c.graph;
    vk.vkCmdBindPipeline(in.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipeline);
    if (c.set)
      vk.vkCmdBindDescriptorSets(in.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->layout, 0, 1, &c.set, 0, nullptr);
    vk.vkCmdDispatch(in.cmd, c.global.x, c.global.y, c.global.z);
  }
  barrier(true);
  check(vk.vkEndCommandBuffer(in.cmd), "vkEndCommandBuffer");
  in.recorded = true;
}

}  // namespace sluice::vulkan
