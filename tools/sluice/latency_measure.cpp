// The probes of `sluice latency`, one per metric: queue-level latencies sampled after a warm-up, and copy
// bandwidth by size. Device-side intervals come from device timestamps (Signal::timestamp_ns, host clock).
#include <algorithm>
#include <chrono>

#include "conformance/devices.h"
#include "conformance/kernels.h"
#include "hcq/error.h"
#include "hcq/graph.h"
#include "runtime/device.h"
#include "tools/sluice/latency.h"
#include "tools/sluice/trace.h"

namespace sluice::cli {
namespace {

using namespace std::chrono_literals;
constexpr auto kWait = 10s;
constexpr int kGraphKernels = 16;  // kernels per eager burst / graph replay

struct Probe {
  int iters, warmup;

  // Runs f warmup + iters times; keeps the samples after the warm-up.
  template <class F>
  std::vector<double> sample(F&& f) {
    std::vector<double> out;
    for (int i = 0; i < warmup + iters; ++i) {
      double v = f();
      if (i >= warmup) out.push_back(v);
    }
    return out;
  }
  double since(uint64_t t0) { return double(hcq::now_ns() - t0); }
};

hcq::Device* partner_of(const std::string& name, hcq::Device& dev, std::string& partner) {
  for (std::string cand : {name + ":1", std::string("CPU")}) {
    try {
      hcq::Device* d = &open_device(cand);
      if (d != &dev) {
        partner = cand;
        return d;
      }
    } catch (const std::exception&) {}
  }
  return nullptr;
}

const char* line_of(const std::string& metric) {
  for (const MetricInfo& m : latency_metrics())
    if (metric == m.name) return m.line;
  return "";
}

}  // namespace

const std::vector<MetricInfo>& latency_metrics() {
  static const std::vector<MetricInfo> table = {
      {"empty_submit", "host time to submit an empty queue (no device work)", false},
      {"submit_signal", "submit a queue that only signals, until the host sees it", false},
      {"host_signal_wake", "host sets a signal -> the queue waiting on it runs", false},
      {"kernel_eager", "a 1-thread kernel per submit, bursts of 16, per kernel", false},
      {"graph_replay", "a captured graph of 16 such kernels replayed, per kernel", false},
      {"compute_to_copy", "compute queue signals -> the copy queue waiting runs", false},
      {"copy_to_compute", "copy queue signals -> the compute queue waiting runs", false},
      {"cross_device", "a queue signals -> a queue of another device runs", false},
      {"h2d", "host -> device copy bandwidth by size (GB/s = 1e9 B/s)", true},
      {"d2h", "device -> host copy bandwidth by size", true},
      {"d2d", "device -> device copy on the copy queue, by size", true},
  };
  return table;
}

bool LatencySpec::selected(const std::string& metric) const {
  return std::find(metrics.begin(), metrics.end(), metric) != metrics.end();
}

size_t latency_steps(const LatencySpec& spec) {
  size_t n = 0;
  for (const MetricInfo& m : latency_metrics())
    if (spec.selected(m.name)) n += m.bandwidth ? spec.sizes.size() : 1;
  return n;
}

LatencyReport measure_latency(const std::string& name, const LatencySpec& spec, Progress& progress) {
  hcq::Device& dev = open_device(name);
  trace_device(dev);
  LatencyReport rep{name, dev.properties(), spec.iters, spec.warmup, {}, {}};
  Probe p{spec.iters, spec.warmup};
  auto want = [&](const char* n) { return spec.selected(n); };
  auto add = [&](const char* n, std::string d, std::vector<double> ns) {
    rep.metrics.push_back({n, std::move(d), std::move(ns), {}, ""});
    rep.metrics.back().stats = stats_of(rep.metrics.back().ns);
    progress.step();
  };
  auto skip = [&](const char* n, std::string why) {
    rep.metrics.push_back({n, line_of(n), {}, {}, std::move(why)});
    progress.step();
  };
  auto s = dev.new_signal("latency");
  uint64_t v = 0;

  if (want("empty_submit")) {
    int since_sync = 0;
    add("empty_submit", line_of("empty_submit"), p.sample([&] {
      if (++since_sync % 64 == 0) dev.synchronize(kWait);  // keep the ring from filling (not timed)
      const uint64_t t0 = hcq::now_ns();
      hcq::HwQueue().submit(dev);
      return p.since(t0);
    }));
    dev.synchronize(kWait);
  }
  if (want("submit_signal"))
    add("submit_signal", line_of("submit_signal"), p.sample([&] {
      hcq::HwQueue q;
      q.signal(*s, ++v);
      const uint64_t t0 = hcq::now_ns();
      q.submit(dev);
      s->wait(v, kWait);
      return p.since(t0);
    }));
  if (want("host_signal_wake")) {
    auto gate = dev.new_signal("gate");
    add("host_signal_wake", line_of("host_signal_wake"), p.sample([&] {
      ++v;
      hcq::HwQueue().wait(*gate, v).signal(*s, v).submit(dev);
      const uint64_t spin = hcq::now_ns();
      while (hcq::now_ns() - spin < 20'000) {}  // let the queue reach its wait
      const uint64_t t0 = hcq::now_ns();
      gate->set(v);
      s->wait(v, kWait);
      return s->timestamp_ns() > t0 ? double(s->timestamp_ns() - t0) : 0.0;
    }));
  }

  if (want("kernel_eager") || want("graph_replay")) {
    // The conformance suite's inc (buf[g] += 1) over one element, in the device's language.
    std::unique_ptr<hcq::Program> inc;
    std::string why;
    try {
      inc = conformance::load_kernels(dev, conformance::device_entry(name).language).inc;
    } catch (const std::exception& e) { why = std::string("its kernel cannot be built: ") + e.what(); }
    hcq::Buffer buf = dev.allocator().alloc(4);
    const hcq::KernelArgs args{{buf.addr}, {}};
    const hcq::Dims one{1};
    if (want("kernel_eager") && !inc) skip("kernel_eager", why);
    if (want("kernel_eager") && inc)
      add("kernel_eager", line_of("kernel_eager"), p.sample([&] {
        const uint64_t t0 = hcq::now_ns();
        uint64_t last = 0;
        for (int i = 0; i < kGraphKernels; ++i) last = hcq::HwQueue().exec(*inc, args, one).submit(dev);
        dev.timeline().wait(last, kWait);
        return p.since(t0) / kGraphKernels;
      }));
    if (want("graph_replay") && !inc) skip("graph_replay", why);
    if (want("graph_replay") && inc) {
      std::vector<hcq::GraphItem> items(kGraphKernels, hcq::GraphExec{inc.get(), args, one});
      hcq::Graph g(dev, items);
      add("graph_replay", line_of("graph_replay"), p.sample([&] {
        const uint64_t t0 = hcq::now_ns();
        dev.timeline().wait(g.replay(), kWait);
        return p.since(t0) / kGraphKernels;
      }));
    }
    buf.last_use = dev.timeline_value();
    dev.allocator().free(buf);
    if (inc) dev.synchronize(kWait);  // the program goes only once the device is done with it
  }

  // Queue to queue: the first queue signals a, the second waits for it and signals b; b - a on the device.
  auto hop = [&](hcq::Device& d1, hcq::HwQueue q1, hcq::Device& d2, hcq::HwQueue q2) {
    auto a = d1.new_signal("from"), b = d2.new_signal("to");
    uint64_t w = 0;
    return p.sample([&] {
      ++w;
      hcq::HwQueue second = q2;
      second.wait(*a, w).signal(*b, w).submit(d2);
      hcq::HwQueue first = q1;
      first.signal(*a, w).submit(d1);
      b->wait(w, kWait);
      return b->timestamp_ns() > a->timestamp_ns() ? double(b->timestamp_ns() - a->timestamp_ns()) : 0.0;
    });
  };
  const bool copy_q = dev.queue_count(hcq::QueueKind::Copy) > 0;
  const hcq::HwQueue compute(hcq::QueueKind::Compute), copy(hcq::QueueKind::Copy);
  if (want("compute_to_copy")) {
    if (copy_q)
      add("compute_to_copy", line_of("compute_to_copy"), hop(dev, compute, dev, copy));
    else
      skip("compute_to_copy", "the device has no copy queue");
  }
  if (want("copy_to_compute")) {
    if (copy_q)
      add("copy_to_compute", line_of("copy_to_compute"), hop(dev, copy, dev, compute));
    else
      skip("copy_to_compute", "the device has no copy queue");
  }
  if (want("cross_device")) {
    std::string partner;
    if (hcq::Device* other = partner_of(name, dev, partner))
      add("cross_device", "a queue of " + name + " signals -> a queue of " + partner + " runs",
          hop(dev, hcq::HwQueue(), *other, hcq::HwQueue()));
    else
      skip("cross_device", "no second device opens");
  }

  // Bandwidth: fewer copies for big sizes (about 1 GiB moved per point at most).
  const bool any_copy = want("h2d") || want("d2h") || want("d2d");
  for (uint64_t size : any_copy ? spec.sizes : std::vector<uint64_t>{}) {
    const int n = int(std::clamp<uint64_t>((uint64_t(1) << 30) / size, 3, uint64_t(spec.max_copies)));
    std::vector<uint8_t> host(size, 1);
    hcq::Buffer a = dev.allocator().alloc(size), b = dev.allocator().alloc(size);
    auto point = [&](const char* dir, auto&& f) {
      if (!want(dir)) return;
      std::vector<double> g;
      f();  // warm-up: first touch of the pages
      for (int i = 0; i < n; ++i) {
        const uint64_t t0 = hcq::now_ns();
        f();
        g.push_back(double(size) / std::max(1.0, double(hcq::now_ns() - t0)));
      }
      rep.bandwidth.push_back({dir, size, g, stats_of(g)});
      progress.step();
    };
    point("h2d", [&] { dev.allocator().copyin(a, host.data(), size); });
    point("d2h", [&] { dev.allocator().copyout(host.data(), a, size); });
    point("d2d", [&] {
      const uint64_t t = hcq::HwQueue(copy_q ? hcq::QueueKind::Copy : hcq::QueueKind::Compute)
                             .copy(b.addr, a.addr, size)
                             .submit(dev);
      dev.timeline().wait(t, kWait);
    });
    a.last_use = b.last_use = dev.timeline_value();
    dev.allocator().free(a);
    dev.allocator().free(b);
  }
  dev.allocator().trim();
  return rep;
}

}  // namespace sluice::cli
