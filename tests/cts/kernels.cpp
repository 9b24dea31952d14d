// The suite's kernels, hand-written to the CPU kernel ABI (backends/cpu/program.h) until a renderer
// produces them. NULL loads them without looking. A backend in another language adds its own sources here.
#include <string>
#include <vector>

#include "tests/cts/devices.h"

namespace sluice::cts {
namespace {

// Each core takes a contiguous share of the flattened grid (the ABI's intended split).
#define CTS_GRID                                                            \
  "  unsigned long n = (unsigned long)launch[0] * launch[1] * launch[2];\n" \
  "  unsigned long lo = n * core_id / n_cores, hi = n * (core_id + 1) / n_cores;\n"
#define CTS_SIGNATURE "(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores)"

const std::vector<std::string> kSources = {
    "void cts_fill" CTS_SIGNATURE " {\n" CTS_GRID
    "  int* out = (int*)bufs[0];\n"
    "  for (unsigned long g = lo; g < hi; ++g) out[g] = vars[0] + (int)g;\n"
    "}\n",
    "void cts_add" CTS_SIGNATURE " {\n" CTS_GRID
    "  int* out = (int*)bufs[0];\n"
    "  const int* in = (const int*)bufs[1];\n"
    "  for (unsigned long g = lo; g < hi; ++g) out[g] = in[g] + vars[0];\n"
    "}\n",
    "void cts_inc" CTS_SIGNATURE " {\n" CTS_GRID
    "  int* buf = (int*)bufs[0];\n"
    "  for (unsigned long g = lo; g < hi; ++g) buf[g] += 1;\n"
    "}\n",
    "void cts_empty" CTS_SIGNATURE
    " {\n"
    "  (void)bufs, (void)vars, (void)launch, (void)core_id, (void)n_cores;\n"
    "}\n",
    "void cts_spin" CTS_SIGNATURE
    " {\n"
    "  (void)vars, (void)launch, (void)core_id, (void)n_cores;\n"
    "  while (*(volatile int*)bufs[0] == 0) {}\n"
    "}\n",
};

}  // namespace

Kernels load_kernels(hcq::Device& dev, const std::vector<std::string>& sources) {
  std::vector<hcq::Binary> bins = dev.compiler().compile_many(sources);
  Kernels k;
  k.fill = dev.load_program("cts_fill", bins.at(0), {1, 1});
  k.add = dev.load_program("cts_add", bins.at(1), {2, 1});
  k.inc = dev.load_program("cts_inc", bins.at(2), {1, 0});
  k.empty = dev.load_program("cts_empty", bins.at(3), {0, 0});
  k.spin = dev.load_program("cts_spin", bins.at(4), {1, 0});
  return k;
}

Kernels load_c_kernels(hcq::Device& dev) { return load_kernels(dev, kSources); }

}  // namespace sluice::cts
