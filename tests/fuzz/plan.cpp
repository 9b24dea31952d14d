// Fuzz target: compiled-model files (runtime/saved_plan.h), which `sluice compile` writes and
// CompiledModel loads. A plan that parses is loaded and run on the NULL device with zero inputs.
//
// The input's first byte chooses whether the target first rewrites the header's length and the trailing
// checksum to match the mutated bytes (bit 0 set): without that nearly every mutation would stop at the
// checksum, and the body's checks would never be reached.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>

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
  std::ifstream in(p, std::ios::binary);
  Bytes b = {mode};
  b.insert(b.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(p);
  return b;
}

// Rewrites the length field (after the magic, the format and the version string) and the checksum.
void fix_up(Bytes& b) {
  constexpr size_t kVersionAt = 8 + 4;
  if (b.size() < kVersionAt + 4) return;
  uint32_t vlen;
  std::memcpy(&vlen, b.data() + kVersionAt, 4);
  const size_t length_at = kVersionAt + 4 + size_t(vlen);
  if (vlen > b.size() || length_at + 8 + 8 > b.size()) return;
  const uint64_t length = b.size();
  std::memcpy(b.data() + length_at, &length, 8);
  const uint64_t sum = plan_checksum(std::as_bytes(std::span(b)).first(b.size() - 8));
  std::memcpy(b.data() + b.size() - 8, &sum, 8);
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
  if (data[0] & 1) fuzz::fix_up(b);
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
