#pragma once
// A Vulkan program: a compute pipeline for one SPIR-V entry point (renderers/spirv.h ABI).
//
// ABI: buffer i of the layout is descriptor set 0, binding i, a storage buffer; variable i is the 32-bit
// push constant at offset 4*i; the launch's `global` is the dispatch's work-group count and `local` is
// baked into the module (LocalSize), so an exec's local size is not passed on. Descriptors are pushed
// (VK_KHR_push_descriptor) when the device has it and the kernel takes at most maxPushDescriptors
// buffers; otherwise they are written into sets from per-submission pools (queue.cpp). Only the bindings
// the module declares (OpDecorate Binding) are in the set layout and bound.
//
// Ownership: the Program owns its pipeline and layouts; it must outlive every submission that runs it.
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/context.h"
#include "hcq/compiler.h"
#include "hcq/program.h"

namespace sluice::vulkan {

class Program final : public hcq::Program {
 public:
  Program(hcq::Device& dev, Context& ctx, const std::string& name, const hcq::Binary& binary,
          hcq::KernelLayout layout);
  ~Program() override;

  VkPipeline pipeline() const { return pipeline_; }
  VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  bool push_descriptors() const { return push_; }
  // The buffers of the layout the module declares a binding for, ascending: only these are bound (a
  // kernel that ignores a buffer needs no descriptor for it, and its address is never resolved).
  const std::vector<uint32_t>& bindings() const { return bindings_; }

 private:
  void release();

  Context& ctx_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  bool push_ = false;
  std::vector<uint32_t> bindings_;
};

}  // namespace sluice::vulkan
