#include "backends/cuda/queue.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "backends/cuda/allocator.h"
#include "backends/cuda/graph.h"
#include "backends/cuda/program.h"
#include "hcq/error.h"
#include "hcq/queue_status.h"

namespace sluice::cuda {
namespace {

namespace pk = hcq::packet;
using hcq::ms;
using hcq::Signal;
using hcq::SignalRef;

constexpr int kCompute = 0, kCopy = 1;
const char* const kQueueNames[2] = {"compute:0", "copy:0"};
// The completion thread spins this long after its last progress (a kernel round trip is microseconds),
// then sleeps for growing intervals up to kMaxSleep (submit wakes it at once).
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

// One submission, from submit to retirement.
struct Submission {
  uint64_t value = 0;  // its timeline value; 0 for the part before a held wait (advance_held)
  uint64_t whole = 0;  // for profile records: the timeline value of the submission it is (a part of),
  size_t base = 0;     // and the word offset of words[0] in that submission's words
  uint64_t submitted_ns = 0;
  std::vector<uint64_t> words;  // its packets, until enqueued
  // The packets' signals, referenced at submit and shared by its parts: the Signals may be gone before
  // the submission is enqueued or retired (hcq/signal.h), so its packets' addresses are never read.
  std::shared_ptr<const hcq::SubmissionSignals> signals;
  // A signal write, or a timestamp (stamp: the value is unused), with the event after it. They apply in
  // record order, so a timestamp recorded after a write of the same signal is the time it keeps.
  struct Write {
    SignalRef s;
    uint64_t v;
    CUevent ev;
    bool stamp = false;
  };
  struct Timed {
    std::string name;
    uint64_t bytes;
    CUevent start, end;
    uint32_t at;  // the packet's word offset in the submission
  };
  std::vector<Write> writes;
  std::vector<Timed> timed;
  std::vector<SignalRef> word_waits;  // signals whose device word a stream wait of this submission reads
  CUevent end = nullptr;              // recorded after its last command; null: nothing to wait for
  bool end_shared = false;            // end is the event of its last signal or timestamp
  std::string kernel;                 // its first kernel, for stall and fault messages
  uint64_t graph = 0;                 // the hcq::Graph it replays (its id), 0: none
  std::string error;                  // non-empty: skipped or failed; its signals fail with this

  // The signal of the packet at p (one of words).
  const SignalRef& signal(const uint64_t* p) const { return signals->at(base + size_t(p - words.data())); }
};
using SubmissionPtr = std::unique_ptr<Submission>;

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

struct Queue {
  CUstream stream = nullptr;
  std::deque<SubmissionPtr> held;      // waiting on the host for a wait to be met, oldest first
  std::deque<SubmissionPtr> inflight;  // on the stream, oldest first
  uint64_t front_since = 0;            // host time the oldest in-flight submission became the oldest
};

class Device final : public hcq::Device {
 public:
  Device(DeviceSpec spec, CUcontext ctx)
      : hcq::Device(spec.name, 1, 1),
        drv_(*spec.drv),
        cudev_(spec.device),
        ctx_(ctx),
        props_(std::move(spec.props)),
        words_(std::make_unique<WordPool>(drv_, spec.name)),
        graphs_(std::make_unique<GraphCache>(drv_, spec.name)) {
    make_current(drv_, ctx_);
    int memops = 0;
    if (drv_.has_stream_mem_ops() &&
        drv_.device_get_attribute(&memops, kCanUse64BitStreamMemOps, cudev_) != kSuccess)
      memops = 0;
    memops_ = memops != 0;
    for (Queue& q : queues_)
      SLUICE_DRV("open_device", name(), drv_, stream_create, &q.stream, kStreamNonBlocking);
    // The calibration event: its host time is taken right after the host saw it complete.
    base_ev_ = event();
    SLUICE_DRV("open_device", name(), drv_, event_record, base_ev_, queues_[kCompute].stream);
    SLUICE_DRV("open_device", name(), drv_, event_synchronize, base_ev_);
    base_host_ = hcq::now_ns();
    allocator_ = make_allocator(*this, drv_, ctx_);
    compiler_ = spec.make_compiler();
    thread_ = std::thread([this] { run(); });
  }

  ~Device() override {
    {
      std::lock_guard lk(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    try {
      synchronize();
    } catch (const hcq::Error&) {  // a fault or a hang: nothing left to wait for
    }
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    make_current(drv_, ctx_);
    allocator_.reset();  // before the context goes
    for (Queue& q : queues_) drv_.stream_destroy(q.stream);
    for (CUevent e : pool_) drv_.event_destroy(e);
    drv_.event_destroy(base_ev_);
    graphs_.reset();  // driver objects go while their context is alive
    words_.reset();
    drv_.primary_ctx_release(cudev_);
  }

  bool memops() const { return memops_; }
  std::string graph_status() {
    std::lock_guard lk(mu_);
    if (!drv_.has_graphs()) return drv_.api + " driver without graph entry points";
    return graphs_->disabled();
  }

  std::unique_ptr<hcq::Program> load_program(const std::string& name, const hcq::Binary& binary,
                                             hcq::KernelLayout layout) override {
    return cuda::load_program(*this, drv_, ctx_, name, binary, layout);
  }

  hcq::Properties properties() const override { return props_; }

  std::string explain_stall(const Signal&, uint64_t) override {
    std::lock_guard lk(mu_);
    const uint64_t hang = uint64_t(hang_timeout().count());
    return hcq::explain_queues(
        2, [&](size_t k) { return status(int(k)); }, [&](size_t k) { return std::string(kQueueNames[k]); },
        hang,
        [&](size_t k, const hcq::QueueStatus& st, uint64_t now) {
          reset_queue(int(k), hcq::hung_message(name(), kQueueNames[k], st, now, hang));
          return true;
        });
  }

 protected:
  uint64_t do_submit(const hcq::HwQueue& hq) override { return submit_as(hq, 0); }
  uint64_t do_submit_graph(const hcq::HwQueue& hq, uint64_t graph) override { return submit_as(hq, graph); }

 public:
  void forget_graph(uint64_t graph) override {
    std::lock_guard lk(mu_);
    try {
      make_current(drv_, ctx_);  // the graph may be destroyed on any thread
      graphs_->forget(graph);
    } catch (const hcq::Error&) {  // no context here: the driver's objects stay until the device goes
    }
  }

 private:
  uint64_t submit_as(const hcq::HwQueue& hq, uint64_t graph) {
    int k = hq.kind() == hcq::QueueKind::Compute ? kCompute : kCopy;
    auto s = std::make_unique<Submission>();
    s->graph = graph;
    s->submitted_ns = hcq::now_ns();
    s->words.assign(hq.packets().begin(), hq.packets().end());
    s->signals = std::make_shared<const hcq::SubmissionSignals>(hq.packets());
    std::unique_lock lk(mu_);
    const uint64_t v = s->value = s->whole = next_timeline_value();
    Queue& q = queues_[k];
    if (!fault_.empty()) {
      s->error = fault_;
      push_inflight(q, std::move(s));
    } else {
      q.held.push_back(std::move(s));
      advance_held(k);
    }
    lk.unlock();
    cv_.notify_one();
    return v;
  }

  CUevent event() {
    if (pool_.empty()) {
      CUevent e = nullptr;
      SLUICE_DRV("submit", name(), drv_, event_create, &e, kEventDefault);
      return e;
    }
    CUevent e = pool_.back();
    pool_.pop_back();
    return e;
  }
  CUevent record(CUstream stream) {
    CUevent e = event();
    if (CUresult r = drv_.event_record(e, stream); r != kSuccess) {
      pool_.push_back(e);
      SLUICE_FAIL(hcq::Error, "submit") << name() << ": " << drv_.error("event_record", r);
    }
    return e;
  }

  // Where s has to stop for now: the word offset of its first wait that failed or that no stream can
  // await yet (not met, and no pending write on this device's streams or earlier in s reaches it); npos
  // when a stream can run all of it.
  static constexpr size_t npos = size_t(-1);
  size_t blocking_wait(const Submission& s) const {
    std::unordered_map<const void*, uint64_t> own;  // s's own writes so far, by SignalRef::id()
    for (pk::Ref r : pk::each(s.words)) {
      const uint64_t* p = r.p;
      if (r.op == pk::Signal) {
        uint64_t& mine = own[s.signal(p).id()];
        mine = std::max(mine, p[2]);
      } else if (r.op == pk::Wait) {
        const SignalRef& sig = s.signal(p);
        auto pr = producers_.find(sig.id());
        auto o = own.find(sig.id());
        bool runnable =
            !sig.failed() && (sig.value() >= p[2] || (pr != producers_.end() && pr->second.max >= p[2]) ||
                              (o != own.end() && o->second >= p[2]));
        if (!runnable) return r.at;
      }
    }
    return npos;
  }
  // Under mu_: what queue k is doing, for explain_stall. The stream's work is timed from when it became
  // the oldest; a held submission waits for its first wait that no stream can meet yet.
  hcq::QueueStatus status(int k) const {
    const Queue& q = queues_[k];
    hcq::QueueStatus st;
    if (!q.inflight.empty()) {
      const Submission& s = *q.inflight.front();
      st.phase = hcq::QueueStatus::Running;
      st.kernels = s.kernel.empty() ? "" : "'" + s.kernel + "'";
      st.since_ns = q.front_since;
      st.value = s.value;
    } else if (!q.held.empty()) {
      const Submission& s = *q.held.front();
      st.phase = hcq::QueueStatus::Waiting;
      if (const size_t at = blocking_wait(s); at != npos) {
        st.signal = s.signal(&s.words[at]);
        st.value = s.words[at + 2];
      }
    }
    return st;
  }
  static std::string describe_wait(const Submission& s, size_t at) {
    const uint64_t* p = &s.words[at];
    return "signal '" + s.signal(p).name() + "' to reach " + std::to_string(p[2]);
  }

  // Puts queue k's held submissions on its stream as far as their waits allow, oldest first. The
  // commands before a wait that has to be held go now, as a part with no timeline value of its own:
  // only the commands after a wait are held back (or skipped, when it fails).
  bool advance_held(int k) {
    Queue& q = queues_[k];
    bool progress = false;
    while (!q.held.empty()) {
      Submission& s = *q.held.front();
      size_t cut = blocking_wait(s);
      if (cut != npos && cut > 0) {
        auto part = std::make_unique<Submission>();
        part->submitted_ns = s.submitted_ns;
        part->whole = s.whole, part->base = s.base, part->signals = s.signals;
        part->words.assign(s.words.begin(), s.words.begin() + ptrdiff_t(cut));
        s.words.erase(s.words.begin(), s.words.begin() + ptrdiff_t(cut));
        s.base += cut;
        enqueue(k, std::move(part));
        progress = true;
        cut = 0;
      }
      if (cut != npos && !s.signal(&s.words[cut]).failed()) break;
      SubmissionPtr whole = std::move(q.held.front());
      q.held.pop_front();
      enqueue(k, std::move(whole));  // a failed wait: skipped there, its signals fail
      progress = true;
    }
    return progress;
  }

  // While the device is destroyed nobody is left to set a host signal: once no stream holds work that
  // could still advance one, the oldest held wait never completes, and its submission fails instead of
  // holding the destructor (the work queued behind it still runs).
  bool give_up_held_wait() {
    for (Queue& q : queues_)
      if (!q.inflight.empty()) return false;
    for (int k : {kCompute, kCopy}) {
      Queue& q = queues_[k];
      if (q.held.empty()) continue;
      Submission& s = *q.held.front();
      abandon(s, "[~Device] " + name() + " was destroyed while " + kQueueNames[k] + " waited for " +
                     describe_wait(s, blocking_wait(s)));
      if (s.value) hcq::Device::retire(s.value, hcq::now_ns());
      q.held.pop_front();
      return true;
    }
    return false;
  }

  void push_inflight(Queue& q, SubmissionPtr s) {
    if (q.inflight.empty()) q.front_since = hcq::now_ns();
    if (s->error.empty()) {  // a failed submission keeps its packets: retire fails the signals they name
      s->words.clear();
      s->words.shrink_to_fit();
    }
    q.inflight.push_back(std::move(s));
  }

  // Puts a ready submission on its stream (or skips it when a wait failed).
  void enqueue(int k, SubmissionPtr s) {
    Queue& q = queues_[k];
    for (pk::Ref r : pk::each(s->words)) {
      if (r.op != pk::Wait || !s->error.empty()) continue;
      const SignalRef& sig = s->signal(r.p);
      if (sig.failed()) s->error = sig.error();
    }
    if (s->error.empty()) {
      try {
        make_current(drv_, ctx_);
        encode(q, *s);
      } catch (const hcq::Error& e) {
        s->error = e.what();  // the part already on the stream runs; the submission's signals fail
      }
    }
    push_inflight(q, std::move(s));
  }

  void encode(Queue& q, Submission& s) {
    // A graph's replay runs as its driver graph; one that cannot be built or updated falls back to the
    // launches below (graph.h).
    if (s.graph && !profiling() && drv_.has_graphs() && graphs_->launch(s.graph, s.words, q.stream)) {
      for (pk::Ref r : pk::each(s.words))
        if (r.op == pk::Exec && s.kernel.empty()) s.kernel = pk::ExecView(r.p).program->name();
      s.end = record(q.stream);
      return;
    }
    std::vector<int32_t> vars;
    KernelParams args;
    CUevent last = nullptr;  // the event recorded by the last command, if that command recorded one
    for (pk::Ref r : pk::each(s.words)) {
      const uint64_t* p = r.p;
      if (r.op != pk::Barrier) last = nullptr;
      switch (r.op) {
        case pk::Wait: {
          const SignalRef& sig = s.signal(p);
          if (sig.value() >= p[2]) break;
          Producer& pr = producers_.at(sig.id());  // blocking_wait() saw it
          // The driver's scheduler does not see an order made by a memory operation alone and may put the
          // waiting stream ahead of the write on one hardware queue, a deadlock (cuStreamWaitValue64's
          // documentation): the event wait is that order made visible.
          SLUICE_DRV("submit", name(), drv_, stream_wait_event, q.stream, pr.event, 0);
          if (pr.has_word) {
            SLUICE_DRV("submit", name(), drv_, stream_wait_value64, q.stream, pr.word.dev, p[2],
                       kWaitValueGeq);
            ++pr.waits;
            s.word_waits.push_back(sig);
          }
          break;
        }
        case pk::Signal: {
          const SignalRef& sig = s.signal(p);
          Producer& pr = producers_[sig.id()];
          pr.signal = sig;
          if (memops_ && !pr.has_word) {
            pr.word = words_->get();
            pr.has_word = true;
          }
          // A smaller value than one already written would only move the word back.
          if (pr.has_word && p[2] > pr.max)
            SLUICE_DRV("submit", name(), drv_, stream_write_value64, q.stream, pr.word.dev, p[2],
                       kWriteValueDefault);
          // The event follows the word's write: once it completed, the word may be reused.
          CUevent ev = record(q.stream);
          ++pr.writes;
          s.writes.push_back({sig, p[2], ev});
          if (p[2] >= pr.max) pr.max = p[2], pr.event = ev;
          last = ev;
          break;
        }
        case pk::Timestamp:
          s.writes.push_back({s.signal(p), 0, record(q.stream), true});
          last = s.writes.back().ev;
          break;
        case pk::Exec: {
          pk::ExecView e(p);
          vars.resize(e.nvars);
          for (uint32_t i = 0; i < e.nvars; ++i) vars[i] = e.var(i);
          args.pack(e.bufs, e.nbufs, vars.data(), e.nvars);
          if (s.kernel.empty()) s.kernel = e.program->name();
          CUevent start = profiling() ? record(q.stream) : nullptr;
          SLUICE_DRV("exec", name(), drv_, launch_kernel, function(*e.program), e.global.x, e.global.y,
                     e.global.z, e.local.x, e.local.y, e.local.z, 0, q.stream, args.params(), nullptr);
          if (start) s.timed.push_back({e.program->name(), 0, start, record(q.stream), at(s, p)});
          break;
        }
        case pk::Copy: {
          CUevent start = profiling() ? record(q.stream) : nullptr;
          SLUICE_DRV("copy", name(), drv_, memcpy_async, p[1], p[2], p[3], q.stream);
          if (start) s.timed.push_back({"copy", p[3], start, record(q.stream), at(s, p)});
          break;
        }
        default: break;  // Barrier: a stream already runs its commands in order
      }
    }
    // A submission that ends in a signal (the usual exec + signal) needs no event of its own.
    s.end_shared = last != nullptr;
    s.end = last ? last : record(q.stream);
  }

  static uint32_t at(const Submission& s, const uint64_t* packet) {
    return uint32_t(s.base + size_t(packet - s.words.data()));
  }

  // Host-clock time of a completed event of submission s.
  uint64_t host_ns(CUevent ev, const Submission& s) const {
    const uint64_t now = hcq::now_ns();
    float t = 0;
    uint64_t at = now;
    if (drv_.event_elapsed_time(&t, base_ev_, ev) == kSuccess)
      at = uint64_t(std::max<int64_t>(0, int64_t(base_host_) + int64_t(double(t) * 1e6)));
    return std::clamp(at, std::min(s.submitted_ns, now), now);
  }

  void release_producer(const SignalRef& sig, bool write) {
    auto it = producers_.find(sig.id());
    if (it == producers_.end()) return;
    Producer& pr = it->second;
    --(write ? pr.writes : pr.waits);
    if (pr.writes > 0 || pr.waits > 0) return;
    if (pr.has_word && !pr.leaked) words_->put(pr.word);
    producers_.erase(it);
  }

  void retire(int k, Submission& s) {
    if (!s.error.empty()) {
      for (pk::Ref r : pk::each(s.words))
        if (r.op == pk::Signal) s.signal(r.p).fail(s.error);
    } else {
      for (auto& w : s.writes) {
        if (w.stamp)
          w.s.device_timestamp(host_ns(w.ev, s));
        else
          w.s.device_write(w.v, host_ns(w.ev, s));
      }
      for (auto& t : s.timed)
        add_profile({name(), kQueueNames[k], t.name, host_ns(t.start, s), host_ns(t.end, s), t.bytes, s.whole,
                     t.at, t.name == "copy" ? hcq::Transfer::DeviceToDevice : hcq::Transfer::None});
    }
    // Now and then the calibration moves to this submission's end, so event times stay small floats.
    CUevent keep = nullptr;
    if (s.end && s.error.empty() && hcq::now_ns() - base_host_ > kRebaseNs) {
      uint64_t t = host_ns(s.end, s);
      pool_.push_back(base_ev_);
      base_ev_ = keep = s.end, base_host_ = t;
    }
    auto recycle = [&](CUevent e) {
      if (e != keep) pool_.push_back(e);
    };
    for (auto& w : s.writes) {
      if (!w.stamp) release_producer(w.s, true);
      recycle(w.ev);
    }
    for (const SignalRef& sig : s.word_waits) release_producer(sig, false);
    for (auto& t : s.timed) recycle(t.start), recycle(t.end);
    if (s.end && !s.end_shared) recycle(s.end);
    if (s.value)
      hcq::Device::retire(s.value, hcq::now_ns());  // 0: the part of a submission before a held wait
  }

  // Fails a submission that will never retire normally (hang, fault). Its events may still complete on
  // the GPU: they are destroyed, never reused, and its device words are never reused either.
  void abandon(Submission& s, const std::string& msg) {
    for (auto& w : s.writes) {
      drv_.event_destroy(w.ev);
      if (w.stamp) continue;
      w.s.fail(msg);
      if (auto it = producers_.find(w.s.id()); it != producers_.end()) it->second.leaked = true;
      release_producer(w.s, true);
    }
    for (const SignalRef& sig : s.word_waits) {
      if (auto it = producers_.find(sig.id()); it != producers_.end()) it->second.leaked = true;
      release_producer(sig, false);
    }
    for (auto& t : s.timed) drv_.event_destroy(t.start), drv_.event_destroy(t.end);
    if (s.end && !s.end_shared) drv_.event_destroy(s.end);
    for (pk::Ref r : pk::each(s.words))  // a held submission's signals
      if (r.op == pk::Signal) s.signal(r.p).fail(msg);
  }

  // Under mu_: drops queue k's work, failing it with msg, and gives the queue a fresh stream.
  void reset_queue(int k, const std::string& msg) {
    // This runs on whichever host thread's wait timed out: it needs the context too.
    try {
      make_current(drv_, ctx_);
    } catch (const hcq::Error&) {  // the calls below fail and are ignored: the old stream stays
    }
    Queue& q = queues_[k];
    for (auto& s : q.inflight) abandon(*s, msg);
    for (auto& s : q.held) abandon(*s, msg);
    q.inflight.clear();
    q.held.clear();
    // The old stream still holds the running kernel. It is left alone, not destroyed: some drivers
    // block in stream destruction until the stream's work is done, which may be never.
    CUstream fresh = nullptr;
    if (drv_.stream_create(&fresh, kStreamNonBlocking) == kSuccess) q.stream = fresh;
    replace_timeline(msg);  // the dropped work's values retire with it
  }

  void on_fault(int k, const Submission& s, CUresult r) {
    std::ostringstream m;
    m << "[exec] " << name() << ": kernel fault in submission " << s.value;
    if (!s.kernel.empty()) m << " (kernel '" << s.kernel << "' on " << kQueueNames[k] << ")";
    m << ": " << drv_.error("event_query", r);
    fault_ = m.str();
    for (Queue& q : queues_) {
      for (auto& x : q.inflight) abandon(*x, fault_);
      for (auto& x : q.held) abandon(*x, fault_);
      q.inflight.clear();
      q.held.clear();
    }
    replace_timeline(fault_);
  }

  // One pass over the queues, under mu_: starts held submissions whose waits are met, retires finished
  // ones. Returns whether anything happened.
  bool step() {
    bool progress = false;
    for (int k : {kCompute, kCopy}) {
      Queue& q = queues_[k];
      progress |= advance_held(k);
      while (!q.inflight.empty()) {
        Submission& s = *q.inflight.front();
        if (s.end) {
          CUresult r = drv_.event_query(s.end);
          if (r == kNotReady) break;
          if (r != kSuccess) {
            on_fault(k, s, r);
            return true;
          }
        }
        retire_front(k);
        progress = true;
      }
    }
    if (closing_) progress |= give_up_held_wait();
    return progress;
  }
  void retire_front(int k) {
    Queue& q = queues_[k];
    retire(k, *q.inflight.front());
    q.inflight.pop_front();
    q.front_since = hcq::now_ns();
  }

  void run() {
    std::unique_lock lk(mu_);
    try {
      make_current(drv_, ctx_);
    } catch (const hcq::Error& e) { fault_ = e.what(); }
    auto last = hcq::Clock::now();
    auto sleep = std::chrono::microseconds(10);
    while (!stop_) {
      if (step()) {
        last = hcq::Clock::now();
        sleep = std::chrono::microseconds(10);
        continue;
      }
      bool busy = false;
      for (Queue& q : queues_) busy |= !q.inflight.empty() || !q.held.empty();
      if (!busy) {
        cv_.wait_for(lk, std::chrono::milliseconds(100));
        last = hcq::Clock::now();
      } else if (hcq::Clock::now() - last < kSpin) {
        lk.unlock();
        std::this_thread::yield();
        lk.lock();
      } else {
        cv_.wait_for(lk, sleep);
        sleep = std::min(sleep * 2, kMaxSleep);
      }
    }
  }

  const Driver& drv_;
  CUdevice cudev_;
  CUcontext ctx_;
  hcq::Properties props_;
  bool memops_ = false;

  std::mutex mu_;  // everything below
  std::condition_variable cv_;
  bool stop_ = false;
  bool closing_ = false;  // the destructor runs: held waits nobody can reach any more fail
  Queue queues_[2];
  std::vector<CUevent> pool_;
  std::unordered_map<const void*, Producer> producers_;  // by SignalRef::id()
  std::unique_ptr<WordPool> words_;
  std::unique_ptr<GraphCache> graphs_;
  CUevent base_ev_ = nullptr;
  uint64_t base_host_ = 0;
  std::string fault_;  // non-empty once a kernel faulted
  std::thread thread_;
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
