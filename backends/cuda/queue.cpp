#include "backends/cuda/queue.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "backends/cuda/allocator.h"
#include "backends/cuda/graph.h"
#include "backends/cuda/program.h"
#include "hcq/command_processor.h"
#include "hcq/error.h"
#include "hcq/processor_device.h"

namespace sluice::cuda {
namespace {

namespace pk = hcq::packet;
using hcq::SignalRef;

constexpr int kCompute = hcq::ProcessorDevice::kCompute;
// A wait for a stream's event spins this long (a kernel round trip is microseconds), then sleeps for
// growing intervals up to kMaxSleep.
constexpr auto kSpin = std::chrono::microseconds(200);
constexpr auto kMaxSleep = std::chrono::microseconds(1000);
// Event times are float milliseconds from the calibration event: moving the calibration forward every
// second keeps them at sub-microsecond resolution.
constexpr uint64_t kRebaseNs = 1'000'000'000;

// 8-byte words of pinned, device-mapped host memory: what a stream writes and awaits for a signal.
class WordPool {
 public:
  struct Word {
    uint64_t* host = nullptr;
    CUdeviceptr dev = 0;
  };
  WordPool(const Driver& drv, std::string who) : drv_(drv), who_(std::move(who)) {}
  ~WordPool() {
    for (void* c : chunks_) drv_.mem_free_host(c);
  }
  Word get() {
    if (free_.empty()) grow();
    Word w = free_.back();
    free_.pop_back();
    *reinterpret_cast<volatile uint64_t*>(w.host) = 0;
    return w;
  }
  void put(Word w) { free_.push_back(w); }

 private:
  void grow() {
    const size_t chunk = std::max<size_t>(8, drv_.word_alloc_bytes / 8 * 8);
    void* p = nullptr;
    SLUICE_DRV("submit", who_, drv_, mem_host_alloc, &p, chunk, kHostAllocPortable | kHostAllocMapped);
    CUdeviceptr d = 0;
    if (CUresult r = drv_.mem_host_get_device_pointer(&d, p, 0); r != kSuccess) {
      drv_.mem_free_host(p);
      SLUICE_FAIL(hcq::Error, "submit") << who_ << ": " << drv_.error("mem_host_get_device_pointer", r);
    }
    chunks_.push_back(p);
    for (size_t i = 0; i < chunk / 8; ++i) free_.push_back({static_cast<uint64_t*>(p) + i, d + 8 * i});
  }
  const Driver& drv_;
  std::string who_;
  std::vector<void*> chunks_;
  std::vector<Word> free_;
};

// A signal that this device's streams write: the largest value written, the event after that write,
// its device word, and how many in-flight writes and stream waits use the entry.
struct Producer {
  SignalRef signal;  // keeps its id (the key) from naming another signal while the entry lives
  uint64_t max = 0;
  CUevent event = nullptr;
  WordPool::Word word;
  bool has_word = false, leaked = false;
  int writes = 0, waits = 0;
};

// What the two streams of a device share, under `mu`: the event pool, the signals they write (so a wait
// on one stays on the GPU), the device words, the driver graphs and the calibration of event times.
struct Shared {
  Shared(const Driver& d, CUcontext c, std::string n) : drv(d), ctx(c), name(std::move(n)) {}
  const Driver& drv;
  CUcontext ctx;
  std::string name;
  bool memops = false;

  std::mutex mu;
  std::vector<CUevent> pool;
  std::unordered_map<const void*, Producer> producers;  // by SignalRef::id()
  std::unique_ptr<WordPool> words;
  std::unique_ptr<GraphCache> graphs;
  CUevent base_ev = nullptr;  // the calibration event, and the host time right after it completed
  uint64_t base_host = 0;

  // Under mu.
  CUevent event() {
    if (pool.empty()) {
      CUevent e = nullptr;
      SLUICE_DRV("submit", name, drv, event_create, &e, kEventDefault);
      return e;
    }
    CUevent e = pool.back();
    pool.pop_back();
    return e;
  }
  CUevent record(CUstream stream) {
    CUevent e = event();
    if (CUresult r = drv.event_record(e, stream); r != kSuccess) {
      pool.push_back(e);
      SLUICE_FAIL(hcq::Error, "submit") << name << ": " << drv.error("event_record", r);
    }
    return e;
  }
  // Host-clock time of a completed event; 0 when the driver cannot say.
  uint64_t host_ns(CUevent ev) const {
    float t = 0;
    if (drv.event_elapsed_time(&t, base_ev, ev) != kSuccess) return 0;
    return uint64_t(std::max<int64_t>(1, int64_t(base_host) + int64_t(double(t) * 1e6)));
  }
  // The producer of a write of at least v to `sig`, or null.
  Producer* producer(const SignalRef& sig, uint64_t v) {
    auto it = producers.find(sig.id());
    return it == producers.end() || it->second.max < v ? nullptr : &it->second;
  }
  void release_producer(const SignalRef& sig, bool write) {
    auto it = producers.find(sig.id());
    if (it == producers.end()) return;
    Producer& pr = it->second;
    --(write ? pr.writes : pr.waits);
    if (pr.writes > 0 || pr.waits > 0) return;
    if (pr.has_word && !pr.leaked) words->put(pr.word);
    producers.erase(it);
  }
};

// One hardware queue: a stream, as the encoder and completion primitive of hcq's command processor.
class StreamQueue final : public hcq::CommandProcessor {
  using Marks = hcq::CommandProcessor::Marks;

 public:
  StreamQueue(Shared& sh, Config cfg, bool compute)
      : hcq::CommandProcessor(std::move(cfg)), sh_(sh), compute_(compute) {
    make_current(sh_.drv, sh_.ctx);
    SLUICE_DRV("open_device", sh_.name, sh_.drv, stream_create, &stream_, kStreamNonBlocking);
    start();
  }

  ~StreamQueue() override {
    const bool clean = shutdown();
    std::lock_guard lk(sh_.mu);
    for (Segment& s : segs_) {  // abandoned work: never reused, its device words neither
      leak(s);
      for (CUevent e : s.events) sh_.drv.event_destroy(e);
    }
    // A stream whose work did not finish is left alone, not destroyed: some drivers block in stream
    // destruction until the stream's work is done, which may be never.
    if (clean) sh_.drv.stream_destroy(stream_);
  }

  CUstream stream() const { return stream_; }

 private:
  // What a segment holds until it was applied.
  struct Segment {
    uint64_t token = 0;
    uint64_t submission = 0;            // the timeline value of its first submission (fault messages)
    std::string kernel;                 // its first kernel
    std::vector<CUevent> events;        // every event it recorded (marks included), back to the pool
    std::vector<uint32_t> marks;        // its marks, erased from marks_ when it is recycled
    std::vector<SignalRef> writes;      // signals it writes (producers)
    std::vector<SignalRef> word_waits;  // signals whose device word a stream wait of it reads
    CUevent end = nullptr;
  };

  // --- The encoder (the recording thread) ---

  void encode_exec(const pk::ExecView& e, Marks* timing) override {
    make_current(sh_.drv, sh_.ctx);
    vars_.resize(e.nvars);
    for (uint32_t i = 0; i < e.nvars; ++i) vars_[i] = e.var(i);
    args_.pack(e.bufs, e.nbufs, vars_.data(), e.nvars);
    opened();
    if (cur_.kernel.empty()) cur_.kernel = e.program->name();
    if (timing) timing->start = mark();
    SLUICE_DRV("exec", sh_.name, sh_.drv, launch_kernel, function(*e.program), e.global.x, e.global.y,
               e.global.z, e.local.x, e.local.y, e.local.z, 0, stream_, args_.params(), nullptr);
    if (timing) timing->end = mark();
    last_ = nullptr;
  }

  void encode_copy(uint64_t dst, uint64_t src, uint64_t size, Marks* timing) override {
    make_current(sh_.drv, sh_.ctx);
    opened();
    if (timing) timing->start = mark();
    SLUICE_DRV("copy", sh_.name, sh_.drv, memcpy_async, dst, src, size, stream_);
    if (timing) timing->end = mark();
    last_ = nullptr;
  }

  void encode_barrier() override {}  // a stream runs its commands one after another

  uint32_t encode_mark() override {
    make_current(sh_.drv, sh_.ctx);
    opened();
    return mark();
  }

  // A write other streams of the device may await: with memory operations, the value goes into the
  // signal's device word; the event after it orders the waits the driver's scheduler sees.
  uint32_t encode_signal(const SignalRef& s, uint64_t v) override {
    make_current(sh_.drv, sh_.ctx);
    opened();
    {
      std::lock_guard lk(sh_.mu);
      Producer& pr = sh_.producers[s.id()];
      pr.signal = s;
      if (sh_.memops && !pr.has_word) {
        pr.word = sh_.words->get();
        pr.has_word = true;
      }
      // A smaller value than one already written would only move the word back.
      if (pr.has_word && v > pr.max)
        SLUICE_DRV("submit", sh_.name, sh_.drv, stream_write_value64, stream_, pr.word.dev, v,
                   kWriteValueDefault);
      ++pr.writes;
      cur_.writes.push_back(s);
    }
    const uint32_t m = mark();
    {
      std::lock_guard lk(sh_.mu);
      Producer& pr = sh_.producers[s.id()];
      if (v >= pr.max) pr.max = v, pr.event = last_;
    }
    written(s);  // its producer is listed first: the other stream may encode a wait for it from now on
    return m;
  }

  // A wait on a signal one of this device's streams has a pending write of at least v for: the event
  // wait is the order the driver's scheduler sees (one made by memory operations alone may deadlock, as
  // cuStreamWaitValue64's documentation warns), and with memory operations the stream also awaits the
  // word itself. Anything else (a host set(), another device) is held on the host.
  bool encode_wait(const SignalRef& s, uint64_t v) override {
    make_current(sh_.drv, sh_.ctx);
    std::lock_guard lk(sh_.mu);
    Producer* found = sh_.producer(s, v);
    if (!found) return false;
    Producer& pr = *found;
    opened();
    SLUICE_DRV("submit", sh_.name, sh_.drv, stream_wait_event, stream_, pr.event, 0);
    if (pr.has_word) {
      SLUICE_DRV("submit", sh_.name, sh_.drv, stream_wait_value64, stream_, pr.word.dev, v, kWaitValueGeq);
      ++pr.waits;
      cur_.word_waits.push_back(s);
    }
    last_ = nullptr;
    return true;
  }

  // Its producer is released when the writing segment is recycled, after the write was applied.
  bool can_encode_wait(const SignalRef& s, uint64_t v) override {
    std::lock_guard lk(sh_.mu);
    return sh_.producer(s, v);
  }

  bool encode_graph(uint64_t graph, std::span<const uint64_t> words,
                    std::vector<const hcq::Program*>& programs) override {
    if (!compute_ || !sh_.drv.has_graphs()) return false;
    make_current(sh_.drv, sh_.ctx);
    {
      std::lock_guard lk(sh_.mu);
      if (!sh_.graphs->launch(graph, words, stream_)) return false;
    }
    opened();
    for (pk::Ref r : pk::each(words))
      if (r.op == pk::Exec) programs.push_back(pk::ExecView(r.p).program);
    if (!programs.empty() && cur_.kernel.empty()) cur_.kernel = programs.front()->name();
    last_ = nullptr;
    return true;
  }
  void drop_graph(uint64_t) override {}  // the device drops driver graphs itself (forget_graph)

  uint64_t submit_segment() override {
    Segment s = std::move(cur_);
    cur_ = Segment{};
    s.token = ++tokens_;
    // A segment that ends in a signal or timestamp (the usual exec + signal) needs no event of its own.
    CUevent end = last_;
    last_ = nullptr;
    std::lock_guard lk(sh_.mu);
    segs_.push_back(std::move(s));  // first in line for recycle_segment, whether or not the record works
    if (!end) {
      make_current(sh_.drv, sh_.ctx);
      end = sh_.record(stream_);
      segs_.back().events.push_back(end);
    }
    segs_.back().end = end;
    return segs_.back().token;
  }

  // What was put on the stream runs; nothing is taken back. The segment completes as usual.
  void discard_segment() override { last_ = nullptr; }

  // --- Completion ---

  bool wait_segment(uint64_t token, std::chrono::nanoseconds slice, std::string& error) override {
    CUevent end = nullptr;
    uint64_t submission = 0;
    std::string kernel;
    {
      std::lock_guard lk(sh_.mu);
      for (const Segment& s : segs_)
        if (s.token == token) {
          end = s.end, submission = s.submission, kernel = s.kernel;
          break;
        }
    }
    if (!end) return true;  // recycled: it finished
    try {
      make_current(sh_.drv, sh_.ctx);
    } catch (const hcq::Error& e) {
      error = e.what();
      return false;
    }
    const auto start = hcq::Clock::now(), until = start + slice;
    auto sleep = std::chrono::microseconds(10);
    for (;;) {
      const CUresult r = sh_.drv.event_query(end);
      if (r == kSuccess) return true;
      if (r != kNotReady) {
        // A kernel fault is sticky in a driver context: every later query fails too.
        error = "[exec] " + sh_.name + ": kernel fault in submission " + std::to_string(submission) +
                (kernel.empty() ? "" : " (kernel '" + kernel + "' on " + config().queue_name + ")") + ": " +
                sh_.drv.error("event_query", r);
        return false;
      }
      const auto now = hcq::Clock::now();
      if (now >= until) return false;
      if (now - start < kSpin) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::min<hcq::Clock::duration>(sleep, until - now));
        sleep = std::min(sleep * 2, std::chrono::duration_cast<std::chrono::microseconds>(kMaxSleep));
      }
    }
  }

  // A kernel fault is sticky in the driver's context: every later submission fails with it.
  bool fatal(const std::string& e) const override {
    return e.find(": kernel fault in submission") != std::string::npos;
  }

  uint64_t finished_segment() override { return 0; }  // each segment's end event is asked on its own

  uint64_t mark_ns(uint32_t m) override {
    std::lock_guard lk(sh_.mu);
    const CUevent* e = marks_.find(m);
    return e ? sh_.host_ns(*e) : 0;
  }

  void recycle_segment(uint64_t) override {
    std::lock_guard lk(sh_.mu);
    Segment s = std::move(segs_.front());
    segs_.pop_front();
    marks_.drop(s.marks);
    for (const SignalRef& sig : s.writes) sh_.release_producer(sig, true);
    for (const SignalRef& sig : s.word_waits) sh_.release_producer(sig, false);
    // Now and then the calibration moves to this segment's end, so event times stay small floats.
    CUevent keep = nullptr;
    if (s.end && hcq::now_ns() - sh_.base_host > kRebaseNs && sh_.drv.event_query(s.end) == kSuccess) {
      if (const uint64_t t = sh_.host_ns(s.end)) {
        sh_.pool.push_back(sh_.base_ev);
        sh_.base_ev = keep = s.end, sh_.base_host = t;
      }
    }
    for (CUevent e : s.events)
      if (e != keep) sh_.pool.push_back(e);
  }

  // --- Helpers (the recording thread) ---

  void opened() {
    if (!cur_.submission) cur_.submission = submission();
  }
  // An event recorded on the stream at this point, as a mark of the open segment.
  uint32_t mark() {
    std::lock_guard lk(sh_.mu);
    CUevent e = sh_.record(stream_);
    cur_.events.push_back(e);
    last_ = e;
    return marks_.add(e, cur_.marks);
  }
  // Under sh_.mu: a segment that will never retire normally: its device words are never reused (the GPU
  // may still write or await them).
  void leak(const Segment& s) {
    for (const SignalRef& sig : s.writes) {
      if (auto it = sh_.producers.find(sig.id()); it != sh_.producers.end()) it->second.leaked = true;
      sh_.release_producer(sig, true);
    }
    for (const SignalRef& sig : s.word_waits) {
      if (auto it = sh_.producers.find(sig.id()); it != sh_.producers.end()) it->second.leaked = true;
      sh_.release_producer(sig, false);
    }
  }

  Shared& sh_;
  const bool compute_;
  CUstream stream_ = nullptr;
  // Recording state.
  Segment cur_;
  CUevent last_ = nullptr;  // the event the last command recorded, if it recorded one
  uint64_t tokens_ = 0;
  std::vector<int32_t> vars_;
  KernelParams args_;
  // Under sh_.mu.
  std::deque<Segment> segs_;  // handed to the processor, oldest first
  MarkTable<CUevent> marks_;
};

class Device final : public hcq::ProcessorDevice {
 public:
  Device(DeviceSpec spec, CUcontext ctx)
      : hcq::ProcessorDevice(spec.name),
        cudev_(spec.device),
        props_(std::move(spec.props)),
        sh_(*spec.drv, ctx, spec.name) {
    const Driver& drv = sh_.drv;
    make_current(drv, ctx);
    int memops = 0;
    if (drv.has_stream_mem_ops() &&
        drv.device_get_attribute(&memops, kCanUse64BitStreamMemOps, cudev_) != kSuccess)
      memops = 0;
    sh_.memops = memops != 0;
    sh_.words = std::make_unique<WordPool>(drv, spec.name);
    sh_.graphs = std::make_unique<GraphCache>(drv, spec.name);
    allocator_ = make_allocator(*this, drv, ctx);
    compiler_ = spec.make_compiler();
    start_queues();
    try {
      // The calibration event: its host time is taken right after the host saw it complete.
      std::lock_guard lk(sh_.mu);
      sh_.base_ev = sh_.event();
      SLUICE_DRV("open_device", name(), drv, event_record, sh_.base_ev,
                 static_cast<StreamQueue&>(queue(kCompute)).stream());
      SLUICE_DRV("open_device", name(), drv, event_synchronize, sh_.base_ev);
      sh_.base_host = hcq::now_ns();
    } catch (...) {
      stop_queues();  // they use sh_, which goes before the base class would destroy them
      release_queues();
      throw;
    }
  }

  ~Device() override {
    const Driver& drv = sh_.drv;
    stop_queues();
    try {
      make_current(drv, sh_.ctx);
    } catch (const hcq::Error&) {}
    release_queues();
    allocator_.reset();  // before the context goes
    for (CUevent e : sh_.pool) drv.event_destroy(e);
    drv.event_destroy(sh_.base_ev);
    sh_.graphs.reset();  // driver objects go while their context is alive
    sh_.words.reset();
    drv.primary_ctx_release(cudev_);
  }

  bool memops() const { return sh_.memops; }
  std::string graph_status() {
    std::lock_guard lk(sh_.mu);
    if (!sh_.drv.has_graphs()) return sh_.drv.api + " driver without graph entry points";
    return sh_.graphs->disabled();
  }

  std::unique_ptr<hcq::Program> load_program(const std::string& name, const hcq::Binary& binary,
                                             hcq::KernelLayout layout) override {
    return cuda::load_program(*this, sh_.drv, sh_.ctx, name, binary, layout);
  }

  hcq::Properties properties() const override { return props_; }

  void forget_graph(uint64_t graph) override {
    std::lock_guard lk(sh_.mu);
    try {
      make_current(sh_.drv, sh_.ctx);  // the graph may be destroyed on any thread
      sh_.graphs->forget(graph);
    } catch (const hcq::Error&) {  // no context here: the driver's objects stay until the device goes
    }
  }

 protected:
  std::unique_ptr<hcq::CommandProcessor> make_queue(int k, hcq::CommandProcessor::Config c) override {
    return std::make_unique<StreamQueue>(sh_, std::move(c), k == kCompute);
  }

 private:
  CUdevice cudev_;
  hcq::Properties props_;
  Shared sh_;
};

}  // namespace

std::unique_ptr<hcq::Device> open_stream_device(DeviceSpec spec) {
  const Driver& drv = *spec.drv;
  const CUdevice device = spec.device;
  CUcontext ctx = nullptr;
  SLUICE_DRV("open_device", spec.name, drv, primary_ctx_retain, &ctx, device);
  try {
    return std::make_unique<Device>(std::move(spec), ctx);
  } catch (...) {
    drv.primary_ctx_release(device);
    throw;
  }
}

bool uses_stream_mem_ops(const hcq::Device& dev) {
  auto* d = dynamic_cast<const Device*>(&dev);
  return d && d->memops();
}

std::string graphs_unavailable(hcq::Device& dev) {
  auto* d = dynamic_cast<Device*>(&dev);
  return d ? d->graph_status() : "not a CUDA or HIP device";
}

}  // namespace sluice::cuda
