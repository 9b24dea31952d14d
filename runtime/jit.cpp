#include "runtime/jit.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "base/debug.h"
#include "base/error.h"
#include "base/log.h"
#include "hcq/graph.h"
#include "runtime/buffer.h"
#include "runtime/debug_report.h"
#include "runtime/device.h"
#include "runtime/profile.h"
#include "runtime/realize.h"

namespace sluice {
namespace {

bool jit_disabled() {
  const char* e = std::getenv("SLUICE_JIT");
  return e && std::string(e) == "0";
}

// t realized as one dense buffer (a plain reshape of a BUFFER): the buffer, which replays patch in.
// An empty tensor has no buffer (it folds to a constant): nothing to patch, so a null UOp.
UOp input_buffer(Tensor& t) {
  if (t.numel() == 0) return UOp();
  if (UOp b = t.dense_buffer(); b && device_buffer(b))
    return b;  // already on its device: nothing to schedule
  t.realize();
  UOp b = t.dense_buffer();
  if (!b) {
    t = t.contiguous();
    t.realize();
    b = t.dense_buffer();
  }
  SLUICE_ASSERT(b);
  return b;
}

// SLUICE_DEBUG's lines for one replay (runtime/debug_report.h): it waits for the replay to finish.
void report_replay(hcq::Device& dev, hcq::Clock::time_point start,
                   const std::vector<RealizeReport::KernelRun>& kernels,
                   const std::vector<hcq::GraphItem>& items) {
  dev.synchronize();
  const double wall_ns = std::chrono::duration<double, std::nano>(hcq::Clock::now() - start).count();
  std::vector<hcq::ProfileRecord> recs = dev.take_profile();
  const double dev_ns = report_kernel_runs("replay", recs, kernels, {&dev});
  const size_t copies = size_t(std::count_if(items.begin(), items.end(), [](const hcq::GraphItem& i) {
    return std::holds_alternative<hcq::GraphCopy>(i);
  }));
  log_printf(LogLevel::Info, "jit replay: %zu kernels, %zu copies, device %s, wall %s", items.size() - copies,
             copies, duration_str(dev_ns).c_str(), duration_str(wall_ns).c_str());
  if (profiling_enabled()) record_profile(std::move(recs));
}

}  // namespace

Jit::Jit(Fn fn, JitOptions options) : fn_(std::move(fn)), opt_(options), disabled_(jit_disabled()) {
  if (disabled_) why_ = "SLUICE_JIT=0";
}
Jit::~Jit() = default;
Jit::Jit(Jit&&) noexcept = default;
Jit& Jit::operator=(Jit&&) noexcept = default;

size_t Jit::kernel_count() const { return graph_ ? graph_->size() : 0; }

std::vector<Tensor> Jit::operator()(const std::vector<Tensor>& inputs) {
  ++calls_;
  if (graph_) {
    report_ = {};
    return replay(inputs);
  }
  std::vector<Tensor> in = inputs;
  for (Tensor& t : in) input_buffer(t);
  if ((calls_ == 1 && !opt_.capture_first_call) || disabled_) {
    std::vector<Tensor> out = fn_(in);
    if (out.empty()) return out;
    std::vector<UOp> forms = realizer(out[0].device()).realize(out, &report_);
    for (size_t i = 0; i < out.size(); ++i) out[i] = Tensor(forms[i], out[i].device());
    return out;
  }
  capture(in);
  return outputs_;
}

void Jit::capture(const std::vector<Tensor>& in) {
  const uint64_t before = schedules_run_on_this_thread();
  std::vector<Tensor> out = fn_(in);
  SLUICE_CHECK_IN(ValueError, "jit", !out.empty()) << "the function returned no tensors";
  const bool realized_inside = schedules_run_on_this_thread() != before;
  auto cap = std::make_unique<Capture>();
  std::vector<UOp> forms = realizer(out[0].device()).realize(out, &report_, cap.get());
  for (size_t i = 0; i < out.size(); ++i) out[i] = Tensor(forms[i], out[i].device());
  outputs_ = out;
  // Nothing to replay, or not all of it: stay unjitted.
  why_ = realized_inside ? "the function realized tensors itself (a host read or realize)"
         : !cap->ok      ? cap->why
         : !cap->device || cap->items.empty() ? "the outputs need no kernels"
                                              : "";
  if (!why_.empty()) {
    disabled_ = true;
    return;
  }
  std::vector<UOp> in_bufs;
  for (const Tensor& t : in) {
    Tensor copy = t;
    in_bufs.push_back(input_buffer(copy));
    sigs_.push_back({t.shape(), t.dtype(), t.device()});
  }
  for (size_t item = 0; item < cap->item_bufs.size(); ++item)
    for (uint32_t a = 0; a < cap->item_bufs[item].size(); ++a)
      for (size_t k = 0; k < in_bufs.size(); ++k)
        if (in_bufs[k] && cap->item_bufs[item][a] == in_bufs[k]) patches_.push_back({item, a, k});
  graph_ = std::make_unique<hcq::Graph>(*cap->device, cap->items);
  replayed_ = report_.kernels;
  capture_ = std::move(cap);
}

std::vector<Tensor> Jit::replay(const std::vector<Tensor>& inputs) {
  // The clock is read only for a trace or SLUICE_DEBUG: a replay is the hot path.
  const bool traced = profiling_enabled(), reported = debug_level() >= 1;
  const auto t0 = traced ? hcq::Clock::now() : hcq::Clock::time_point{};
  SLUICE_CHECK_IN(ValueError, "jit", inputs.size() == sigs_.size())
      << "captured with " << sigs_.size() << " inputs, called with " << inputs.size();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Sig& s = sigs_[k];
    const Tensor& t = inputs[k];
    SLUICE_CHECK_IN(ValueError, "jit", t.shape() == s.shape && t.dtype() == s.dtype && t.device() == s.device)
        << "input " << k << ": captured " << tuple_str(s.shape) << " " << s.dtype.name() << " on " << s.device
        << ", got " << tuple_str(t.shape()) << " " << t.dtype().name() << " on " << t.device();
  }
  hcq::Device& dev = *capture_->device;
  std::vector<std::shared_ptr<Buffer>> mem;
  for (const Tensor& t : inputs) {
    Tensor copy = t;
    UOp b = input_buffer(copy);
    mem.push_back(b ? ensure_device_buffer(b, dev) : nullptr);
  }
  for (const Patch& p : patches_) {
    const uint64_t addr = mem[p.input]->addr();
    if (auto* c = std::get_if<hcq::GraphCopy>(&capture_->items[p.item])) {
      (p.arg == 0 ? c->dst : c->src) = addr;
      graph_->set_copy(p.item, c->dst, c->src, c->size);
    } else {
      graph_->set_buf(p.item, p.arg, addr);
    }
  }
  // Both time each replayed kernel; profiling may have started after the capture.
  if (traced || reported) dev.set_profiling(true);
  const auto t_submit = traced || reported ? hcq::Clock::now() : hcq::Clock::time_point{};
  const uint64_t done = graph_->replay();
  if (traced) trace_submit(dev, graph_->queue(), done, t_submit, capture_->item_ops, /*replay=*/true);
  for (auto& m : mem)
    if (m) m->use(done);
  for (auto& m : capture_->memory) m->use(done);
  if (reported) report_replay(dev, t_submit, replayed_, capture_->items);
  if (traced) trace_host_span("jit replay", t0, {{"kernels", int64_t(graph_->size())}});
  return outputs_;
}

}  // namespace sluice
