// sluice-demo: the README's main job. Shows each layer on a small model: the lazy tensor graph, the
// kernels the scheduler cuts it into, the C the CPU renderer generates for one of them, and the values the
// CPU device computes, checked against the reference evaluator. Exits non-zero if they disagree.
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/codegen/codegen.h"
#include "core/ir/symbolic.h"
#include "renderers/cpu.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"

using namespace sluice;

int main() {
  // 1. Symbolic simplification of an index expression, the kind every movement op produces.
  UOp i = UOp::variable("gidx", 0, 23);
  UOp index = (i / 4) * 4 + i % 4;
  std::printf("== an index expression and its simplification\n%s\n-> %s\n\n", index.str().c_str(),
              simplify(index).str().c_str());

  // 2. A lazy graph: a two-layer MLP with softmax on 4 inputs of 8 features (building runs nothing).
  Tensor x = Tensor::randn({4, 8}, /*seed=*/1, dtypes::float32, "CPU");
  Tensor w1 = Tensor::randn({8, 16}, /*seed=*/2, dtypes::float32, "CPU"),
         w2 = Tensor::randn({16, 3}, /*seed=*/3, dtypes::float32, "CPU");
  Tensor y = (x.matmul(w1) + 0.5).relu().matmul(w2).softmax(-1);
  std::printf("== y = softmax(relu(x @ w1 + 0.5) @ w2)\n%s\n\n", y.str().c_str());

  // 3. The schedule: kernels with the tensor ops fused into each.
  std::vector<ScheduleItem> items = y.schedule();
  std::printf("== schedule: %zu kernels\n", items.size());
  for (const ScheduleItem& it : items) {
    std::string meta;
    for (const std::string& m : it.metadata) meta += (meta.empty() ? "" : ", ") + m;
    std::printf("  %-16s %zu buffers  (%s)\n", codegen::make_kernel(it.ast).name.c_str(), it.bufs.size(),
                meta.c_str());
  }

  // 4. The C source the CPU renderer generates for the last kernel.
  auto renderer = render::make_cpu_renderer();
  std::printf("\n== generated C for the last kernel\n%s\n",
              renderer->render(codegen::make_kernel(items.back().ast)).c_str());

  // 5. Run on the CPU device and compare with the reference evaluator (double precision). The reference
  // reads the lazy graph, so take it before realizing, which turns y into a buffer of its values.
  eval::HostArray want = reference(y);
  std::vector<float> got = y.to_vector<float>();
  double worst = 0;
  for (size_t k = 0; k < got.size(); k++)
    worst = std::max(worst, std::abs(double(got[k]) - want.value(int64_t(k))));
  std::printf("== values on %s (rows sum to 1)\n", y.device().c_str());
  for (size_t r = 0; r < 4; r++)
    std::printf("  %.6f %.6f %.6f\n", got[r * 3], got[r * 3 + 1], got[r * 3 + 2]);
  std::printf("max |device - reference| = %.3g\n", worst);
  std::printf("== printed (realized tensors stay on the device; printing copies them out)\n%s\n",
              y.values_str().c_str());
  return worst < 1e-5 ? 0 : 1;
}
