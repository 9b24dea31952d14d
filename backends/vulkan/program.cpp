#include "backends/vulkan/program.h"

#include <algorithm>
#include <vector>

#include "backends/vulkan/compiler.h"
#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::vulkan {
namespace {

// SPIR-V numbers the rewrite touches.
constexpr uint32_t kOpTypePointer = 32, kOpVariable = 59, kOpDecorate = 71, kOpMemberDecorate = 72,
                   kOpDecorateId = 332, kOpDecorateString = 5632, kOpMemberDecorateString = 5633;
constexpr uint32_t kPushConstant = 9, kStorageBuffer = 12, kBinding = 33, kDescriptorSet = 34;

// The module with its PushConstant block moved to a StorageBuffer variable at (set 0, `binding`): the
// block already has Block and Offset decorations, which a storage buffer takes as they are (std430).
// Pointer types may repeat in SPIR-V, so a StorageBuffer pointer type that already existed is harmless.
std::vector<uint32_t> vars_in_buffer(std::vector<uint32_t> w, uint32_t binding) {
  uint32_t var = 0;
  size_t after_decorations = 5;
  for (size_t i = 5; i < w.size() && (w[i] >> 16); i += w[i] >> 16) {
    const uint32_t op = w[i] & 0xffff;
    if (op == kOpTypePointer && w[i + 2] == kPushConstant) w[i + 2] = kStorageBuffer;
    if (op == kOpVariable && w[i + 3] == kPushConstant) w[i + 3] = kStorageBuffer, var = w[i + 2];
    if (op == kOpDecorate || op == kOpMemberDecorate || op == kOpDecorateId || op == kOpDecorateString ||
        op == kOpMemberDecorateString)
      after_decorations = i + (w[i] >> 16);
  }
  if (var)
    w.insert(w.begin() + ptrdiff_t(after_decorations), {kOpDecorate | 4u << 16, var, kDescriptorSet, 0,
                                                        kOpDecorate | 4u << 16, var, kBinding, binding});
  return w;
}

}  // namespace

Program::Program(hcq::Device& dev, Context& ctx, const std::string& name, const hcq::Binary& binary,
                 hcq::KernelLayout layout)
    : hcq::Program(dev, name, layout), ctx_(ctx) {
  std::span<const uint32_t> words = find_module(binary, name);
  words_.assign(words.begin(), words.end());
  SLUICE_CHECK_AS(hcq::Error, !words.empty()) << dev.name() << ": the binary (" << binary.size()
                                              << " bytes) has no SPIR-V entry point '" << name << "'";
  const auto& vk = ctx.vk;
  const uint32_t max_push_constants = ctx.props.limits.maxPushConstantsSize;
  SLUICE_CHECK_AS(hcq::Error, layout.vars * 4 <= max_push_constants)
      << dev.name() << ": kernel '" << name << "' takes " << layout.vars << " variables; push constants hold "
      << max_push_constants / 4;
  try {  // everything created so far is released if a later step throws
    auto mi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    mi.codeSize = words.size() * 4;
    mi.pCode = words.data();
    check(vk.vkCreateShaderModule(ctx.dev, &mi, nullptr, &module_), "vkCreateShaderModule");

    // OpDecorate <id> Binding <n>: words [71 | 4<<16, id, 33, n].
    for (size_t i = 5; i + 3 < words.size() && (words[i] >> 16); i += words[i] >> 16)
      if ((words[i] & 0xffff) == 71 && (words[i] >> 16) == 4 && words[i + 2] == 33) {
        SLUICE_CHECK_AS(hcq::Error, words[i + 3] < layout.buffers)
            << dev.name() << ": kernel '" << name << "' declares binding " << words[i + 3] << " but takes "
            << layout.buffers << " buffers";
        bindings_.push_back(words[i + 3]);
      }
    std::sort(bindings_.begin(), bindings_.end());
    bindings_.erase(std::unique(bindings_.begin(), bindings_.end()), bindings_.end());
    push_ = ctx.push_descriptors && bindings_.size() <= ctx.max_push_descriptors;
    std::vector<VkDescriptorSetLayoutBinding> b(bindings_.size());
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = {bindings_[i], VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    auto li = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    li.flags = push_ ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
    li.bindingCount = uint32_t(b.size());
    li.pBindings = b.data();
    check(vk.vkCreateDescriptorSetLayout(ctx.dev, &li, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");

    VkPushConstantRange pc{VK_SHADER_STAGE_COMPUTE_BIT, 0, layout.vars * 4};
    auto pli = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout_;
    pli.pushConstantRangeCount = layout.vars ? 1 : 0;
    pli.pPushConstantRanges = &pc;
    check(vk.vkCreatePipelineLayout(ctx.dev, &pli, nullptr, &pipeline_layout_), "vkCreatePipelineLayout");

    auto ci = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    ci.stage =
        vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module_;
    ci.stage.pName = name.c_str();
    ci.layout = pipeline_layout_;
    check(vk.vkCreateComputePipelines(ctx.dev, ctx.pipeline_cache, 1, &ci, nullptr, &pipeline_),
          "vkCreateComputePipelines");
  } catch (...) {
    release();
    throw;
  }
}

Program::~Program() { release(); }

std::shared_ptr<const Program::Graph> Program::graph() const {
  std::call_once(graph_once_, [this] { build_graph(); });
  return graph_;
}

Program::Graph::~Graph() {
  const auto& vk = ctx.vk;
  if (pipeline) vk.vkDestroyPipeline(ctx.dev, pipeline, nullptr);
  if (layout) vk.vkDestroyPipelineLayout(ctx.dev, layout, nullptr);
  if (set_layout) vk.vkDestroyDescriptorSetLayout(ctx.dev, set_layout, nullptr);
  if (module) vk.vkDestroyShaderModule(ctx.dev, module, nullptr);
}

void Program::build_graph() const {
  const hcq::KernelLayout l = layout();
  // The variables' buffer adds one storage buffer; StorageBuffer variables need SPIR-V 1.3.
  const size_t n = bindings_.size() + (l.vars ? 1 : 0);
  if (words_.size() < 5 || words_[1] < 0x00010300 ||
      n > ctx_.props.limits.maxPerStageDescriptorStorageBuffers)
    return;
  const auto& vk = ctx_.vk;
  auto gp = std::make_shared<Graph>(ctx_);  // released by its destructor if a step below throws
  Graph& g = *gp;
  g.vars_binding = l.buffers;
  std::vector<VkDescriptorSetLayoutBinding> b;
  for (uint32_t i : bindings_)
    b.push_back({i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  if (l.vars)
    b.push_back({g.vars_binding, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  // Update-after-bind where the device has it: a replay rewrites descriptors without recording again.
  const bool uab = ctx_.update_after_bind;
  std::vector<VkDescriptorBindingFlags> flags(b.size(),
                                              uab ? VK_DESCRIPTOR_BINDING_UPDATE_AFTER_BIND_BIT : 0);
  auto fi = vk_struct<VkDescriptorSetLayoutBindingFlagsCreateInfo>(
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO);
  fi.bindingCount = uint32_t(flags.size());
  fi.pBindingFlags = flags.data();
  auto li = vk_struct<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                                       uab ? &fi : nullptr);
  li.flags = uab ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_UPDATE_AFTER_BIND_POOL_BIT : 0;
  li.bindingCount = uint32_t(b.size());
  li.pBindings = b.data();
  std::vector<uint32_t> words = l.vars ? vars_in_buffer(words_, g.vars_binding) : words_;
  {
    check(vk.vkCreateDescriptorSetLayout(ctx_.dev, &li, nullptr, &g.set_layout),
          "vkCreateDescriptorSetLayout");
    auto pli = vk_struct<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &g.set_layout;
    check(vk.vkCreatePipelineLayout(ctx_.dev, &pli, nullptr, &g.layout), "vkCreatePipelineLayout");
    auto mi = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    mi.codeSize = words.size() * 4;
    mi.pCode = words.data();
    check(vk.vkCreateShaderModule(ctx_.dev, &mi, nullptr, &g.module), "vkCreateShaderModule");
    auto ci = vk_struct<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    ci.stage =
        vk_struct<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = g.module;
    ci.stage.pName = name().c_str();
    ci.layout = g.layout;
    check(vk.vkCreateComputePipelines(ctx_.dev, ctx_.pipeline_cache, 1, &ci, nullptr, &g.pipeline),
          "vkCreateComputePipelines");
  }
  graph_ = std::move(gp);
}

void Program::release() {
  graph_.reset();
  const auto& vk = ctx_.vk;
  if (pipeline_) vk.vkDestroyPipeline(ctx_.dev, pipeline_, nullptr);
  if (pipeline_layout_) vk.vkDestroyPipelineLayout(ctx_.dev, pipeline_layout_, nullptr);
  if (set_layout_) vk.vkDestroyDescriptorSetLayout(ctx_.dev, set_layout_, nullptr);
  if (module_) vk.vkDestroyShaderModule(ctx_.dev, module_, nullptr);
  pipeline_ = VK_NULL_HANDLE, pipeline_layout_ = VK_NULL_HANDLE, set_layout_ = VK_NULL_HANDLE,
  module_ = VK_NULL_HANDLE;
}

}  // namespace sluice::vulkan
