#include "backends/null/compiler.h"

namespace sluice::null {
namespace {

class Compiler final : public hcq::Compiler {
 public:
  Compiler() : hcq::Compiler("null", {}) {}

 protected:
  std::string identity() const override { return "null"; }
  std::string description() const override { return "none: NULL neither compiles nor runs kernels"; }
  hcq::Binary compile_unit(std::span<const std::string_view> sources) override {
    hcq::Binary out;
    for (std::string_view s : sources) out.insert(out.end(), s.begin(), s.end());
    return out;
  }
};

}  // namespace

std::unique_ptr<hcq::Compiler> make_compiler() { return std::make_unique<Compiler>(); }

}  // namespace sluice::null
