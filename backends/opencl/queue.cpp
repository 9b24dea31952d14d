#include "backends/opencl/queue.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "backends/opencl/program.h"

namespace sluice::opencl {
namespace {

namespace pk = hcq::packet;
constexpr int kCompute = 0, kCopy = 1;
const char* const kQueueNames[2] = {"compute:0", "copy:0"};
// The waiter thread re-checks a blocked queue's signal at least this often (a signal written by another
// device or the host wakes only the first one it sleeps on).
constexpr auto kWaiterSlice = std::chrono::microseconds(200);

// Fixed-size blocks, recycled. A submission's objects are allocated by the submitting thread and freed
// by a driver thread, and malloc returns such memory to the freeing thread's cache: every submission then
// took malloc's slow path (a quarter of the submitting thread's time). Process-wide and never destroyed:
// a callback may free its objects after the device is gone.
template <size_t Size>
class BlockPool {
 public:
  static BlockPool& get() {
    static auto* pool = new BlockPool;
    return *pool;
  }
  void* take() {
    {
      std::lock_guard lk(mu_);
      if (!free_.empty()) {
        void* p = free_.back();
        free_.pop_back();
        return p;
      }
    }
    return ::operator new(Size);
  }
  void give(void* p) {
    {
      std::lock_guard lk(mu_);
      if (free_.size() < kKeep) return free_.push_back(p);
    }
    ::operator delete(p);
  }

 private:
  static constexpr size_t kKeep = 4096;
  std::mutex mu_;
  std::vector<void*> free_;
};

// For std::allocate_shared: the object and its control block in one pooled block.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}
  T* allocate(size_t n) {
    return n == 1 ? static_cast<T*>(BlockPool<sizeof(T)>::get().take()) : std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    if (n == 1)
      BlockPool<sizeof(T)>::get().give(p);
    else
      std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
};

// Whether a submission failed, and from which of its waits on: shared by the callbacks of its commands
// and by the waits of later submissions that wait for its signals (which hold this, not the submission,
// so chains of waits keep nothing else alive).
struct Fate {
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string error;
  size_t at = 0;  // the failure holds for commands after this many waits of the submission

  void fail(const std::string& e, size_t n) {
    std::lock_guard lk(mu);
    if (failed.load()) return;
    error = e;
    at = n;
    failed.store(true, std::memory_order_release);
  }
  // The error for a command after the first n waits; empty if it stands.
  std::string as_of(size_t n) {
    if (!failed.load(std::memory_order_acquire)) return {};
    std::lock_guard lk(mu);
    return at <= n ? error : std::string();
  }
};

// A submission: its fate and its waits, in record order.
struct Sub {
  struct Wait {
    hcq::SignalRef signal;
    std::shared_ptr<Fate> producer;  // the same device's enqueued submission that writes it; null: none
    size_t producer_waits;           // how many of the producer's waits precede that write
  };
  uint64_t submit_ns = 0;
  std::shared_ptr<Fate> fate = std::allocate_shared<Fate>(PoolAllocator<Fate>());
  std::vector<Wait> waits;  // reserved at submit: callbacks read the first n while the queue appends

  // A failure found while the queue records (after the waits recorded so far).
  void fail(const std::string& e) { fate->fail(e, waits.size()); }
  // The error of a command after the first n waits; empty if none failed. A producer fails after the
  // wait was recorded only when one of its commands ends with an error status.
  std::string error_after(size_t n) {
    if (std::string e = fate->as_of(n); !e.empty()) return e;
    for (size_t i = 0; i < n; ++i) {
      const Wait& w = waits[i];
      if (!w.producer) continue;
      if (w.signal.failed()) return w.signal.error();
      if (std::string e = w.producer->as_of(w.producer_waits); !e.empty()) return e;
    }
    return {};
  }
};

class Engine;

// What the callbacks of a device's commands reach through: leaked by a destructor that gives up waiting
// for a command that never ends, so a late callback finds `orphaned` instead of a destroyed engine.
struct Hub {
  std::mutex mu;  // held while a callback runs; the destructor takes it to orphan the engine
  Engine* engine;
  bool orphaned = false;
  std::atomic<int64_t> outstanding{0};  // callbacks set and not yet run
};

const std::string kCopyName = "copy", kBarrierName = "barrier", kMarkerName = "marker";

// What happens when one enqueued command completes.
struct Completion {
  enum Kind { Signal, Timestamp, Retire };
  struct Action {
    Kind kind;
    hcq::SignalRef signal;  // not a Signal*: the Signal may be gone before the callback runs (signal.h)
    uint64_t value;
  };
  Hub* hub = nullptr;
  int queue = kCompute;
  std::shared_ptr<Sub> sub;
  size_t waits = 0;                   // how many of sub->waits precede the command
  const std::string* name = nullptr;  // the kernel's (programs outlive their commands), or a k*Name above
  uint64_t bytes = 0;                 // copies
  bool profile = false;               // record start/end
  uint64_t submission = 0;            // profile records: the timeline value, the packet's word offset
  uint32_t at = 0;
  uint32_t nactions = 0;  // actions[0..n) used; a command rarely takes more than signal + retire
  Action actions[2] = {};
  std::vector<Action> more;  // the rest
  void add(Action a) {
    if (nactions < 2)
      actions[nactions++] = a;
    else
      more.push_back(a);
  }
  bool empty() const { return nactions == 0; }
  static void* operator new(size_t) { return BlockPool<sizeof(Completion)>::get().take(); }
  static void operator delete(void* p) { BlockPool<sizeof(Completion)>::get().give(p); }
  template <class F>
  void each(F f) const {
    for (uint32_t i = 0; i < nactions; ++i) f(actions[i]);
    for (const Action& a : more) f(a);
  }
};

class Engine final : public Queues {
 public:
  explicit Engine(QueuesConfig cfg) : cfg_(std::move(cfg)), hub_(new Hub) {
    hub_->engine = this;
    for (int k : {kCompute, kCopy}) hw_[k].q = create_queue(CL_QUEUE_PROFILING_ENABLE);
    host_q_ = create_queue(0);
    calibrate();
    waiter_ = std::thread([this] { waiter_main(); });
  }

  ~Engine() override {
    {
      std::lock_guard lk(wait_mu_);
      stop_.store(true);
    }
    wait_cv_.notify_all();
    waiter_.join();  // resumes every blocked queue, failing the waits it holds
    for (Hw& h : hw_) api().clFlush(h.q);
    // Every submission ends with a tracked command, so no callback outstanding means the queues are idle.
    // (clFinish would block for good behind a kernel that never returns, and callbacks may still run after
    // it returns.) Past the hang timeout the engine is abandoned: late callbacks touch nothing.
    const auto deadline = hcq::Clock::now() + cfg_.dev->hang_timeout();
    while (hub_->outstanding.load() > 0 && hcq::Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    {
      std::lock_guard lk(hub_->mu);
      hub_->orphaned = true;
    }
    if (hub_->outstanding.load() == 0) delete hub_;  // else leaked for the callbacks still to come
    for (Hw& h : hw_) api().clReleaseCommandQueue(h.q);
    api().clReleaseCommandQueue(host_q_);
  }

  cl_command_queue host_queue() const override { return host_q_; }

  uint64_t submit(const hcq::HwQueue& hq, const std::function<uint64_t()>& next_value) override {
    const int k = hq.kind() == hcq::QueueKind::Compute ? kCompute : kCopy;
    Hw& h = hw_[k];
    std::lock_guard lk(h.mu);
    const uint64_t v = next_value();
    const auto words = hq.packets();
    Batch b = batch(k, v, words);
    // Behind a blocked wait every later submission of the queue waits its turn in the backlog.
    if (!h.backlog.empty()) {
      h.backlog.push_back({std::move(b), {words.begin(), words.end()}, 0});
      return v;
    }
    size_t at = 0;
    try {
      if (run(b, words, at)) {
        finish(b);
      } else {
        const Blocked on = b.blocked;
        b.base = at;
        h.backlog.push_back({std::move(b), {words.begin() + at, words.end()}, 0});
        block(k, on);
      }
    } catch (...) {
      // Whatever was enqueued still retires, so the timeline keeps moving.
      b.sub->fail("[submit] " + cfg_.dev->name() + ": the submission failed while it was enqueued");
      finish(b);
      throw;
    }
    return v;
  }

  std::string explain_stall() const override {
    std::ostringstream os;
    for (int k : {kCompute, kCopy}) {
      if (k) os << "; ";
      const int64_t n = in_flight_[k].load();
      os << kQueueNames[k] << " has " << n << " tracked commands unfinished";
      // Programs outlive the commands that run them, so the last one is alive while work is in flight.
      if (const hcq::Program* p = last_kernel_.load(); k == kCompute && n > 0 && p)
        os << " (last kernel enqueued: '" << p->name() << "')";
    }
    {
      std::lock_guard lk(wait_mu_);
      for (int k : {kCompute, kCopy})
        if (const Blocked& w = blocked_[k]; w.signal)
          os << "; " << kQueueNames[k] << " holds its later submissions until signal '" << w.signal.name()
             << "' reaches " << w.value << " (value " << w.signal.value() << ")";
    }
    os << "; OpenCL cannot stop a running kernel, so nothing was reset";
    return os.str();
  }

 private:
  struct Blocked {
    hcq::SignalRef signal;
    uint64_t value = 0;
  };

  // The submission being enqueued.
  struct Batch {
    int k = kCompute;
    uint64_t value = 0;  // its timeline value
    std::shared_ptr<Sub> sub;
    hcq::SubmissionSignals signals;  // the packets' signals, referenced at submit: read them only here
    Completion* open = nullptr;      // the last enqueued command's completion, still taking actions
    cl_event open_ev = nullptr;
    bool skip = false;       // a wait failed: enqueue no more work, fail the signals
    bool profile = false;    // profile records wanted: every command gets its event
    bool need_event = true;  // the command being recorded needs its event (see run)
    size_t base = 0;         // where the words run() reads start in the submission (a backlog's: its wait)
    uint32_t at = 0;         // the packet being recorded: its word offset in the submission
    Blocked blocked;         // the wait run() stopped at
  };

  // A submission held behind a wait that only the host can see through (a signal of the host or of
  // another device): the rest of it is enqueued, or skipped if the wait fails, once the wait resolves.
  struct Deferred {
    Batch b;
    std::vector<uint64_t> words;  // its packets from the wait on (copied: the HwQueue may be patched)
    size_t at;
  };

  struct Hw {
    cl_command_queue q = nullptr;
    std::mutex mu;                 // enqueue order; backlog
    std::deque<Deferred> backlog;  // non-empty while the queue is blocked: the front one holds the wait
  };

  cl_command_queue create_queue(cl_command_queue_properties props) {
    cl_int err = CL_SUCCESS;
    cl_command_queue q = api().clCreateCommandQueue(cfg_.ctx->ctx, cfg_.ctx->device, props, &err);
    if (!q) fail("open_device", "clCreateCommandQueue", err);
    return q;
  }

  // Device profiling time -> host clock: an offset measured once, around a marker.
  void calibrate() {
    cl_event ev = nullptr;
    const uint64_t h0 = hcq::now_ns();
    SLUICE_CL(clEnqueueMarkerWithWaitList(hw_[kCompute].q, 0, nullptr, &ev), "open_device");
    const cl_int err = api().clWaitForEvents(1, &ev);
    const uint64_t h1 = hcq::now_ns();
    cl_ulong end = 0;
    if (err == CL_SUCCESS)
      api().clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    api().clReleaseEvent(ev);
    if (err != CL_SUCCESS) fail("open_device", "clWaitForEvents", err);
    offset_ns_ = int64_t(h0 / 2 + h1 / 2) - int64_t(end);
  }

  uint64_t host_time(cl_event ev, cl_profiling_info what, const Sub& sub) {
    cl_ulong t = 0;
    uint64_t now = hcq::now_ns();
    if (api().clGetEventProfilingInfo(ev, what, sizeof t, &t, nullptr) != CL_SUCCESS) return now;
    // The calibration is approximate: keep the time inside what the host saw (submit .. now).
    return std::clamp<uint64_t>(uint64_t(int64_t(t) + offset_ns_), sub.submit_ns, now);
  }

  Batch batch(int k, uint64_t v, std::span<const uint64_t> words) {
    Batch b;
    b.k = k;
    b.value = v;
    b.sub = std::allocate_shared<Sub>(PoolAllocator<Sub>());
    b.signals = hcq::SubmissionSignals(words);
    b.profile = cfg_.dev->profiling();
    b.sub->submit_ns = hcq::now_ns();
    size_t nwaits = 0;
    for (pk::Ref r : pk::each(words)) nwaits += r.op == pk::Wait;
    b.sub->waits.reserve(nwaits);
    return b;
  }

  // Records words[at..] into b's queue. Returns false, with `at` on the wait, if it stopped at a wait the
  // device cannot make itself (b.blocked says which); everything before it is enqueued and sealed.
  bool run(Batch& b, std::span<const uint64_t> words, size_t& at) {
    while (at < words.size()) {
      const uint64_t* p = &words[at];
      const size_t here = at;
      b.at = uint32_t(b.base + here);
      at += pk::words(p[0]);  // first: a packet that throws is not retried
      // A command needs its event only where a signal or timestamp, or the end, follows: graph replays of
      // many kernels then enqueue without events or callbacks in between.
      size_t next = at;
      while (next < words.size() && pk::op(words[next]) == pk::Barrier) next += pk::words(words[next]);
      const uint8_t op = next < words.size() ? pk::op(words[next]) : 0;
      b.need_event = b.profile || op == 0 || op == pk::Signal || op == pk::Timestamp;
      if (pk::op(p[0]) == pk::Wait) {
        if (!b.skip && !wait(b, b.signals.at(b.at), p[2])) {
          at = here;
          seal(b);
          return false;
        }
        continue;
      }
      record(b, p);
    }
    return true;
  }

  // Seals the open completion: its callback may run from now on.
  void seal(Batch& b) {
    if (!b.open) return;
    Completion* c = std::exchange(b.open, nullptr);
    cl_event ev = std::exchange(b.open_ev, nullptr);
    if (c->empty() && !c->profile) {
      api().clReleaseEvent(ev);
      delete c;
      return;
    }
    {
      // The signals it writes are pending until its callback ran: later waits find its event.
      std::lock_guard lk(pending_mu_);
      c->each([&](const Completion::Action& a) {
        if (a.kind != Completion::Signal) return;
        pending_.push_back({a.signal.id(), a.value, ev, b.k, b.sub->fate, c->waits});
      });
    }
    ++hub_->outstanding;
    ++in_flight_[b.k];
    // The callback owns the event's reference from here on.
    cl_int err = api().clSetEventCallback(ev, CL_COMPLETE, &Engine::on_complete, c);
    if (err != CL_SUCCESS) {
      --hub_->outstanding;
      --in_flight_[b.k];
      {
        std::lock_guard lk(pending_mu_);
        std::erase_if(pending_, [&](const Pending& p) { return p.ev == ev; });
      }
      // Its signals would never be written otherwise.
      c->each([&](const Completion::Action& a) {
        if (a.kind == Completion::Signal)
          a.signal.fail("[submit] clSetEventCallback failed: " + error_name(err));
      });
      api().clReleaseEvent(ev);
      delete c;
      fail("submit", "clSetEventCallback", err);
    }
  }

  Completion* open(Batch& b, const std::string* name, uint64_t bytes = 0) {
    auto* c = new Completion;
    c->hub = hub_;
    c->queue = b.k;
    c->sub = b.sub;
    c->waits = b.sub->waits.size();
    c->name = name;
    c->bytes = bytes;
    c->profile = b.profile;
    c->submission = b.value;
    c->at = b.at;
    return c;
  }

  // Makes ev (the enqueue just made) the open completion.
  void enqueued(Batch& b, Completion* c, cl_event ev) {
    seal(b);
    b.open = c;
    b.open_ev = ev;
  }

  void marker(Batch& b, cl_uint n = 0, const cl_event* list = nullptr, bool barrier = false) {
    cl_event ev = nullptr;
    if (barrier)
      SLUICE_CL(clEnqueueBarrierWithWaitList(hw_[b.k].q, n, list, &ev), "submit");
    else
      SLUICE_CL(clEnqueueMarkerWithWaitList(hw_[b.k].q, n, list, &ev), "submit");
    enqueued(b, open(b, barrier ? &kBarrierName : &kMarkerName), ev);
  }

  Completion& current(Batch& b) {
    if (!b.open) marker(b);
    return *b.open;
  }

  void record(Batch& b, const uint64_t* p) {
    switch (pk::op(p[0])) {
      case pk::Signal: current(b).add({Completion::Signal, b.signals.at(b.at), p[2]}); break;
      case pk::Timestamp: current(b).add({Completion::Timestamp, b.signals.at(b.at), 0}); break;
      case pk::Exec:
        if (!b.skip) exec(b, pk::ExecView(p));
        break;
      case pk::Copy:
        if (!b.skip) copy(b, p[1], p[2], p[3]);
        break;
      // Nothing to enqueue: an in-order queue finishes each command, its writes visible, before the next
      // starts. (A clEnqueueBarrierWithWaitList here doubled the commands of a graph replay, which puts
      // one between every two items, for no ordering gained.)
      case pk::Barrier: break;
      default: SLUICE_FAIL(hcq::Error, "submit") << "unknown packet opcode " << int(pk::op(p[0]));
    }
  }

  // A wait of b's queue for s >= v. Returns false if only the host can see it through: a signal of the
  // host or of another device that has not reached v. Every other wait is recorded in b.sub->waits (its
  // position is what Fate::at counts).
  bool wait(Batch& b, const hcq::SignalRef& s, uint64_t v) {
    Sub::Wait w{s, nullptr, 0};
    auto fail_here = [&](const std::string& e) {
      b.sub->waits.push_back(std::move(w));
      b.sub->fail(e);
      b.skip = true;
      return true;
    };
    auto passed = [&] {
      b.sub->waits.push_back(std::move(w));
      return true;
    };
    if (s.failed()) return fail_here(s.error());
    if (s.value() >= v) return passed();
    if (b.open) {  // written earlier in this submission, by the command just before: in order already
      bool mine = false;
      b.open->each([&](const Completion::Action& a) {
        mine = mine || (a.kind == Completion::Signal && a.signal.id() == s.id() && a.value >= v);
      });
      if (mine) return passed();
    }
    cl_event dep = nullptr;
    {
      std::lock_guard lk(pending_mu_);
      for (const Pending& p : pending_)
        if (p.signal == s.id() && p.value >= v) {
          w.producer = p.fate;
          w.producer_waits = p.waits;
          if (p.queue != b.k) dep = p.ev;  // same queue: in order already
          if (dep) api().clRetainEvent(dep);
          break;
        }
    }
    if (w.producer) {
      struct Release {
        cl_event e;
        ~Release() {
          if (e) api().clReleaseEvent(e);
        }
      } release{dep};
      // Enqueued already: its signal is written unless a wait before the write failed.
      if (std::string e = w.producer->as_of(w.producer_waits); !e.empty()) return fail_here(e);
      if (dep) marker(b, 1, &dep, true);
      return passed();
    }
    // Its callback may have run since the first look.
    if (s.failed()) return fail_here(s.error());
    if (s.value() >= v) return passed();
    if (stop_.load())
      return fail_here("[~Device] " + cfg_.dev->name() + " was destroyed while " + kQueueNames[b.k] +
                       " waited for signal '" + s.name() + "' to reach " + std::to_string(v));
    b.blocked = {s, v};
    return false;
  }

  void exec(Batch& b, const pk::ExecView& e) {
    const auto& p = static_cast<const Program&>(*e.program);
    for (uint32_t i = 0; i < e.nbufs; ++i) {
      auto [m, off] = cfg_.mem->resolve(e.bufs[i], "exec");
      cl_ulong o = off;
      p.set_arg(2 * i, uint64_t(uintptr_t(m)), sizeof m, &m);
      p.set_arg(2 * i + 1, o, sizeof o, &o);
    }
    for (uint32_t i = 0; i < e.nvars; ++i) {
      cl_int x = e.var(i);
      p.set_arg(2 * e.nbufs + i, uint32_t(x), sizeof x, &x);
    }
    const size_t local[3] = {e.local.x, e.local.y, e.local.z};
    const size_t global[3] = {size_t(e.global.x) * local[0], size_t(e.global.y) * local[1],
                              size_t(e.global.z) * local[2]};
    cl_event ev = nullptr;
    // The fewest dimensions that hold the launch: drivers pick a cheaper path for 1-D ranges.
    const cl_uint dims = global[2] > 1 ? 3 : global[1] > 1 ? 2 : 1;
    cl_int err = api().clEnqueueNDRangeKernel(hw_[b.k].q, p.kernel(), dims, nullptr, global, local, 0,
                                              nullptr, b.need_event ? &ev : nullptr);
    if (err != CL_SUCCESS)
      SLUICE_FAIL(hcq::Error, "exec") << cfg_.dev->name() << ": kernel '" << p.name()
                                      << "': clEnqueueNDRangeKernel failed: " << error_name(err)
                                      << " (global " << e.global << " groups of " << e.local << ")";
    last_kernel_.store(&p, std::memory_order_relaxed);
    if (!b.need_event) return seal(b);
    enqueued(b, open(b, &p.name()), ev);
  }

  void copy(Batch& b, uint64_t dst, uint64_t src, uint64_t size) {
    auto [dm, doff] = cfg_.mem->resolve(dst, "copy");
    auto [sm, soff] = cfg_.mem->resolve(src, "copy");
    cl_event ev = nullptr;
    SLUICE_CL(
        clEnqueueCopyBuffer(hw_[b.k].q, sm, dm, soff, doff, size, 0, nullptr, b.need_event ? &ev : nullptr),
        "copy");
    if (!b.need_event) return seal(b);
    enqueued(b, open(b, &kCopyName, size), ev);
  }

  // Ends the submission: the retire of its value on its last command.
  void finish(Batch& b) {
    current(b).add({Completion::Retire, {}, b.value});
    seal(b);
    api().clFlush(hw_[b.k].q);
  }

  // --- completion: runs on a driver thread, so it calls no blocking OpenCL function ---
  static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void* data) {
    std::unique_ptr<Completion> c(static_cast<Completion*>(data));
    Hub* hub = c->hub;
    {
      std::lock_guard lk(hub->mu);
      if (!hub->orphaned) {
        hub->engine->complete(ev, status, *c);
        --hub->engine->in_flight_[c->queue];
      }
    }
    api().clReleaseEvent(ev);
    c.reset();  // drops the submission while the engine may still be alive to see it
    --hub->outstanding;
  }

  void complete(cl_event ev, cl_int status, Completion& c) {
    if (status < 0)
      c.sub->fate->fail("[exec] " + cfg_.dev->name() + ": " +
                            (c.name == &kCopyName || c.name == &kMarkerName || c.name == &kBarrierName
                                 ? *c.name
                                 : "kernel '" + *c.name + "'") +
                            " failed on " + kQueueNames[c.queue] + ": " + error_name(status),
                        c.waits);
    const std::string err = c.sub->error_after(c.waits);
    // A producer's failure becomes this submission's own, for the waits of later ones on its signals.
    if (!err.empty()) c.sub->fate->fail(err, c.waits);
    uint64_t end = 0;
    if (!c.empty() || c.profile) {
      end = std::max(host_time(ev, CL_PROFILING_COMMAND_END, *c.sub), last_ts_[c.queue].load());
      last_ts_[c.queue].store(end);
    }
    if (c.profile && status >= 0) {
      uint64_t start = std::min(host_time(ev, CL_PROFILING_COMMAND_START, *c.sub), end);
      cfg_.profile({cfg_.dev->name(), kQueueNames[c.queue], *c.name, start, end, c.bytes, c.submission, c.at,
                    c.name == &kCopyName ? hcq::Transfer::DeviceToDevice : hcq::Transfer::None});
    }
    c.each([&](const Completion::Action& a) {
      switch (a.kind) {
        case Completion::Signal:
          if (err.empty())
            a.signal.device_write(a.value, end);
          else
            a.signal.fail(err);
          drop_pending(a.signal.id(), a.value);
          break;
        case Completion::Timestamp:
          if (err.empty()) a.signal.device_timestamp(end);
          break;
        case Completion::Retire: retire(a.value, end); break;
      }
    });
  }

  void drop_pending(const void* s, uint64_t v) {
    std::lock_guard lk(pending_mu_);
    for (size_t i = 0; i < pending_.size();)
      if (pending_[i].signal == s && pending_[i].value <= v) {
        pending_[i] = std::move(pending_.back());
        pending_.pop_back();
      } else {
        ++i;
      }
  }

  // Timeline values complete out of order across the two queues: hcq keeps the timeline in order.
  void retire(uint64_t v, uint64_t ts) { cfg_.dev->retire(v, ts); }

  // --- the waiter thread: resumes a queue once the signal its backlog waits for is reached or failed ---
  void block(int k, Blocked on) {
    {
      std::lock_guard lk(wait_mu_);
      blocked_[k] = on;
    }
    wait_cv_.notify_one();
  }

  void waiter_main() {
    std::unique_lock lk(wait_mu_);
    for (;;) {
      int ready = -1, first = -1;
      for (int k : {kCompute, kCopy}) {
        const Blocked& w = blocked_[k];
        if (!w.signal) continue;
        if (stop_.load() || w.signal.failed() || w.signal.value() >= w.value) {
          ready = k;
          break;
        }
        if (first < 0) first = k;
      }
      if (ready >= 0) {
        blocked_[ready] = {};
        lk.unlock();
        resume(ready);  // takes the queue's lock: never under wait_mu_ (submit takes them the other way)
        lk.lock();
        continue;
      }
      if (stop_.load()) return;
      if (first < 0) {
        wait_cv_.wait(lk,
                      [&] { return stop_.load() || blocked_[kCompute].signal || blocked_[kCopy].signal; });
        continue;
      }
      const Blocked w = blocked_[first];
      lk.unlock();
      w.signal.wait_until(w.value, hcq::Clock::now() + kWaiterSlice);
      lk.lock();
    }
  }

  // Enqueues queue k's backlog until it is empty or blocks again. No exception leaves: a submission that
  // fails while it is enqueued here fails its signals instead.
  void resume(int k) {
    Hw& h = hw_[k];
    std::lock_guard lk(h.mu);
    while (!h.backlog.empty()) {
      Deferred& d = h.backlog.front();
      bool done = false;
      while (!done) {
        try {
          if (!run(d.b, d.words, d.at)) return block(k, d.b.blocked);
          finish(d.b);
          done = true;
        } catch (const std::exception& e) {
          d.b.sub->fail(e.what());
          d.b.skip = true;
          if (d.at >= d.words.size()) {
            // Even its retire could not be enqueued (the device is lost): retire it here so the timeline
            // keeps moving.
            retire(d.b.value, hcq::now_ns());
            done = true;
          }
        }
      }
      h.backlog.pop_front();
    }
  }

  struct Pending {
    const void* signal;  // SignalRef::id(): the Completion holding the write keeps it from being reused
    uint64_t value;
    cl_event ev;  // alive while listed: its callback releases it only after it unlisted it
    int queue;
    std::shared_ptr<Fate> fate;  // of the submission that writes it
    size_t waits;                // of that submission's waits, how many precede the write
  };

  QueuesConfig cfg_;
  Hub* hub_;
  Hw hw_[2];
  cl_command_queue host_q_ = nullptr;
  int64_t offset_ns_ = 0;
  std::atomic<int64_t> in_flight_[2] = {0, 0};
  std::atomic<uint64_t> last_ts_[2] = {0, 0};

  std::mutex pending_mu_;
  std::vector<Pending> pending_;  // signal writes enqueued and not yet done: few, scanned linearly

  mutable std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  Blocked blocked_[2];  // per queue: the wait its backlog's front holds
  std::atomic<bool> stop_{false};
  std::thread waiter_;

  std::atomic<const hcq::Program*> last_kernel_{nullptr};
};

}  // namespace

std::unique_ptr<Queues> make_queues(QueuesConfig cfg) { return std::make_unique<Engine>(std::move(cfg)); }

}  // namespace sluice::opencl
