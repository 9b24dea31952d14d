#include "backends/cuda/program.h"

#include "hcq/device.h"

namespace sluice::cuda {
namespace {

class Program final : public hcq::Program {
 public:
  Program(hcq::Device& dev, const Driver& drv, CUcontext ctx, const std::string& name, CUmodule module,
          CUfunction fn, hcq::KernelLayout layout)
      : hcq::Program(dev, name, layout), drv_(drv), ctx_(ctx), module_(module), fn_(fn) {}
  ~Program() override {
    make_current(drv_, ctx_);
    drv_.module_unload(module_);
  }
  CUfunction fn() const { return fn_; }

 private:
  const Driver& drv_;
  CUcontext ctx_;
  CUmodule module_;
  CUfunction fn_;
};

}  // namespace

std::unique_ptr<hcq::Program> load_program(hcq::Device& dev, const Driver& drv, CUcontext ctx,
                                           const std::string& name, const hcq::Binary& binary,
                                           hcq::KernelLayout layout) {
  SLUICE_CHECK_AS(hcq::Error, !binary.empty()) << dev.name() << ": empty binary for kernel '" << name << "'";
  make_current(drv, ctx);
  // PTX must be NUL-terminated text; the compiler's PTX output already is, but a copy costs nothing.
  hcq::Binary image = binary;
  image.push_back(0);
  CUmodule module = nullptr;
  SLUICE_DRV("load_program", dev.name(), drv, module_load_data, &module, image.data());
  CUfunction fn = nullptr;
  if (CUresult r = drv.module_get_function(&fn, module, name.c_str()); r != kSuccess) {
    drv.module_unload(module);
    SLUICE_FAIL(hcq::Error, "load_program") << dev.name() << ": kernel '" << name
                                            << "' not in the binary: " << drv.error("module_get_function", r);
  }
  return std::make_unique<Program>(dev, drv, ctx, name, module, fn, layout);
}

CUfunction function(const hcq::Program& p) { return static_cast<const Program&>(p).fn(); }

}  // namespace sluice::cuda
