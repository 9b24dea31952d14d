#include "runtime/realize.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "base/error.h"
#include "core/codegen/codegen.h"
#include "runtime/buffer.h"
#include "runtime/debug.h"
#include "runtime/device.h"
#include "runtime/reference.h"

namespace sluice {
namespace {

constexpr std::byte kGuard{0xA5};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// One device allocation of a run: the buffer the kernels see, inside `whole` with guards around it.
struct Allocation {
  hcq::Buffer whole, view;
  UOp buffer;
};

}  // namespace

Realizer::Realizer(hcq::Device& dev, render::Target target, RealizeOptions options)
    : dev_(dev), opt_(options), target_(std::move(target)) {}
Realizer::~Realizer() = default;

std::vector<eval::HostArray> Realizer::run(const std::vector<Tensor>& tensors, RealizeReport* report) {
  std::lock_guard lock(mu_);
  std::vector<UOp> outputs;
  for (const Tensor& t : tensors) outputs.push_back(t.uop());
  const Schedule s = schedule(outputs);
  const int debug = debug_level();

  // Codegen: one kernel per compute item, named uniquely within this run; a repeated AST reuses its kernel.
  codegen::KernelNamer namer;
  std::unordered_map<UOp, std::string> source_of;  // AST -> source
  std::vector<std::string> new_sources, new_names;
  std::vector<const hcq::Program*> progs(s.items.size(), nullptr);
  std::vector<uint64_t> groups(s.items.size(), 0);
  std::vector<hcq::Dims> dims(s.items.size());
  RealizeReport rep;
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ScheduleItem& it = s.items[i];
    if (it.ast.op() != Op::Sink) continue;
    auto kit = kernels_.find(it.ast);
    if (kit == kernels_.end()) kit = kernels_.emplace(it.ast, codegen::make_kernel(it.ast, target_.caps)).first;
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
    if (debug >= 5) std::cerr << k.str();
    if (debug >= 4) std::cerr << src;
    groups[i] = k.global_count();
    dims[i] = {k.global_size[0], k.global_size[1], k.global_size[2]};
    rep.kernels.push_back({k.name, join(it.metadata), groups[i], src.size(), is_new});
  }
  const uint64_t inv0 = dev_.compiler().invocations(), hits0 = dev_.compiler().cache_hits();
  if (!new_sources.empty()) {
    std::vector<hcq::Binary> bins = dev_.compiler().compile_many(new_sources);
    for (size_t i = 0, j = 0; i < s.items.size() && j < new_sources.size(); ++i) {
      const ScheduleItem& it = s.items[i];
      if (it.ast.op() != Op::Sink) continue;
      const std::string& src = source_of.at(it.ast);
      if (programs_.count(src)) continue;
      const size_t at = size_t(std::find(new_sources.begin(), new_sources.end(), src) - new_sources.begin());
      programs_[src] = dev_.load_program(new_names[at], bins[at], {uint32_t(it.bufs.size()), 0});
    }
  }
  rep.compiler_invocations = dev_.compiler().invocations() - inv0;
  rep.compiler_cache_hits = dev_.compiler().cache_hits() - hits0;
  for (size_t i = 0; i < s.items.size(); ++i)
    if (s.items[i].ast.op() == Op::Sink) progs[i] = programs_.at(source_of.at(s.items[i].ast)).get();

  // Memory: every buffer of the schedule, inputs filled from their host data.
  hcq::Allocator& alloc = dev_.allocator();
  const uint64_t guard = opt_.guard_bytes;
  std::unordered_map<UOp, Allocation> mem;
  auto allocation = [&](const UOp& b) -> Allocation& {
    auto [it, fresh] = mem.try_emplace(b);
    if (!fresh) return it->second;
    const uint64_t bytes = uint64_t(b.arg_as<int64_t>()) * uint64_t(b.dtype().itemsize());
    Allocation& a = it->second;
    a.buffer = b;
    a.whole = alloc.alloc(std::max<uint64_t>(bytes + 2 * guard, 1));
    a.view = {a.whole.addr + guard, bytes, 0};
    if (guard) {
      std::vector<std::byte> pat(guard, kGuard);
      alloc.copyin(a.whole, pat.data(), guard, 0);
      alloc.copyin(a.whole, pat.data(), guard, guard + bytes);
    }
    if (auto host = host_buffer(b); host && bytes) alloc.copyin(a.whole, host->bytes.data(), bytes, guard);
    return a;
  };

  hcq::HwQueue q;
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ScheduleItem& it = s.items[i];
    hcq::KernelArgs args;
    for (const UOp& b : it.bufs) args.bufs.push_back(allocation(b).view.addr);
    if (it.ast.op() == Op::Copy) {
      const uint64_t bytes = uint64_t(it.ast.arg_as<int64_t>());
      if (bytes) q.copy(args.bufs[0], args.bufs[1], bytes);
      ++rep.copies;
    } else if (groups[i]) {
      q.exec(*progs[i], args, dims[i]);
    }
  }
  const uint64_t done = q.submit(dev_);
  dev_.synchronize();

  // Results: each output's realized form evaluated over the device's memory (applies its final views).
  auto read = [&](const UOp& b) {
    auto it = mem.find(b);
    if (it == mem.end()) return read_host_buffer(b);
    std::vector<std::byte> bytes(it->second.view.size);
    if (!bytes.empty()) alloc.copyout(bytes.data(), it->second.whole, bytes.size(), guard);
    return eval::HostArray::from_bytes(b.dtype(), {b.arg_as<int64_t>()}, bytes);
  };
  std::vector<eval::HostArray> out;
  for (const UOp& o : outputs) {
    UOp form = o;
    for (const auto& [from, to] : s.becomes)
      if (from == o) form = to;
    out.push_back(eval::evaluate(form, read));
  }

  for (auto& [b, a] : mem) {
    if (guard) {
      std::vector<std::byte> g(2 * guard);
      alloc.copyout(g.data(), a.whole, guard, 0);
      alloc.copyout(g.data() + guard, a.whole, guard, guard + a.view.size);
      for (size_t k = 0; k < g.size(); ++k)
        if (g[k] != kGuard) {
          rep.guard_violations.push_back("buffer of " + std::to_string(b.arg_as<int64_t>()) + " " +
                                         b.dtype().name() + ": guard byte " + std::to_string(k) +
                                         (k < guard ? " before the start" : " after the end"));
          break;
        }
    }
    a.whole.last_use = done;
    alloc.free(a.whole);
  }
  if (debug >= 1)
    std::cerr << "realize: " << rep.kernels.size() << " kernels, " << rep.copies << " copies, "
              << rep.compiler_invocations << " compiler runs\n";
  if (report) *report = std::move(rep);
  return out;
}

eval::HostArray realize_on_cpu(const Tensor& t) { return realizer("CPU").run({t}).at(0); }

}  // namespace sluice
