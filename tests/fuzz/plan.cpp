// Fuzz target: compiled-model files (runtime/saved_plan.h), which `sluice compile` writes and
// CompiledModel loads. A plan that parses is loaded and run on the NULL device with zero inputs.
//
// The input's first byte chooses whether the target first rewrites the header's length and the trailing
// checksum to match the mutated bytes (bit 0 set): without that nearly every mutation would stop at the
// checksum, and the body's checks would never be reached.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <span>

#include "hcq/tool.h"
#include "runtime/device.h"
#include "runtime/saved_plan.h"
#include "runtime/tensor.h"
#include "tests/fuzz/fuzz.h"

namespace sluice::fuzz {
namespace {

namespace fs = std::filesystem;

Bytes plan_bytes(Jit& j, uint8_t mode) {
  const fs::path p = fs::temp_directory_path() / ("sluice-fuzz-plan-" + std::to_string(::getpid()));
  write_plan_file(save_plan(j), p.string());
  const std::string file = hcq::read_file(p);
  fs::remove(p);
  Bytes b(file.size() + 1, mode);  // the mode byte, then the file
  std::copy(file.begin(), file.end(), b.begin() + 1);
  return b;
}

}  // namespace

std::vector<Bytes> seeds() {
  std::vector<Bytes> out;
  // Elementwise with a weight; two reductions; a flip and a transpose.
  const Tensor w = Tensor::from({1.f, 2.f, 3.f, 4.f}, {4}, "NULL").realize();
  Jit a([w](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * w + 1}; });
  Jit b([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].sum({1}), in[1].max()}; });
  Jit c([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].flip({0}) * 2, in[0].reshape({2, 3}).permute({1, 0}).contiguous()};
  });
  for (int call = 0; call < 2; ++call) {
    a({Tensor::zeros({4}, dtypes::float32, "NULL")});
    b({Tensor::zeros({3, 5}, dtypes::float32, "NULL"), Tensor::zeros({7}, dtypes::int32, "NULL")});
    c({Tensor::zeros({6}, dtypes::float16, "NULL")});
  }
  for (Jit* j : {&a, &b, &c}) {
    out.push_back(plan_bytes(*j, 1));
    out.push_back(plan_bytes(*j, 0));
  }
  return out;
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  if (size == 0) return 0;
  fuzz::Bytes b(data + 1, data + size);
  if (data[0] & 1) reseal_plan(std::as_writable_bytes(std::span(b)));
  return fuzz::reject_errors([&] {
    SavedPlan plan = parse_plan(std::as_bytes(std::span(b)), "fuzz.sluice");
    if (plan.target.kind != "NULL") return;
    std::vector<Tensor> in;
    for (const PlanTensor& t : plan.inputs) {
      if (prod(t.shape) > 4096) return;
      in.push_back(Tensor::zeros(t.shape, t.dtype, "NULL"));
    }
    Jit j = load_plan(plan, "NULL");
    for (Tensor& t : j(in)) t.realize();
  });
}
