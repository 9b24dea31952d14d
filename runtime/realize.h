#pragma once
// realize: running a schedule on an hcq device (DESIGN.md §5) — the host harness that Tensor::realize will
// grow from. For each ScheduleItem: lower and linearize (core/codegen), render (renderers/), compile every
// new kernel of the schedule in ONE compiler batch (disk-cached), load, then allocate the buffers, copy
// host data in, submit the kernels and copies in schedule order on one compute queue, and copy the
// results out.
//
// Ownership and threading: a Realizer borrows its device (which must outlive it) and owns the programs it
// loaded and its caches (kernels by AST, programs by source). run() is serialized by an internal mutex.
// Buffers live only for one run(): inputs are copied in from their HostBuffer each time.
// Failures: Error from codegen/rendering (`[lower]`, `[render]`), hcq errors from the device, ValueError
// when an input buffer has no host data.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/codegen/kernel.h"
#include "core/eval/evaluator.h"
#include "hcq/device.h"
#include "renderers/renderer.h"
#include "runtime/tensor.h"

namespace sluice {

struct RealizeOptions {
  // Sentinel bytes before and after every buffer a run allocates (0: none). A kernel that writes outside
  // its buffer changes them; run() reports it in RealizeReport::guard_violations.
  uint64_t guard_bytes = 0;
};

struct RealizeReport {
  struct KernelRun {
    std::string name, metadata;  // metadata: the fused tensor ops, comma-separated
    uint64_t work_groups = 0;
    size_t source_bytes = 0;
    bool compiled = false;  // new to this Realizer (compiled, or read from the disk cache) in this run
  };
  std::vector<KernelRun> kernels;  // the compute items, in schedule order
  size_t copies = 0;
  uint64_t compiler_invocations = 0, compiler_cache_hits = 0;  // of this run's batch
  std::vector<std::string> guard_violations;                   // "E_4_4 output 0: byte 3 after the end"
};

class Realizer {
 public:
  // `target`: how kernels for dev are built and rendered (its backend's target(dev)).
  Realizer(hcq::Device& dev, render::Target target, RealizeOptions options = {});
  ~Realizer();
  Realizer(const Realizer&) = delete;
  Realizer& operator=(const Realizer&) = delete;

  hcq::Device& device() const { return dev_; }
  // Schedules the tensors together, runs their kernels, and returns each tensor's values (on NULL, the
  // values are whatever the device's memory holds: only the path is exercised).
  std::vector<eval::HostArray> run(const std::vector<Tensor>& tensors, RealizeReport* report = nullptr);

 private:
  hcq::Device& dev_;
  RealizeOptions opt_;
  render::Target target_;
  std::mutex mu_;
  std::unordered_map<UOp, codegen::Kernel> kernels_;                         // by AST
  std::unordered_map<std::string, std::unique_ptr<hcq::Program>> programs_;  // by source
};

// The values of t computed on the process-wide CPU device and its Realizer (runtime/device.h).
eval::HostArray realize_on_cpu(const Tensor& t);

}  // namespace sluice
