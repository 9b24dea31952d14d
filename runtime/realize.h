#pragma once
// realize: running a schedule on hcq devices (DESIGN.md §5). For each ScheduleItem: lower and linearize
// (core/codegen), render (renderers/), compile every new kernel of the schedule in ONE compiler batch
// (disk-cached), load; then record the kernels and copies in schedule order into one compute queue per
// device and submit. Buffers are device-resident (runtime/buffer.h): an input is copied in on its first
// use, outputs stay on the device, and each output's realized form (a BUFFER, viewed) is returned, so a
// later realize reads the device memory directly.
//
// Items of a schedule may live on several devices: a kernel runs on the device of its buffers (through
// that device's registry Realizer), a COPY on its destination's; a COPY between two devices goes through
// the host once the source is done.
//
// SLUICE_DEBUG (base/debug.h) >= 1 logs "realize: 3 kernels, 1 copies, ..., device 42.10 us, wall 1.20 ms"
// per realize, >= 2 each kernel run (runtime/debug_report.h), >= 3 each new kernel's AST and applied
// opts, >= 4 its source, >= 5 its uops; with SLUICE_PROFILE or debug the devices profile and the records
// go to runtime/profile.h.
//
// Ownership and threading: a Realizer borrows its device (which must outlive it) and owns the programs it
// loaded and its caches (kernels by AST, programs by source). Calls are serialized by an internal mutex.
// Failures: Error from codegen/rendering (`[lower]`, `[render]`), hcq errors from the device, ValueError
// when a buffer is read that holds no data.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/codegen/kernel.h"
#include "core/eval/evaluator.h"
#include "hcq/device.h"
#include "hcq/graph.h"
#include "renderers/renderer.h"
#include "runtime/tensor.h"

namespace sluice {

class Buffer;

struct RealizeOptions {
  // Sentinel bytes before and after every buffer this Realizer allocates (0: none). A kernel that writes
  // outside its buffer changes them; a run then reports it in RealizeReport::guard_violations (a run
  // with guards waits for its device to finish).
  uint64_t guard_bytes = 0;
  // Test-only: edits the schedule before it runs (to plant a faulty kernel, say).
  std::function<void(Schedule&)> edit_schedule;
};

struct RealizeReport {
  struct KernelRun {
    std::string name, metadata;  // metadata: the fused tensor ops, comma-separated
    uint64_t work_groups = 0;    // 0: nothing to launch
    size_t source_bytes = 0;
    bool compiled = false;  // new to this Realizer (compiled, or read from the disk cache) in this run
    std::string device;
    size_t buffers = 0;
    uint64_t flops = 0, bytes = 0;  // codegen's estimates (core/codegen/estimate.h)
    std::string opts;               // the optimization actions it was built with (codegen/search.h opts_str)
  };
  std::vector<KernelRun> kernels;  // the compute items, in schedule order (with panel packs, with_panels)
  size_t copies = 0;
  uint64_t compiler_invocations = 0, compiler_cache_hits = 0;  // of this run's batch
  // Host time spent scheduling (realize only), lowering and rendering kernels, and compiling them.
  double schedule_ms = 0, codegen_ms = 0, compile_ms = 0;
  std::vector<std::string> guard_violations;  // "E_4_4 output 0: byte 3 after the end"
};

// What one realize ran, in order, for the JIT (runtime/jit.h): graph items with the BUFFER node behind
// every address, on one device.
struct Capture {
  Capture() = default;
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  ~Capture();  // with programs of its own, first waits until the device is done with every buffer it used

  hcq::Device* device = nullptr;
  std::vector<hcq::GraphItem> items;
  std::vector<std::vector<UOp>> item_bufs;      // per item: the BUFFER of each address (copies: dst, src)
  std::vector<uint32_t> item_outputs;           // per item: how many of its first addresses it writes
  std::vector<std::string> item_ops;            // per item: the tensor ops it computes (profile traces)
  std::vector<std::shared_ptr<Buffer>> memory;  // every buffer used, kept alive with the capture
  std::vector<std::unique_ptr<hcq::Program>> programs;  // a loaded plan's own (a realize's: its Realizer's)
  bool ok = true;
  std::string why;  // when !ok: what cannot be captured
};

class Realizer {
 public:
  // `target`: how kernels for dev are built and rendered (its backend's target(dev)).
  Realizer(hcq::Device& dev, render::Target target, RealizeOptions options = {});
  ~Realizer();
  Realizer(const Realizer&) = delete;
  Realizer& operator=(const Realizer&) = delete;

  hcq::Device& device() const { return dev_; }
  void set_options(RealizeOptions o);
  RealizeOptions options() const;

  // Schedules the tensors together, runs their kernels, and returns each tensor's realized form: a
  // BUFFER node with device memory, viewed as the tensor. Returns once the work is submitted (reads wait).
  std::vector<UOp> realize(const std::vector<Tensor>& tensors, RealizeReport* report = nullptr,
                           Capture* capture = nullptr);
  // Runs a schedule made earlier (each item on its device); returns once it is submitted. Kernels seen
  // before are not lowered or compiled again: this is the eager launch of compiled kernels.
  void run_schedule(const Schedule& s, RealizeReport* report = nullptr, Capture* capture = nullptr);
  // realize, then each tensor's values copied to the host (on NULL, whatever its memory holds).
  std::vector<eval::HostArray> run(const std::vector<Tensor>& tensors, RealizeReport* report = nullptr);
  // The values of a realized tensor (realize's form: a BUFFER viewed by movement ops, or a constant),
  // row-major, in its own dtype as storage holds them (half and bfloat16 as their bits, bool as 0/1
  // bytes). A form that is not a dense buffer is first copied into one on its device by a kernel this
  // Realizer runs, so the host receives only the tensor's elements, never the whole buffer under a view.
  // Waits for the device. On NULL the bytes are whatever its memory holds; ValueError (naming `fn`) when
  // a buffer holds no data.
  std::vector<std::byte> read(const Tensor& realized, const char* fn);
  // The source a program this Realizer loaded was compiled from; "" for a program it did not load.
  std::string source_of(const hcq::Program& program) const;

 private:
  // Codegen and one compile batch for the compute items among `items` that this device runs.
  // dims: per item, its launch (work-groups, work-items per group).
  std::vector<const hcq::Program*> prepare(const std::vector<const ScheduleItem*>& items, RealizeReport& rep,
                                           std::vector<std::pair<hcq::Dims, hcq::Dims>>& dims);
  // Runs `items` (all of this device) in order; returns the submission's timeline value (0: none).
  uint64_t execute(const std::vector<const ScheduleItem*>& items, RealizeReport& rep, Capture* capture,
                   std::vector<std::shared_ptr<Buffer>>& used);

  hcq::Device& dev_;
  RealizeOptions opt_;
  render::Target target_;
  mutable std::recursive_mutex mu_;
  std::unordered_map<UOp, codegen::Kernel> kernels_;                         // by AST
  std::unordered_map<std::string, std::unique_ptr<hcq::Program>> programs_;  // by source
  struct Launch {
    const hcq::Program* program;
    std::pair<hcq::Dims, hcq::Dims> dims;
    RealizeReport::KernelRun run;  // as a later run reports it
  };
  std::unordered_map<UOp, Launch> by_ast_;  // launch of a known AST

  // Large matmuls read their column operand from panels (core/schedule/pack.h) where the device's register
  // tile wants them: `items` with each such kernel preceded by its pack kernel, in `storage`; `items`
  // itself when there is none. The rewritten kernels are kept by AST; the panels are a new intermediate
  // BUFFER each run (the allocator's cache hands the same memory back once the device is done with it),
  // so nothing here keeps an operand or its panels alive.
  const std::vector<ScheduleItem>& with_panels(const std::vector<ScheduleItem>& items,
                                               std::vector<ScheduleItem>& storage);
  struct PanelPlan {
    UOp pack, matmul;  // the two kernels' ASTs
    size_t operand;    // the packed buffer's index in the kernel's bufs
    int64_t elements;  // the panels' size
  };
  std::unordered_map<UOp, std::optional<PanelPlan>> panel_plans_;  // by the kernel's AST as scheduled
};

// How many schedules this thread has run (realize and run_schedule calls), so that the JIT can tell that
// a function realized something while it was being captured.
uint64_t schedules_run_on_this_thread();

// The values of t computed on the process-wide CPU device and its Realizer (runtime/device.h).
eval::HostArray realize_on_cpu(const Tensor& t);

}  // namespace sluice
