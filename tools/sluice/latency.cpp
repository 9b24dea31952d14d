// `sluice latency`: queue-level latencies (min/median/p99/max after a warm-up) and copy bandwidth of a
// device. Device-side intervals come from device timestamps (Signal::timestamp_ns, host clock).
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "hcq/error.h"
#include "hcq/graph.h"
#include "runtime/device.h"
#include "tools/sluice/kernels.h"
#include "tools/sluice/latency.h"
#include "tools/sluice/trace.h"

namespace sluice::cli {
namespace {

using namespace std::chrono_literals;
constexpr auto kWait = 10s;
constexpr int kGraphKernels = 16;  // kernels per eager burst / graph replay

struct Probe {
  hcq::Device& dev;
  std::string name;
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

LatencyReport measure(const std::string& name, int iters, bool quick) {
  hcq::Device& dev = open_device(name);
  trace_device(dev);
  LatencyReport rep{name, iters, std::max(3, iters / 10), {}, {}};
  Probe p{dev, name, rep.iters, rep.warmup};
  auto add = [&](const char* n, const char* d, std::vector<double> ns) {
    rep.metrics.push_back({n, d, std::move(ns), {}, ""});
    rep.metrics.back().stats = stats_of(rep.metrics.back().ns);
  };
  auto skip = [&](const char* n, const char* d, std::string why) {
    rep.metrics.push_back({n, d, {}, {}, why});
  };
  auto s = dev.new_signal("latency");
  uint64_t v = 0;

  int since_sync = 0;
  add("empty_submit", "host cost of submitting an empty queue", p.sample([&] {
    if (++since_sync % 64 == 0) dev.synchronize(kWait);  // keep the ring from filling (not timed)
    const uint64_t t0 = hcq::now_ns();
    hcq::HwQueue().submit(dev);
    return p.since(t0);
  }));
  dev.synchronize(kWait);
  add("submit_signal", "submit -> signal round trip seen by the host", p.sample([&] {
    hcq::HwQueue q;
    q.signal(*s, ++v);
    const uint64_t t0 = hcq::now_ns();
    q.submit(dev);
    s->wait(v, kWait);
    return p.since(t0);
  }));
  auto gate = dev.new_signal("gate");
  add("host_signal_wake", "host signal -> device wait wakes (device timestamp)", p.sample([&] {
    ++v;
    hcq::HwQueue().wait(*gate, v).signal(*s, v).submit(dev);
    const uint64_t spin = hcq::now_ns();
    while (hcq::now_ns() - spin < 20'000) {}  // let the queue reach its wait
    const uint64_t t0 = hcq::now_ns();
    gate->set(v);
    s->wait(v, kWait);
    return s->timestamp_ns() > t0 ? double(s->timestamp_ns() - t0) : 0.0;
  }));

  Add1Kernel k = make_add1_kernel(name, 1);
  hcq::Buffer buf = dev.allocator().alloc(4);
  const hcq::KernelArgs args = k.args(buf.addr, buf.addr);
  add("kernel_eager", "one kernel per submit, per kernel (bursts of 16)", p.sample([&] {
    const uint64_t t0 = hcq::now_ns();
    uint64_t last = 0;
    for (int i = 0; i < kGraphKernels; ++i)
      last = hcq::HwQueue().exec(*k.program, args, k.global, k.local).submit(dev);
    dev.timeline().wait(last, kWait);
    return p.since(t0) / kGraphKernels;
  }));
  {
    std::vector<hcq::GraphItem> items(kGraphKernels,
                                      hcq::GraphExec{k.program.get(), args, k.global, k.local});
    hcq::Graph g(dev, items);
    add("graph_replay", "graph of 16 kernels replayed, per kernel", p.sample([&] {
      const uint64_t t0 = hcq::now_ns();
      dev.timeline().wait(g.replay(), kWait);
      return p.since(t0) / kGraphKernels;
    }));
  }
  buf.last_use = dev.timeline_value();
  dev.allocator().free(buf);

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
  if (dev.queue_count(hcq::QueueKind::Copy) > 0) {
    add("compute_to_copy", "compute queue signal -> copy queue wakes",
        hop(dev, hcq::HwQueue(hcq::QueueKind::Compute), dev, hcq::HwQueue(hcq::QueueKind::Copy)));
    add("copy_to_compute", "copy queue signal -> compute queue wakes",
        hop(dev, hcq::HwQueue(hcq::QueueKind::Copy), dev, hcq::HwQueue(hcq::QueueKind::Compute)));
  } else {
    skip("compute_to_copy", "compute queue signal -> copy queue wakes", "no copy queue");
    skip("copy_to_compute", "copy queue signal -> compute queue wakes", "no copy queue");
  }
  std::string partner;
  if (hcq::Device* other = partner_of(name, dev, partner)) {
    std::string d = "signal on " + name + " -> queue of " + partner + " wakes";
    add("cross_device", d.c_str(), hop(dev, hcq::HwQueue(), *other, hcq::HwQueue()));
  } else {
    skip("cross_device", "signal -> queue of another device wakes", "no second device");
  }

  // Bandwidth: sizes 4 KiB .. 256 MiB (quick: .. 16 MiB) in steps of 4x; fewer iterations for big sizes.
  const uint64_t max_size = quick ? uint64_t(16) << 20 : uint64_t(256) << 20;
  const bool copy_q = dev.queue_count(hcq::QueueKind::Copy) > 0;
  for (uint64_t size = 4096; size <= max_size; size *= 4) {
    const int n = int(std::clamp<uint64_t>((uint64_t(1) << 30) / size, 3, uint64_t(quick ? 20 : 100)));
    std::vector<uint8_t> host(size, 1);
    hcq::Buffer a = dev.allocator().alloc(size), b = dev.allocator().alloc(size);
    auto point = [&](const char* dir, auto&& f) {
      std::vector<double> g;
      f();  // warm-up: first touch of the pages
      for (int i = 0; i < n; ++i) {
        const uint64_t t0 = hcq::now_ns();
        f();
        g.push_back(double(size) / std::max(1.0, double(hcq::now_ns() - t0)));
      }
      rep.bandwidth.push_back({dir, size, g, stats_of(g)});
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

nlohmann::json to_json(const LatencyReport& r) {
  nlohmann::json j = {{"device", r.device}, {"iters", r.iters}, {"warmup", r.warmup}};
  j["latency"] = nlohmann::json::array();
  for (const LatencyMetric& m : r.metrics) {
    nlohmann::json e = {{"name", m.name}, {"description", m.description}};
    if (!m.skipped.empty())
      e["skipped"] = m.skipped;
    else
      e.update({{"samples", m.stats.n},
                {"min_ns", m.stats.min},
                {"median_ns", m.stats.median},
                {"p99_ns", m.stats.p99},
                {"max_ns", m.stats.max}});
    j["latency"].push_back(e);
  }
  j["bandwidth"] = nlohmann::json::array();
  for (const BandwidthPoint& b : r.bandwidth)
    j["bandwidth"].push_back({{"direction", b.direction},
                              {"bytes", b.bytes},
                              {"samples", b.stats.n},
                              {"min_gbps", b.stats.min},
                              {"median_gbps", b.stats.median},
                              {"max_gbps", b.stats.max}});
  return j;
}

void print_human(const LatencyReport& r) {
  std::printf("%s: %d iterations after %d warm-up\n", r.device.c_str(), r.iters, r.warmup);
  std::printf("  %-20s %10s %10s %10s %10s\n", "latency", "min", "median", "p99", "max");
  for (const LatencyMetric& m : r.metrics) {
    if (!m.skipped.empty()) {
      std::printf("  %-20s %s\n", m.name.c_str(), ("skipped: " + m.skipped).substr(0, 54).c_str());
      continue;
    }
    std::printf("  %-20s %10s %10s %10s %10s\n", m.name.c_str(), format_ns(m.stats.min).c_str(),
                format_ns(m.stats.median).c_str(), format_ns(m.stats.p99).c_str(),
                format_ns(m.stats.max).c_str());
  }
  std::printf("  %-20s %10s %10s %10s\n", "bandwidth GB/s", "h2d", "d2h", "d2d");
  for (size_t i = 0; i + 2 < r.bandwidth.size(); i += 3)
    std::printf("  %-20s %10.2f %10.2f %10.2f\n", format_bytes(r.bandwidth[i].bytes).c_str(),
                r.bandwidth[i].stats.median, r.bandwidth[i + 1].stats.median,
                r.bandwidth[i + 2].stats.median);
}

struct Options {
  std::string device, html;
  int iters = 0;
  bool quick = false, json = false;
};

int run(const Options& o) {
  std::vector<std::string> devices =
      o.device.empty() ? std::vector<std::string>{default_device_name()} : select_devices(o.device);
  const int iters = o.iters > 0 ? o.iters : o.quick ? 200 : 1000;
  std::vector<LatencyReport> reports;
  for (const std::string& d : devices) reports.push_back(measure(d, iters, o.quick));
  if (o.json) {
    nlohmann::json j = {{"devices", nlohmann::json::array()}};
    for (const LatencyReport& r : reports) j["devices"].push_back(to_json(r));
    std::cout << j.dump(2) << "\n";
  } else {
    for (const LatencyReport& r : reports) print_human(r);
  }
  if (!o.html.empty()) {
    std::ofstream f(o.html);
    f << render_html(reports);
    if (!f) throw std::runtime_error("cannot write " + o.html);
  }
  return 0;
}

}  // namespace

void add_latency_command(CLI::App& app, int& exit_code) {
  static Options o;
  CLI::App* cmd = app.add_subcommand("latency", "Queue latencies and copy bandwidth of a device");
  cmd->add_option("--device", o.device, "Devices, comma-separated, or 'all' (default one)");
  cmd->add_option("--iters", o.iters, "Iterations after warm-up (1000; --quick: 200)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--quick", o.quick, "Fewer iterations, bandwidth up to 16 MiB");
  cmd->add_flag("--json", o.json, "Machine-readable output on stdout");
  cmd->add_option("--html", o.html, "Also write a self-contained HTML report here");
  cmd->callback([&exit_code] { exit_code = run(o); });
}

}  // namespace sluice::cli
