#include "tools/sluice/plant.h"

#include <cstdlib>
#include <stdexcept>

#include "runtime/device_name.h"

namespace sluice::cli {
namespace {

class PlantedRenderer final : public render::Renderer {
 public:
  PlantedRenderer(std::shared_ptr<const render::Renderer> inner, bool oob)
      : inner_(std::move(inner)), oob_(oob) {}

  std::string render(const codegen::Kernel& k) const override {
    std::string src = inner_->render(k);
    const size_t end = src.rfind("}\n");
    if (k.bufs.empty() || k.bufs[0].size == 0 || end == std::string::npos) return src;
    const int64_t item = k.bufs[0].dtype.itemsize();
    const int64_t at = oob_ ? k.bufs[0].size * item : item - 1;
    // Core 0 has finished its share of the grid here, which holds element 0.
    src.insert(end, "  if (core_id == 0) ((unsigned char*)bufs[0])[" + std::to_string(at) + "] = 0x7f;\n");
    return src;
  }

 private:
  std::shared_ptr<const render::Renderer> inner_;
  bool oob_;
};

}  // namespace

render::Target planted_target(render::Target target, const std::string& device) {
  const char* env = std::getenv("SLUICE_CONFORMANCE_PLANT");
  if (!env || !*env) return target;
  const std::string mode = env, kind = parse_device(device).kind;
  if (mode != "wrong" && mode != "oob")
    throw std::runtime_error("SLUICE_CONFORMANCE_PLANT=" + mode + ": expected wrong or oob");
  if (kind != "CPU" && kind != "NULL")
    throw std::runtime_error("SLUICE_CONFORMANCE_PLANT works on the CPU's C kernels only, not on " + device);
  target.renderer = std::make_shared<PlantedRenderer>(target.renderer, mode == "oob");
  return target;
}

}  // namespace sluice::cli
