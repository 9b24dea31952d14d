#include "tools/sluice/kernels.h"

#include <vector>

#include "base/error.h"
#include "core/codegen/codegen.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace sluice::cli {

hcq::KernelArgs Add1Kernel::args(uint64_t out, uint64_t in) const {
  hcq::KernelArgs a;
  a.bufs.resize(2);
  a.bufs[out_arg] = out;
  a.bufs[in_arg] = in;
  return a;
}

Add1Kernel make_add1_kernel(const std::string& device, uint32_t n) {
  render::Target target = device_target(device);
  hcq::Device& dev = open_device(device);
  Tensor in = Tensor::from(std::vector<int32_t>(n, 0), {int64_t(n)}, device);
  std::vector<ScheduleItem> items = (in + 1).schedule();
  SLUICE_CHECK(items.size() == 1 && items[0].bufs.size() == 2)
      << "expected one kernel of two buffers, got " << items.size() << " items";
  codegen::Kernel k = codegen::make_kernel(items[0].ast, target.caps);
  k.name = "sluice_add1_" + std::to_string(n);
  std::vector<std::string> src = {target.renderer->render(k)};
  std::vector<hcq::Binary> bins = dev.compiler().compile_many(src);
  Add1Kernel out;
  out.program = dev.load_program(k.name, bins.at(0), {uint32_t(k.bufs.size()), uint32_t(k.vars.size())});
  out.global = {k.global_size[0], k.global_size[1], k.global_size[2]};
  out.local = {k.local_size[0], k.local_size[1], k.local_size[2]};
  out.n = n;
  // ScheduleItem::bufs: outputs first, then inputs.
  out.out_arg = 0, out.in_arg = 1;
  return out;
}

}  // namespace sluice::cli
