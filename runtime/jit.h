#pragma once
// The JIT (DESIGN.md §5): `auto f = sluice::jit(fn)` wraps a function of tensors. The first call runs fn
// normally (realizing its outputs); the second runs it again and captures the kernels and copies its
// realize submits (programs, launch sizes, buffers); from the third call on, fn is not called at all: the
// captured work is replayed as ONE hcq::Graph with the inputs' device buffers patched in.
//
// With JitOptions::capture_first_call the first call already captures (for callers that have compiled
// everything before, such as a model runner that knows its graph is the same every call).
//
// Contract (as the reference design's TinyJit):
// - fn must compute the same graph for inputs of the same shapes (no data-dependent control flow);
//   whatever it does beyond its kernels is not replayed. A capture call in which fn realizes something
//   itself (a host read, an explicit realize) is not captured: the JIT stays unjitted, every later call
//   runs fn, and why() says so.
// - Inputs are realized first (copied in on their device); each replay must get inputs of the captured
//   shape, dtype and device, else ValueError naming the input and both: "[jit] input 1: captured
//   (4, 8) float on CPU, got (4, 9) float on CPU". The number of inputs must match too.
// - The outputs of a replay live in the captured buffers: the tensors a call returns are overwritten by
//   the next call (realize or copy them to keep them).
// - All kernels must run on one device; a function whose work spans devices runs unjitted every call.
// - SLUICE_JIT=0 turns capture off: every call runs fn.
// - SLUICE_DEBUG >= 1 logs each replay ("jit replay: ..."), >= 2 each kernel it ran, labelled "replay"
//   (runtime/debug_report.h); a replay then waits for the device.
//
// Threading: a Jit is used by one thread at a time. Failures: what fn and realize throw; the errors above.
#include <functional>
#include <memory>
#include <vector>

#include "runtime/realize.h"
#include "runtime/tensor.h"

namespace sluice {

namespace hcq {
class Graph;
}
struct SavedPlan;

struct JitOptions {
  bool capture_first_call = false;
};

class Jit {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit Jit(Fn fn, JitOptions options = {});
  ~Jit();
  Jit(Jit&&) noexcept;
  Jit& operator=(Jit&&) noexcept;

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  int calls() const { return calls_; }
  bool captured() const { return graph_ != nullptr; }
  size_t kernel_count() const;  // graph items (kernels and copies) replayed per call; 0 before capture
  const std::string& why() const { return why_; }  // why calls are not captured ("" while they may be)
  // What the last call that ran fn realized (kernels, compile counts, times); empty after a replay.
  const RealizeReport& report() const { return report_; }

 private:
  // A captured Jit to and from a file's contents (runtime/saved_plan.h).
  friend SavedPlan save_plan(const Jit& jit);
  friend Jit load_plan(const SavedPlan& plan, const std::string& device);

  struct Patch {
    size_t item;
    uint32_t arg;  // exec: buffer index; copy: 0 dst, 1 src
    size_t input;
  };
  struct Sig {
    Shape shape;
    DType dtype;
    std::string device;
  };
  void capture(const std::vector<Tensor>& inputs);
  std::vector<Tensor> replay(const std::vector<Tensor>& inputs);

  Fn fn_;
  JitOptions opt_;
  int calls_ = 0;
  bool disabled_ = false;
  std::string why_;
  std::vector<Sig> sigs_;
  std::unique_ptr<Capture> capture_;
  std::unique_ptr<hcq::Graph> graph_;
  std::vector<Patch> patches_;
  std::vector<Tensor> outputs_;
  RealizeReport report_;
  std::vector<RealizeReport::KernelRun> replayed_;  // the captured kernels, for SLUICE_DEBUG's replay lines
};

inline Jit jit(Jit::Fn fn) { return Jit(std::move(fn)); }

}  // namespace sluice
