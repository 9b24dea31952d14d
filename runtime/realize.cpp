#include "runtime/realize.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/debug.h"
#include "base/error.h"
#include "base/log.h"
#include "core/codegen/codegen.h"
#include "core/codegen/estimate.h"
#include "core/codegen/heuristic.h"
#include "core/codegen/opts.h"
#include "core/codegen/search.h"
#include "core/schedule/pack.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/debug_report.h"
#include "runtime/device.h"
#include "runtime/device_name.h"
#include "runtime/profile.h"
#include "runtime/reference.h"

namespace sluice {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// The device an item runs on: its (first) output's (canonical; `self` is the common case, kept cheap).
std::string item_device(const ScheduleItem& it, const std::string& self) {
  std::string d = it.bufs.at(0).device();
  return d == self ? d : canonical_device(d);
}
// The kernel of a compute AST: the heuristic's actions, or BEAM search's when SLUICE_BEAM is set.
codegen::Kernel make_kernel(const UOp& ast, hcq::Device& dev, const render::Target& target) {
  const BeamOptions beam = beam_options_from_env();
  if (beam.width == 0) return codegen::make_kernel(ast, target.caps);
  try {
    return codegen::make_kernel(ast, target.caps, beam_search(ast, dev, target, beam).opts);
  } catch (const Error& e) {  // the search is an optimization: the heuristic still runs the kernel
    log_message(LogLevel::Warn,
                std::string("[beam] search failed, the heuristic's actions are used: ") + e.what());
    return codegen::make_kernel(ast, target.caps);
  }
}

size_t outputs_of(const ScheduleItem& it) { return it.ast.op() == Op::Sink ? it.ast.num_src() : 1; }
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Realizer::Realizer(hcq::Device& dev, render::Target target, RealizeOptions options)
    : dev_(dev), opt_(std::move(options)), target_(std::move(target)) {}
Realizer::~Realizer() = default;

void Realizer::set_options(RealizeOptions o) {
  std::lock_guard lock(mu_);
  opt_ = std::move(o);
}
RealizeOptions Realizer::options() const {
  std::lock_guard lock(mu_);
  return opt_;
}

std::vector<const hcq::Program*> Realizer::prepare(const std::vector<const ScheduleItem*>& items,
                                                   RealizeReport& rep,
                                                   std::vector<std::pair<hcq::Dims, hcq::Dims>>& dims) {
  const int debug = debug_level();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<const hcq::Program*> progs(items.size(), nullptr);
  dims.assign(items.size(), {});
  // Codegen: one kernel per new AST, named uniquely within this batch; a known AST reuses its program.
  codegen::KernelNamer namer;
  std::unordered_map<UOp, std::string> source_of;
  std::vector<std::string> new_sources, new_names;
  std::vector<size_t> pending, pending_runs;  // items lowered here, their rep.kernels entries
  for (size_t i = 0; i < items.size(); ++i) {
    const ScheduleItem& it = *items[i];
    if (it.ast.op() != Op::Sink) continue;
    if (auto k = by_ast_.find(it.ast); k != by_ast_.end()) {
      progs[i] = k->second.program;
      dims[i] = k->second.dims;
      rep.kernels.push_back(k->second.run);
      rep.kernels.back().metadata = join(it.metadata);
      continue;
    }
    auto kit = kernels_.find(it.ast);
    if (kit == kernels_.end()) {
      try {
        kit = kernels_.emplace(it.ast, make_kernel(it.ast, dev_, target_)).first;
      } catch (const Error& e) {  // codegen speaks of its own stages: say which of the user's ops failed
        throw Error("[realize] the kernel of (" + join(it.metadata) + ") cannot run on " + dev_.name() +
                    ": " + e.what());
      }
    }
    codegen::Kernel k = kit->second;
    auto [src_it, fresh] = source_of.try_emplace(it.ast);
    if (fresh) {
      k.name = namer.unique(k.name);
      src_it->second = target_.renderer->render(k);
    }
    const std::string& src = src_it->second;
    const bool is_new = !programs_.count(src);
    if (is_new && std::find(new_sources.begin(), new_sources.end(), src) == new_sources.end()) {
      new_sources.push_back(src);
      new_names.push_back(k.name);
    }
    if (debug >= 3)
      log_message(LogLevel::Info,
                  k.name + " (" + join(it.metadata) + "): " + codegen::opts_str(k.opts) + "\n" + ast_str(it));
    if (debug >= 4) log_message(LogLevel::Info, src);
    if (debug >= 5) log_message(LogLevel::Info, k.str());
    dims[i] = {{k.global_size[0], k.global_size[1], k.global_size[2]},
               {k.local_size[0], k.local_size[1], k.local_size[2]}};
    const codegen::Estimate est = codegen::estimate(k);
    pending_runs.push_back(rep.kernels.size());
    rep.kernels.push_back({k.name, join(it.metadata), k.global_count(), src.size(), is_new, dev_.name(),
                           it.bufs.size(), est.flops, est.bytes, codegen::opts_str(k.opts)});
    pending.push_back(i);
  }
  const uint64_t inv0 = dev_.compiler().invocations(), hits0 = dev_.compiler().cache_hits();
  rep.codegen_ms += ms_since(t0);
  if (profiling_enabled() && !pending.empty())
    trace_host_span("codegen", t0, {{"device", dev_.name()}, {"kernels", int64_t(pending.size())}});
  const auto t1 = std::chrono::steady_clock::now();
  if (!new_sources.empty()) {
    std::vector<hcq::Binary> bins = dev_.compiler().compile_many(new_sources);
    for (size_t j = 0; j < new_sources.size(); ++j) {
      size_t item = 0;  // any item with this source gives the layout (same AST, same buffers)
      for (size_t i : pending)
        if (source_of.at(items[i]->ast) == new_sources[j]) item = i;
      programs_[new_sources[j]] =
          dev_.load_program(new_names[j], bins[j], {uint32_t(items[item]->bufs.size()), 0});
    }
  }
  rep.compile_ms += ms_since(t1);
  rep.compiler_invocations += dev_.compiler().invocations() - inv0;
  rep.compiler_cache_hits += dev_.compiler().cache_hits() - hits0;
  if (profiling_enabled() && !new_sources.empty())
    trace_host_span("compile", t1,
                    {{"device", dev_.name()},
                     {"kernels", int64_t(new_sources.size())},
                     {"compiler_runs", int64_t(dev_.compiler().invocations() - inv0)},
                     {"cache_hits", int64_t(dev_.compiler().cache_hits() - hits0)}});
  for (size_t j = 0; j < pending.size(); ++j) {
    const size_t i = pending[j];
    const hcq::Program* p = dims[i].first.count() ? programs_.at(source_of.at(items[i]->ast)).get() : nullptr;
    progs[i] = p;
    RealizeReport::KernelRun run = rep.kernels[pending_runs[j]];
    run.name = p ? p->name() : "empty";
    run.source_bytes = 0, run.compiled = false;
    by_ast_[items[i]->ast] = {p, dims[i], std::move(run)};
  }
  return progs;
}

uint64_t Realizer::execute(const std::vector<const ScheduleItem*>& items, RealizeReport& rep,
                           Capture* capture, std::vector<std::shared_ptr<Buffer>>& used) {
  std::lock_guard lock(mu_);
  std::vector<std::pair<hcq::Dims, hcq::Dims>> dims;
  std::vector<const hcq::Program*> progs = prepare(items, rep, dims);
  if (capture && capture->device && capture->device != &dev_) {
    capture->ok = false;
    capture->why =
        "the function runs kernels on two devices (" + capture->device->name() + ", " + dev_.name() + ")";
  }
  if (capture) capture->device = &dev_;

  hcq::HwQueue q;
  const bool traced = profiling_enabled();
  std::vector<std::string> q_ops;  // traced: per exec and copy of q, the tensor ops it computes
  auto submit = [&] {
    const auto t = std::chrono::steady_clock::now();
    const uint64_t v = q.submit(dev_);
    if (traced) trace_submit(dev_, q, v, t, q_ops);
    q_ops.clear();
    return v;
  };
  std::vector<std::shared_ptr<Buffer>> mine;
  auto mem = [&](const UOp& b) {
    std::shared_ptr<Buffer> m = ensure_device_buffer(b, dev_, opt_.guard_bytes);
    mine.push_back(m);
    return m;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const ScheduleItem& it = *items[i];
    // The kernel writes its outputs: a host copy (kept for an input written in place) goes stale.
    auto written = [&] {
      for (size_t o = 0; o < outputs_of(it); ++o) drop_host_buffer(it.bufs[o]);
    };
    if (it.ast.op() == Op::Copy) {
      ++rep.copies;
      const uint64_t bytes = uint64_t(it.ast.arg_as<int64_t>());
      std::shared_ptr<Buffer> dst = mem(it.bufs[0]);
      if (item_device(it, dev_.name()) == dev_.name() &&
          canonical_device(it.bufs[1].device()) == dev_.name()) {
        std::shared_ptr<Buffer> src = mem(it.bufs[1]);
        if (bytes) q.copy(dst->addr(), src->addr(), bytes);
        if (traced && bytes) q_ops.push_back(join(it.metadata));
        if (capture && bytes) {
          capture->items.push_back(hcq::GraphCopy{dst->addr(), src->addr(), bytes});
          capture->item_ops.push_back(join(it.metadata));
          capture->item_bufs.push_back({it.bufs[0], it.bufs[1]});
          capture->item_outputs.push_back(1);
        }
      } else {  // from another device: through the host once its work so far is done (copyout waits)
        if (!q.empty()) {
          const uint64_t v = submit();
          for (auto& m : mine) m->use(v);
          q = hcq::HwQueue();
        }
        std::shared_ptr<Buffer> src = device_buffer(it.bufs[1]);
        std::vector<std::byte> host =
            src ? std::vector<std::byte>(bytes) : read_buffer_bytes(it.bufs[1], "copy");
        if (src) src->copyout(host.data());
        dst->copyin(host.data());
        if (capture) capture->ok = false, capture->why = "a copy between devices";
      }
      written();
      continue;
    }
    hcq::KernelArgs args;
    for (const UOp& b : it.bufs) args.bufs.push_back(mem(b)->addr());
    written();
    if (!progs[i]) continue;
    q.exec(*progs[i], args, dims[i].first, dims[i].second);
    if (traced) q_ops.push_back(join(it.metadata));
    if (capture) {
      capture->items.push_back(hcq::GraphExec{progs[i], args, dims[i].first, dims[i].second});
      capture->item_ops.push_back(join(it.metadata));
      capture->item_bufs.push_back(it.bufs);
      capture->item_outputs.push_back(uint32_t(outputs_of(it)));
    }
  }
  uint64_t done = 0;
  if (!q.empty()) done = submit();
  for (auto& m : mine) {
    if (done) m->use(done);
    used.push_back(m);
    if (capture) capture->memory.push_back(m);
  }
  return done;
}

std::vector<UOp> Realizer::realize(const std::vector<Tensor>& tensors, RealizeReport* report,
                                   Capture* capture) {
  std::vector<UOp> outputs;
  for (const Tensor& t : tensors) outputs.push_back(t.uop());
  const auto t0 = std::chrono::steady_clock::now();
  Schedule s = schedule(outputs);
  const double schedule_ms = ms_since(t0);
  if (profiling_enabled()) trace_host_span("schedule", t0, {{"items", int64_t(s.items.size())}});
  if (opt_.edit_schedule) options().edit_schedule(s);
  run_schedule(s, report, capture);
  if (report) report->schedule_ms = schedule_ms;
  std::vector<UOp> forms;
  for (const UOp& o : outputs) {
    UOp form = o;
    for (const auto& [from, to] : s.becomes)
      if (from == o) form = to;
    forms.push_back(form);
  }
  return forms;
}

namespace {
thread_local uint64_t schedules_run = 0;
}
uint64_t schedules_run_on_this_thread() { return schedules_run; }

const std::vector<ScheduleItem>& Realizer::with_panels(const std::vector<ScheduleItem>& items,
                                                       std::vector<ScheduleItem>& storage) {
  const int64_t width = codegen::panel_width(target_.caps);
  if (width == 0) return items;
  std::lock_guard lock(mu_);
  if (panel_plans_.size() > 4096) panel_plans_.clear();  // ASTs only: they hold no device memory
  bool any = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const ScheduleItem& it = items[i];
    const std::optional<PanelPlan>* plan = nullptr;
    if (it.ast.op() == Op::Sink && item_device(it, dev_.name()) == dev_.name()) {
      auto [p, fresh] = panel_plans_.try_emplace(it.ast);
      if (fresh)
        if (std::optional<Panels> got = pack_columns(it, width))
          p->second =
              PanelPlan{got->pack.ast, got->kernel.ast, got->operand, got->pack.bufs[0].arg_as<int64_t>()};
      plan = &p->second;
    }
    if (!plan || !*plan) {
      if (any) storage.push_back(it);
      continue;
    }
    if (!any) storage.assign(items.begin(), items.begin() + int64_t(i)), any = true;
    const PanelPlan& pp = **plan;
    const UOp& b = it.bufs[pp.operand];
    const UOp panels = UOp::new_buffer(b.device(), b.dtype(), pp.elements);
    storage.push_back(ScheduleItem{pp.pack, {panels, b}, {"pack"}});
    storage.push_back(ScheduleItem{pp.matmul, it.bufs, it.metadata});
    storage.back().bufs[pp.operand] = panels;
  }
  return any ? storage : items;
}

void Realizer::run_schedule(const Schedule& s, RealizeReport* report, Capture* capture) {
  std::vector<ScheduleItem> storage;
  const std::vector<ScheduleItem>& items = with_panels(s.items, storage);
  ++schedules_run;
  const int debug = debug_level();
  const bool timed = debug >= 1 || profiling_enabled();
  const auto t0 = std::chrono::steady_clock::now();

  // Consecutive items of one device run together, on that device's Realizer.
  RealizeReport rep;
  std::vector<std::shared_ptr<Buffer>> used;
  std::vector<hcq::Device*> devices;
  std::vector<const ScheduleItem*> seg;
  for (size_t i = 0; i < items.size();) {
    const std::string d = item_device(items[i], dev_.name());
    seg.clear();
    for (; i < items.size() && item_device(items[i], dev_.name()) == d; ++i) seg.push_back(&items[i]);
    Realizer& r = d == dev_.name() ? *this : realizer(d);
    if (timed) r.dev_.set_profiling(true);
    r.execute(seg, rep, capture, used);
    if (std::find(devices.begin(), devices.end(), &r.dev_) == devices.end()) devices.push_back(&r.dev_);
  }

  if (opt_.guard_bytes || debug >= 1) {
    for (hcq::Device* d : devices) d->synchronize();
    for (const auto& b : used)
      for (std::string& v : b->check_guards())
        rep.guard_violations.push_back("buffer of " + std::to_string(b->size()) + " " + b->dtype().name() +
                                       ": " + v);
  }
  if (debug >= 1 && !items.empty()) {  // a realize of realized tensors has nothing to say
    const double wall_ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    std::vector<hcq::ProfileRecord> recs;
    for (hcq::Device* d : devices)
      for (hcq::ProfileRecord& r : d->take_profile()) recs.push_back(std::move(r));
    const double dev_ns = report_kernel_runs("realize", recs, rep.kernels, devices);
    log_printf(LogLevel::Info, "realize: %zu kernels, %zu copies, %llu compiler runs, device %s, wall %s",
               rep.kernels.size(), rep.copies, (unsigned long long)rep.compiler_invocations,
               duration_str(dev_ns).c_str(), duration_str(wall_ns).c_str());
    if (profiling_enabled()) record_profile(std::move(recs));
  }
  if (report) *report = std::move(rep);
}

std::vector<std::byte> Realizer::read(const Tensor& realized, const char* fn) {
  if (realized.numel() == 0) return {};
  UOp b = realized.dense_buffer();
  // A view's elements are gathered on the device (the copy's realized form is dense, so this never
  // recurses): reading its buffer instead would bring the whole buffer to the host for a few elements.
  if (!b) b = Tensor(realize({realized.contiguous()}).at(0), realized.device()).dense_buffer();
  SLUICE_ASSERT(b);
  return read_buffer_bytes(b, fn);
}

std::vector<eval::HostArray> Realizer::run(const std::vector<Tensor>& tensors, RealizeReport* report) {
  const std::vector<UOp> forms = realize(tensors, report);
  std::vector<eval::HostArray> out;
  for (size_t i = 0; i < forms.size(); ++i) {
    const Tensor t(forms[i], tensors[i].device());
    out.push_back(eval::HostArray::from_bytes(t.dtype(), t.shape(), read(t, "realize")));
  }
  return out;
}

Capture::~Capture() {
  if (programs.empty()) return;
  uint64_t last = 0;
  for (const auto& m : memory) last = std::max(last, m->last_use());
  try {
    device->timeline().wait(last);
  } catch (const std::exception&) {
    // A failed timeline: the device skips (or has abandoned) the work that would run these programs.
  }
}

std::string Realizer::source_of(const hcq::Program& program) const {
  std::lock_guard lock(mu_);
  for (const auto& [src, p] : programs_)
    if (p.get() == &program) return src;
  return "";
}

eval::HostArray realize_on_cpu(const Tensor& t) { return realizer("CPU").run({t}).at(0); }

}  // namespace sluice
