// BEAM search against the hand-coded heuristic on the benchmark models (models/models.h) and a 1024^3
// matmul: every kernel of a model's schedule searched (runtime/beam.h, no disk cache) on one device, and
// the sum of the kernels' device times with the heuristic's actions and with BEAM's. A plain program:
//   beam_bench [DEVICE] [WIDTH] [BUDGET_S]        (default: the default device, 2, 10)
// prints a table, then the same figures as one JSON line.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/schedule/schedule.h"
#include "models/models.h"
#include "runtime/beam.h"
#include "runtime/device.h"
#include "runtime/device_name.h"

namespace {

using namespace sluice;

struct Workload {
  std::string name;
  Tensor out;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string device = argc > 1 ? argv[1] : default_device();
  BeamOptions o;
  o.width = argc > 2 ? std::atoi(argv[2]) : 2;
  o.budget_s = argc > 3 ? std::atof(argv[3]) : 10;
  o.use_cache = false;
  hcq::Device& dev = open_device(device);
  const render::Target target = device_target(device);

  const bench::Mlp mlp;
  const bench::Cnn cnn;
  const bench::Gpt gpt(1);
  std::vector<Workload> work = {
      {"matmul 1024^3", bench::param({1024, 1024}).matmul(bench::param({1024, 1024}))},
      {"MLP b64", mlp.forward()},
      {"CNN b64", cnn.forward()},
      {"GPT-2 block T=128", gpt.forward()},
  };
  std::printf("BEAM width %d, %.0f s per kernel, on %s (%s)\n", o.width, o.budget_s, device.c_str(),
              dev.properties().device_name.c_str());
  std::printf("%-20s %8s %14s %12s %8s %10s\n", "workload", "kernels", "heuristic ms", "BEAM ms", "speedup",
              "search s");
  std::string json = "[";
  for (const Workload& w : work) {
    double heuristic = 0, best = 0, search_s = 0;
    int kernels = 0;
    for (const ScheduleItem& it : schedule({w.out.uop()}).items) {
      if (it.ast.op() != Op::Sink) continue;
      const auto t0 = std::chrono::steady_clock::now();
      const BeamResult r = beam_search(it.ast, dev, target, o);
      search_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      heuristic += r.heuristic_us, best += r.best_us, ++kernels;
    }
    std::printf("%-20s %8d %14.3f %12.3f %7.2fx %10.1f\n", w.name.c_str(), kernels, heuristic / 1e3,
                best / 1e3, heuristic / best, search_s);
    std::fflush(stdout);
    char line[256];
    std::snprintf(
        line, sizeof line,
        "%s{\"workload\":\"%s\",\"kernels\":%d,\"heuristic_ms\":%.4f,\"beam_ms\":%.4f,\"search_s\":%.2f}",
        json.size() > 1 ? "," : "", w.name.c_str(), kernels, heuristic / 1e3, best / 1e3, search_s);
    json += line;
  }
  std::printf("%s]\n", json.c_str());
  return 0;
}
