#include "backends/vulkan/program.h"

#include <algorithm>
#include <vector>

#include "backends/vulkan/compiler.h"
#include "hcq/device.h"
#include "hcq/error.h"

namespace sluice::vulkan {

Program::Program(hcq::Device& dev, Context& ctx, const std::string& name, const hcq::Binary& binary,
                 hcq::KernelLayout layout)
    : hcq::Program(dev, name, layout), ctx_(ctx) {
  std::span<const uint32_t> words = find_module(binary, name);
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

void Program::release() {
  const auto& vk = ctx_.vk;
  if (pipeline_) vk.vkDestroyPipeline(ctx_.dev, pipeline_, nullptr);
  if (pipeline_layout_) vk.vkDestroyPipelineLayout(ctx_.dev, pipeline_layout_, nullptr);
  if (set_layout_) vk.vkDestroyDescriptorSetLayout(ctx_.dev, set_layout_, nullptr);
  if (module_) vk.vkDestroyShaderModule(ctx_.dev, module_, nullptr);
  pipeline_ = VK_NULL_HANDLE, pipeline_layout_ = VK_NULL_HANDLE, set_layout_ = VK_NULL_HANDLE,
  module_ = VK_NULL_HANDLE;
}

}  // namespace sluice::vulkan
