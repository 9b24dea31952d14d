#include "runtime/beam.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "base/log.h"
#include "base/splitmix64.h"
#include "core/codegen/codegen.h"
#include "core/eval/kernel_eval.h"
#include "core/schedule/views.h"
#include "hcq/atomic_file.h"
#include "hcq/compiler.h"
#include "hcq/error.h"
#include "hcq/profile.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using codegen::Candidate;
using codegen::Kernel;
using codegen::Opt;

constexpr size_t kChunk = 8;    // candidates compiled together (one compiler batch)
constexpr size_t kChecked = 3;  // the fastest entries the reference check may try, in order

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double env_number(const char* name, double fallback, double lo, double hi) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  char* end = nullptr;
  const double v = std::strtod(e, &end);
  SLUICE_CHECK_IN(ValueError, "beam_options_from_env", end && *end == 0 && v >= lo && v <= hi)
      << name << "='" << e << "' is not a number from " << lo << " to " << hi;
  return v;
}

// ------------------------------------------------------------------ the cache

std::optional<std::vector<Opt>> read_cache(const std::string& path, BeamResult& r) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line, opts;
  bool have = false;
  while (std::getline(in, line)) {
    if (line.rfind("opts: ", 0) == 0) opts = line.substr(6), have = true;
    if (line.rfind("best_us: ", 0) == 0) r.best_us = std::atof(line.c_str() + 9);
    if (line.rfind("heuristic_us: ", 0) == 0) r.heuristic_us = std::atof(line.c_str() + 14);
  }
  if (!have) return std::nullopt;
  try {
    return codegen::parse_opts(opts);
  } catch (const ValueError& e) {  // a damaged entry: search again and overwrite it
    log_message(LogLevel::Warn, "[beam] ignoring the cache entry " + path + ": " + e.what());
    return std::nullopt;
  }
}

void write_cache(const std::string& path, const BeamResult& r, const std::string& kernel) {
  const std::string text = "kernel: " + kernel + "\nopts: " + codegen::opts_str(r.opts) +
                           "\nbest_us: " + std::to_string(r.best_us) +
                           "\nheuristic_us: " + std::to_string(r.heuristic_us) + "\n";
  hcq::write_file_atomic(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

// ------------------------------------------------------------------ the kernel's buffers

// Random contents: floats in [-1, 1), integers in [1, 8] (no division by zero), bools 0/1.
eval::HostArray random_array(DType dt, int64_t n, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    const uint64_t r = splitmix64(seed);
    x = dt.is_float()  ? double(r >> 11) / double(1ULL << 52) - 1.0
        : dt.is_bool() ? double(r & 1)
                       : double(1 + r % 8);
  }
  return eval::HostArray::from_values(dt, {n}, v);
}

// Device memory for every buffer of a kernel, with its random starting contents kept on the host.
class Scratch {
 public:
  Scratch(hcq::Device& dev, const Kernel& k) : dev_(dev) {
    for (size_t i = 0; i < k.bufs.size(); ++i) {
      host_.push_back(random_array(k.bufs[i].dtype, std::max<int64_t>(k.bufs[i].size, 1), 0x5eed + i));
      mem_.push_back(
          dev.allocator().alloc(uint64_t(host_.back().numel()) * uint64_t(k.bufs[i].dtype.itemsize())));
      addrs_.push_back(mem_.back().addr);
    }
    reset();
  }
  ~Scratch() {
    try {
      dev_.synchronize();
    } catch (const Error&) {  // the device failed: its memory is still freed below
    }
    for (const hcq::Buffer& b : mem_) dev_.allocator().free(b);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  void reset() {  // every buffer back to its starting contents (a kernel may read what it writes)
    dev_.synchronize();
    for (size_t i = 0; i < mem_.size(); ++i) {
      const std::vector<std::byte> bytes = host_[i].to_bytes();
      dev_.allocator().copyin(mem_[i], bytes.data(), bytes.size());
    }
  }
  const std::vector<uint64_t>& addrs() const { return addrs_; }
  const std::vector<eval::HostArray>& host() const { return host_; }
  eval::HostArray read(size_t i, DType dt) {
    dev_.synchronize();
    std::vector<std::byte> out(mem_[i].size);
    dev_.allocator().copyout(out.data(), mem_[i], out.size());
    return eval::HostArray::from_bytes(dt, {int64_t(out.size() / size_t(dt.itemsize()))}, out);
  }

 private:
  hcq::Device& dev_;
  std::vector<eval::HostArray> host_;
  std::vector<hcq::Buffer> mem_;
  std::vector<uint64_t> addrs_;
};

// ------------------------------------------------------------------ compiling and timing

struct Entry {
  std::vector<Opt> opts;
  Kernel kernel;
  std::unique_ptr<hcq::Program> program;
  double us = INFINITY;
};

std::string label(const Entry& e) { return codegen::opts_str(e.opts); }

// Compiles the entries' kernels in one batch; when the batch fails, one by one, skipping the failures.
void compile(hcq::Device& dev, const render::Target& target, std::vector<Entry>& entries, BeamResult& r) {
  std::vector<std::string> sources;
  for (const Entry& e : entries) sources.push_back(target.renderer->render(e.kernel));
  std::vector<hcq::Binary> bins;
  try {
    bins = dev.compiler().compile_many(sources);
  } catch (const Error&) { bins.clear(); }
  std::vector<Entry> ok;
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    try {
      const hcq::Binary bin = bins.empty() ? dev.compiler().compile(sources[i]) : bins[i];
      e.program = dev.load_program(e.kernel.name, bin, {uint32_t(e.kernel.bufs.size()), 0});
      ok.push_back(std::move(e));
    } catch (const Error& err) { r.skipped.push_back(label(e) + ": " + err.what()); }
  }
  entries = std::move(ok);
}

// One run: its time by the device's own profile record of it (every backend records an exec's start and
// end: the CPU device around the call, GPUs with their queries or events) and by the host's clock around
// the submit and the wait, in microseconds (0 where no record came back). Nothing past the deadline (the
// run is then waited for without one, so the next candidate starts on an idle queue).
struct RunTime {
  double device_us = 0, host_us = 0;
};

// The device's profiling on for a run and its records taken, put back as it was however the run ends.
class Profiling {
 public:
  explicit Profiling(hcq::Device& dev) : dev_(dev), was_(dev.profiling()) { dev.set_profiling(true); }
  ~Profiling() { dev_.set_profiling(was_); }
  Profiling(const Profiling&) = delete;
  Profiling& operator=(const Profiling&) = delete;

 private:
  hcq::Device& dev_;
  bool was_;
};

std::optional<RunTime> run_once(hcq::Device& dev, const Entry& e, const Scratch& s,
                                std::chrono::nanoseconds limit) {
  auto done = dev.new_signal("beam");
  hcq::HwQueue q;
  const Kernel& k = e.kernel;
  q.exec(*e.program, {s.addrs(), {}}, {k.global_size[0], k.global_size[1], k.global_size[2]},
         {k.local_size[0], k.local_size[1], k.local_size[2]})
      .signal(*done, 1);
  Profiling on(dev);  // until the records are taken: a backend may look when the kernel runs
  const uint64_t h0 = hcq::now_ns();
  const uint64_t v = q.submit(dev);
  bool late = false;
  try {
    done->wait(1, limit);
  } catch (const hcq::TimeoutError&) {
    done->wait(1);
    late = true;
  }
  RunTime t{0, double(hcq::now_ns() - h0) / 1e3};
  dev.timeline().wait(v);  // the records are the device's once the submission retires
  if (late) {
    dev.take_profile();
    return std::nullopt;
  }
  for (const hcq::ProfileRecord& r : dev.take_profile())
    if (r.submission == v && r.name == k.name) t.device_us = double(r.end_ns - r.start_ns) / 1e3;
  return t;
}

// The fastest of `repeats` runs (one when the first is far behind `best`); infinity with a reason in
// r.skipped when the candidate fails or runs past its deadline.
// host_clock: the device's records are missing or say 0 (PoCL stamps both ends at completion), so every
// candidate of the search is timed on the host clock instead.
void time_entry(hcq::Device& dev, Entry& e, const Scratch& s, const BeamOptions& o, double best_us,
                BeamResult& r, bool host_clock) {
  const double limit_us = std::isfinite(best_us) ? std::max(1e6, 20 * best_us) : 60e6;
  const auto limit = std::chrono::nanoseconds(int64_t(limit_us * 1e3));
  try {
    // One untimed run first, with a generous deadline: a first launch pays for what later ones reuse (a
    // driver compiling the pipeline; the CPU device splits a program's first run across its cores and
    // runs a cheap one whole after).
    if (!run_once(dev, e, s, std::max(limit, std::chrono::nanoseconds(std::chrono::minutes(1))))) {
      r.skipped.push_back(label(e) + ": ran past its deadline of " + std::to_string(limit_us / 1e3) + " ms");
      return;
    }
    for (int i = 0; i < std::max(o.repeats, 1); ++i) {
      std::optional<RunTime> t = run_once(dev, e, s, limit);
      if (!t) {
        r.skipped.push_back(label(e) + ": ran past its deadline of " + std::to_string(limit_us / 1e3) +
                            " ms");
        e.us = INFINITY;
        return;
      }
      // A run the device has no record of (or one that says 0) counts at its host time: slower, never
      // a false winner.
      e.us = std::min(e.us, host_clock || !(t->device_us > 0) ? t->host_us : t->device_us);
      if (e.us > 3 * best_us) break;  // no contender: one run tells
    }
    ++r.timed;
  } catch (const Error& err) {
    r.skipped.push_back(label(e) + ": " + err.what());
    e.us = INFINITY;
  }
}

// ------------------------------------------------------------------ the check

// Output elements to compare: all of them when the walk is cheap, else an even sample with both ends.
std::vector<int64_t> sample_elements(const UOp& ast) {
  const int64_t n = prod(sched::st_of(ast.src(0).src(1)).shape());
  int64_t reduce = 1;  // elements folded into one output: the largest view's size over the output's
  for (const UOp& u : ast.toposort())
    if (u.op() == Op::View)
      reduce = std::max<int64_t>(reduce, prod(sched::st_of(u).shape()) / std::max<int64_t>(n, 1));
  const int64_t budget = std::max<int64_t>(256, (int64_t(1) << 22) / std::max<int64_t>(reduce, 1));
  std::vector<int64_t> e;
  if (n <= budget) {
    for (int64_t i = 0; i < n; ++i) e.push_back(i);
    return e;
  }
  for (int64_t i = 0; i < budget; ++i) e.push_back(i * (n - 1) / (budget - 1));
  return e;
}

bool close(const eval::HostArray& got, const eval::KernelValue& want, DType dt) {
  if (!want.defined) return true;
  if (!dt.is_float()) return got.scalar(want.position).i == want.value.i;
  const double g = got.f[size_t(want.position)], w = round_float(dt, want.value.f);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
  if (std::isinf(w) || std::isinf(g)) return g == w;
  const double tol = dt.itemsize() >= 4 ? 1e-3 : 2e-2;
  return std::abs(g - w) <= tol + tol * std::abs(w);
}

// "" when the entry's outputs match the reference evaluator, else the first mismatch.
std::string check(hcq::Device& dev, const UOp& ast, Entry& e, Scratch& s) {
  s.reset();
  if (!run_once(dev, e, s, std::chrono::hours(1))) return "did not finish";
  const std::vector<eval::KernelValue> want = eval::evaluate_kernel(ast, s.host(), sample_elements(ast));
  std::vector<std::optional<eval::HostArray>> got(e.kernel.bufs.size());
  for (const eval::KernelValue& w : want) {
    const DType dt = e.kernel.bufs[w.buffer].dtype;
    if (!got[w.buffer]) got[w.buffer] = s.read(w.buffer, dt);
    if (!close(*got[w.buffer], w, dt)) {
      std::ostringstream os;
      os << "output " << w.buffer << " element " << w.position << " is " << got[w.buffer]->value(w.position)
         << ", the reference evaluator gives " << (dt.is_float() ? w.value.f : double(w.value.i));
      return os.str();
    }
  }
  return "";
}

// ------------------------------------------------------------------ the search

std::vector<Entry> entries_of(std::vector<Candidate> cands, const BeamOptions& o, BeamResult& r,
                              codegen::KernelNamer& namer) {
  std::vector<Entry> out;
  for (Candidate& c : cands) {
    try {
      if (o.probe) o.probe(c);
    } catch (const Error& err) {
      r.skipped.push_back(codegen::opts_str(c.opts) + ": " + err.what());
      continue;
    }
    c.kernel.name = namer.unique(c.kernel.name);
    out.push_back({std::move(c.opts), std::move(c.kernel), nullptr, INFINITY});
  }
  return out;
}

BeamResult search(const UOp& ast, const Kernel& heuristic, hcq::Device& dev, const render::Target& target,
                  const BeamOptions& o) {
  BeamResult r;
  codegen::KernelNamer namer;  // names unique within every batch of this search
  Scratch scratch(dev, heuristic);

  // Round 0: the heuristic's kernel and the plain one.
  std::vector<Entry> all = entries_of(
      {{heuristic.opts, heuristic}, {{}, codegen::make_kernel(ast, target.caps, {})}}, o, r, namer);
  compile(dev, target, all, r);
  bool host_clock = all.empty();  // decided by three runs of the first entry
  for (int i = 0; i < 3 && !host_clock; ++i) {
    try {
      std::optional<RunTime> t = run_once(dev, all[0], scratch, std::chrono::minutes(1));
      host_clock = !t || !(t->device_us > 0);
    } catch (const Error&) {  // that entry fails: time_entry says why; the host clock is always there
      host_clock = true;
    }
  }
  for (Entry& e : all) time_entry(dev, e, scratch, o, INFINITY, r, host_clock);
  for (const Entry& e : all)
    if (e.opts == heuristic.opts) r.heuristic_us = e.us;
  auto best_of = [](const std::vector<Entry>& v) {
    double b = INFINITY;
    for (const Entry& e : v) b = std::min(b, e.us);
    return b;
  };

  std::vector<std::vector<Opt>> beam{{}};
  double beam_best = INFINITY;
  std::vector<std::vector<Opt>> tried{heuristic.opts, {}};
  // The budget is the search's from here, and its first batch always runs (beam.h): on a loaded machine
  // round 0 alone took longer than a small budget, and the search then timed no candidate at all.
  const auto t0 = Clock::now();
  bool searched = false;
  auto within_budget = [&] { return !searched || seconds_since(t0) < o.budget_s; };
  while (within_budget()) {
    std::vector<Candidate> cands;
    for (const std::vector<Opt>& base : beam)
      for (Candidate& c : codegen::next_candidates(ast, target.caps, base))
        if (std::find(tried.begin(), tried.end(), c.opts) == tried.end()) {
          tried.push_back(c.opts);
          cands.push_back(std::move(c));
        }
    if (cands.empty()) break;
    std::vector<Entry> round;
    for (size_t at = 0; at < cands.size() && within_budget(); at += kChunk) {
      // In chunks, so that the budget also bounds compiling (a round may hold a hundred candidates).
      std::vector<Candidate> part(
          std::make_move_iterator(cands.begin() + long(at)),
          std::make_move_iterator(cands.begin() + long(std::min(at + kChunk, cands.size()))));
      std::vector<Entry> chunk = entries_of(std::move(part), o, r, namer);
      compile(dev, target, chunk, r);
      const double best = best_of(all);
      for (Entry& e : chunk)
        time_entry(dev, e, scratch, o, best, r, host_clock);  // compiled: worth its timing
      searched = true;
      for (Entry& e : chunk) round.push_back(std::move(e));
    }
    std::sort(round.begin(), round.end(), [](const Entry& a, const Entry& b) { return a.us < b.us; });
    const double round_best = round.empty() ? INFINITY : round.front().us;
    beam.clear();
    for (size_t i = 0; i < round.size() && int(i) < o.width && std::isfinite(round[i].us); ++i)
      beam.push_back(round[i].opts);
    for (Entry& e : round)
      if (std::isfinite(e.us)) all.push_back(std::move(e));
    std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.us < b.us; });
    for (size_t i = kChecked; i < all.size(); ++i) all[i].program.reset();  // only these are checked
    if (!(round_best < beam_best) || beam.empty()) break;  // no progress: the beam has converged
    beam_best = round_best;
  }

  // The fastest entry that agrees with the reference evaluator; the heuristic if none does.
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.us < b.us; });
  r.opts = heuristic.opts;
  r.best_us = r.heuristic_us;
  for (size_t i = 0; i < all.size() && i < kChecked && std::isfinite(all[i].us) && all[i].program; ++i) {
    std::string why = check(dev, ast, all[i], scratch);
    if (why.empty()) {
      r.opts = all[i].opts;
      r.best_us = all[i].us;
      break;
    }
    r.rejected.push_back(label(all[i]) + ": " + why);
  }
  return r;
}

}  // namespace

BeamOptions beam_options_from_env() {
  BeamOptions o;
  o.width = int(env_number("SLUICE_BEAM", 0, 0, 64));
  o.budget_s = env_number("SLUICE_BEAM_BUDGET", o.budget_s, 1e-3, 1e6);
  return o;
}

std::string beam_cache_path(const UOp& ast, hcq::Device& dev, int width) {
  const fs::path dir = dev.compiler().cache_dir();
  if (dir.empty()) return "";
  const std::string key = "beam 1\n" + dev.properties().device_name + "\n" + dev.compiler().name() + "\n" +
                          dev.compiler().binary_target() + "\nwidth " + std::to_string(width) + "\n" +
                          ast.str();
  return (dir / "beam" / hcq::sha256_hex(key)).string();
}

BeamResult beam_search(const UOp& ast, hcq::Device& dev, const render::Target& target, const BeamOptions& o) {
  SLUICE_CHECK_IN(ValueError, "beam_search", ast.op() == Op::Sink && o.width > 0)
      << "needs a compute kernel's AST (got " << op_name(ast.op()) << ") and a width > 0 (got " << o.width
      << ")";
  const std::string path = o.use_cache ? beam_cache_path(ast, dev, o.width) : "";
  BeamResult cached;
  if (!path.empty())
    if (std::optional<std::vector<Opt>> opts = read_cache(path, cached)) {
      try {  // actions this codegen no longer accepts (an older sluice wrote them): search again
        codegen::make_kernel(ast, target.caps, *opts);
        cached.opts = *opts;
        cached.from_cache = true;
        return cached;
      } catch (const Error& e) {
        log_message(LogLevel::Warn, "[beam] ignoring the cache entry " + path + ": " + e.what());
      }
    }
  const Kernel heuristic = codegen::make_kernel(ast, target.caps);
  if (heuristic.global_count() == 0) {  // nothing to launch, nothing to time
    BeamResult r;
    r.opts = heuristic.opts;
    return r;
  }
  const auto t0 = Clock::now();
  BeamResult r = search(ast, heuristic, dev, target, o);
  const std::string name = codegen::make_kernel(ast, target.caps, r.opts).name;
  for (const std::string& s : r.skipped) log_message(LogLevel::Info, "[beam] " + name + ": skipped " + s);
  for (const std::string& s : r.rejected)
    log_message(LogLevel::Warn,
                "[beam] " + name + ": refused " + s + " (it disagrees with the reference evaluator)");
  std::ostringstream os;
  os << "[beam] " << name << ": " << codegen::opts_str(r.opts) << ", " << r.best_us << " us (heuristic "
     << r.heuristic_us << " us), " << r.timed << " timed in " << seconds_since(t0) << " s";
  log_message(LogLevel::Info, os.str());
  if (!path.empty() && r.timed > 2) write_cache(path, r, name);  // not a search that never got past round 0
  return r;
}

}  // namespace sluice
