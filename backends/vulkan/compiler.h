#pragma once
// The Vulkan compiler: a "source" is a SPIR-V module (little-endian words in a string, as
// renderers/spirv.h emits it). Compiling checks the header and has the driver create a VkShaderModule
// from it (the driver's own validation; a module it rejects is a CompileError), so a binary that loads
// is one the driver accepts. The binary of one source is the module itself; compile_many's binary is a
// bundle of its modules ('SPVB', count, then byte length + bytes of each), and load_program picks the
// module whose OpEntryPoint has the kernel's name.
//
// The disk cache key includes the device's name, vendor/device id, driver version and pipeline-cache
// UUID (identity()), so a driver update never reuses another driver's checks. Pipelines themselves are
// cached by the device's VkPipelineCache (device.cpp), saved next to the compiler cache.
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>

#include "backends/vulkan/context.h"
#include "hcq/compiler.h"

namespace sluice::vulkan {

// With ctx null (no device: cts cache tests), only the header checks run.
std::unique_ptr<hcq::Compiler> make_compiler(Context* ctx,
                                             std::filesystem::path cache_dir = hcq::default_cache_dir());

// The module in `binary` (a module or a bundle) whose entry point is `name`; empty if none.
std::span<const uint32_t> find_module(const hcq::Binary& binary, std::string_view name);

}  // namespace sluice::vulkan
