#include "backends/cpu/program.h"

#include <limits>
#include <span>

#include "backends/cpu/elf.h"
#include "hcq/error.h"

namespace sluice::cpu {
namespace {

class Program final : public hcq::Program {
 public:
  Program(hcq::Device& dev, const std::string& name, hcq::KernelLayout layout,
          std::shared_ptr<const Image> image, KernelFn fn)
      : hcq::Program(dev, name, layout), image_(std::move(image)), fn_(fn) {}

  std::shared_ptr<const Image> image_;
  KernelFn fn_;
  // Written after every run by the queue's thread, while submitting threads read the fields above: a
  // line of its own.
  alignas(64) mutable std::atomic<double> group_cost_ns_{std::numeric_limits<double>::infinity()};
};

}  // namespace

std::unique_ptr<hcq::Program> load_program(hcq::Device& dev, const std::string& name,
                                           const hcq::Binary& binary, hcq::KernelLayout layout) {
  std::shared_ptr<const Image> image = Image::load(std::span(binary), "kernel '" + name + "'");
  void* fn = image->symbol(name);
  if (!fn) SLUICE_FAIL(hcq::Error, "load_program") << "kernel '" << name << "' is not in its binary";
  return std::make_unique<Program>(dev, name, layout, std::move(image), reinterpret_cast<KernelFn>(fn));
}

// The device checks at submit that every program it runs was loaded on it, so the cast is safe.
KernelFn kernel_entry(const hcq::Program& p) { return static_cast<const Program&>(p).fn_; }
std::atomic<double>& group_cost_ns(const hcq::Program& p) {
  return static_cast<const Program&>(p).group_cost_ns_;
}
// A keep-alive handle only: nobody writes through it.
std::shared_ptr<void> library(const hcq::Program& p) {
  return std::const_pointer_cast<Image>(static_cast<const Program&>(p).image_);
}

}  // namespace sluice::cpu
