#include "backends/vulkan/compiler.h"

#include <cstring>
#include <sstream>

#include "hcq/error.h"

namespace sluice::vulkan {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203, kBundleMagic = 0x42565053;  // "SPVB"
constexpr uint32_t kOpEntryPoint = 15;

std::string hex(const uint8_t* p, size_t n) {
  std::ostringstream os;
  os << std::hex;
  for (size_t i = 0; i < n; ++i) os << (p[i] >> 4) << (p[i] & 15);
  return os.str();
}

class Compiler final : public hcq::Compiler {
 public:
  Compiler(Context* ctx, std::filesystem::path dir) : hcq::Compiler("vulkan", std::move(dir)), ctx_(ctx) {}

 protected:
  std::string identity() const override {
    if (!ctx_) return "no device";
    const auto& p = ctx_->props;
    std::ostringstream os;
    os << p.deviceName << " " << std::hex << p.vendorID << ":" << p.deviceID << " driver " << p.driverVersion
       << " api " << p.apiVersion << " " << hex(p.pipelineCacheUUID, VK_UUID_SIZE);
    return os.str();
  }

  // The renderer writes SPIR-V itself; no offline compiler is involved.
  std::string description() const override {
    return "SPIR-V from sluice's own renderer; the driver compiles it to machine code";
  }

  hcq::Binary compile_unit(std::span<const std::string_view> sources) override {
    for (size_t i = 0; i < sources.size(); ++i) check_module(sources[i], i);
    hcq::Binary out;
    if (sources.size() == 1) return hcq::Binary(sources[0].begin(), sources[0].end());
    auto put = [&](uint32_t w) {
      out.insert(out.end(), reinterpret_cast<uint8_t*>(&w), reinterpret_cast<uint8_t*>(&w) + 4);
    };
    put(kBundleMagic);
    put(uint32_t(sources.size()));
    for (std::string_view s : sources) {
      put(uint32_t(s.size()));
      out.insert(out.end(), s.begin(), s.end());
    }
    return out;
  }

 private:
  void check_module(std::string_view s, size_t i) const {
    uint32_t magic = 0;
    if (s.size() >= 4) std::memcpy(&magic, s.data(), 4);
    if (s.size() < 20 || s.size() % 4 != 0 || magic != kSpirvMagic)
      SLUICE_FAIL(hcq::CompileError, "compile")
          << "error: source " << i << " is not a SPIR-V module (" << s.size()
          << " bytes; a module is little-endian 32-bit words starting with 0x07230203)";
    if (!ctx_) return;
    std::vector<uint32_t> words(s.size() / 4);
    std::memcpy(words.data(), s.data(), s.size());
    auto ci = vk_struct<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    ci.codeSize = s.size();
    ci.pCode = words.data();
    VkShaderModule m;
    VkResult r = ctx_->vk.vkCreateShaderModule(ctx_->dev, &ci, nullptr, &m);
    if (r != VK_SUCCESS)
      SLUICE_FAIL(hcq::CompileError, "compile") << "error: the driver rejected SPIR-V module " << i
                                                << ": vkCreateShaderModule failed: " << result_name(r);
    ctx_->vk.vkDestroyShaderModule(ctx_->dev, m, nullptr);
  }

  Context* ctx_;
};

bool has_entry(std::span<const uint32_t> m, std::string_view name) {
  for (size_t i = 5; i < m.size();) {
    uint32_t op = m[i] & 0xffff, n = m[i] >> 16;
    if (n == 0 || i + n > m.size()) return false;
    if (op == kOpEntryPoint && n > 3) {
      const char* str = reinterpret_cast<const char*>(&m[i + 3]);
      size_t max = (n - 3) * 4;
      if (strnlen(str, max) == name.size() && std::memcmp(str, name.data(), name.size()) == 0) return true;
    }
    i += n;
  }
  return false;
}

}  // namespace

std::unique_ptr<hcq::Compiler> make_compiler(Context* ctx, std::filesystem::path cache_dir) {
  return std::make_unique<Compiler>(ctx, std::move(cache_dir));
}

std::span<const uint32_t> find_module(const hcq::Binary& bin, std::string_view name) {
  if (bin.size() < 8 || bin.size() % 4 != 0) return {};
  const auto* w = reinterpret_cast<const uint32_t*>(bin.data());  // vector storage is suitably aligned
  if (w[0] == kSpirvMagic) {
    std::span<const uint32_t> m(w, bin.size() / 4);
    return has_entry(m, name) ? m : std::span<const uint32_t>{};
  }
  if (w[0] != kBundleMagic) return {};
  size_t at = 2, total = bin.size() / 4;
  for (uint32_t k = 0; k < w[1] && at < total; ++k) {
    size_t words = w[at] / 4;
    if (at + 1 + words > total) return {};
    std::span<const uint32_t> m(w + at + 1, words);
    if (has_entry(m, name)) return m;
    at += 1 + words;
  }
  return {};
}

}  // namespace sluice::vulkan
