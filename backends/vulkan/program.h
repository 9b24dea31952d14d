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
// Graph variant (graph.h): command buffers that are recorded once and submitted again cannot have their
// push constants or pushed descriptors patched, so replays use a second pipeline of the same kernel built
// on first use: its descriptors live in a descriptor set (update-after-bind where the device has it, so
// that they can be rewritten without recording again) and its variables are read from a storage buffer
// at binding `layout.buffers` instead of push constants (the module is rewritten: the PushConstant block
// becomes a StorageBuffer block, same offsets).
//
// Ownership: the Program owns its pipeline and layouts; it must outlive every submission that runs it. The
// graph variant is shared: recordings that use it (graph.h) keep it alive until they are freed, so a
// program may go while a stale recording of it still waits to be dropped.
// Threading: immutable after loading, except that graph() builds the variant once under a lock.
#include <cstdint>
#include <memory>
#include <mutex>
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

  struct Graph {
    explicit Graph(const Context& c) : ctx(c) {}
    ~Graph();  // destroys what it holds
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    const Context& ctx;
    VkShaderModule module = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;  // bindings() + the variables' binding; may be empty
    uint32_t vars_binding = 0;                          // = layout().buffers
  };
  // The graph variant, built on first call; null where the device cannot run it (a module older than
  // SPIR-V 1.3, too many buffers). Throws DeviceError if building it fails.
  std::shared_ptr<const Graph> graph() const;

 private:
  void release();
  void build_graph() const;

  Context& ctx_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  bool push_ = false;
  std::vector<uint32_t> bindings_;
  std::vector<uint32_t> words_;  // the module, for the graph variant

  mutable std::once_flag graph_once_;
  mutable std::shared_ptr<const Graph> graph_;
};

}  // namespace sluice::vulkan
