#include "backends/opencl/queue.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "backends/opencl/program.h"

namespace sluice::opencl {
namespace {

namespace pk = hcq::packet;
constexpr int kCompute = 0, kCopy = 1;
const char* const kQueueNames[2] = {"compute:0", "copy:0"};
// The waiter thread re-checks its pending waits at least this often (a signal written by another device
// or the host wakes only the first one it sleeps on).
constexpr auto kWaiterSlice = std::chrono::microseconds(200);

// A submission's failure state, shared by the callbacks of its commands.
struct Sub {
  struct Wait {
    const hcq::Signal* signal;
    std::shared_ptr<Sub> producer;  // the same device's submission that writes it, if any
  };
  uint64_t submit_ns = 0;
  std::vector<Wait> waits;  // reserved at submit: callbacks read the first n while submit appends
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string error;

  void fail(const std::string& e) {
    std::lock_guard lk(mu);
    if (failed.load()) return;
    error = e;
    failed.store(true, std::memory_order_release);
  }
  std::string own_error() {
    if (!failed.load(std::memory_order_acquire)) return {};
    std::lock_guard lk(mu);
    return error;
  }
  // The error of this submission as of its first n waits; empty if none failed.
  std::string error_after(size_t n) {
    if (std::string e = own_error(); !e.empty()) return e;
    for (size_t i = 0; i < n; ++i) {
      if (waits[i].signal->failed()) return waits[i].signal->error();
      if (waits[i].producer)
        if (std::string e = waits[i].producer->own_error(); !e.empty()) return e;
    }
    return {};
  }
};

class Engine;

// What happens when one enqueued command completes.
struct Completion {
  enum Kind { Signal, Timestamp, Retire };
  struct Action {
    Kind kind;
    hcq::Signal* signal;
    uint64_t value;
  };
  Engine* engine;
  int queue;
  std::shared_ptr<Sub> sub;
  size_t waits = 0;      // how many of sub->waits precede the command
  std::string name;      // for profile records and errors: the kernel, "copy", "barrier", "marker"
  uint64_t bytes = 0;    // copies
  bool profile = false;  // record start/end
  std::vector<Action> actions;
};

class Engine final : public Queues {
 public:
  explicit Engine(QueuesConfig cfg) : cfg_(std::move(cfg)) {
    for (int k : {kCompute, kCopy}) q_[k] = create_queue(CL_QUEUE_PROFILING_ENABLE);
    host_q_ = create_queue(0);
    calibrate();
    waiter_ = std::thread([this] { waiter_main(); });
  }

  ~Engine() override {
    {
      std::lock_guard lk(wait_mu_);
      stop_ = true;
    }
    wait_cv_.notify_all();
    waiter_.join();  // completes every pending user event, failing its submission
    for (cl_command_queue q : q_) api().clFinish(q);
    // Callbacks may still be running after clFinish returns.
    for (int i = 0; i < 5000 && outstanding_.load() > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (auto& [s, list] : pending_)
      for (auto& p : list) api().clReleaseEvent(p.ev);
    for (cl_command_queue q : q_) api().clReleaseCommandQueue(q);
    api().clReleaseCommandQueue(host_q_);
  }

  cl_command_queue host_queue() const override { return host_q_; }

  uint64_t submit(const hcq::HwQueue& hq, const std::function<uint64_t()>& next_value) override {
    const int k = hq.kind() == hcq::QueueKind::Compute ? kCompute : kCopy;
    std::lock_guard lk(submit_mu_[k]);
    const uint64_t v = next_value();
    Batch b{k, std::make_shared<Sub>()};
    b.profile = cfg_.dev->profiling();
    b.sub->submit_ns = hcq::now_ns();
    auto words = hq.packets();
    size_t nwaits = 0;
    for (size_t i = 0; i < words.size(); i += pk::words(words[i])) nwaits += pk::op(words[i]) == pk::Wait;
    b.sub->waits.reserve(nwaits);
    try {
      for (size_t i = 0; i < words.size(); i += pk::words(words[i])) {
        // A command needs its event only where something follows that is not another command: graph
        // replays of many kernels then enqueue without events or callbacks in between.
        size_t next = i + pk::words(words[i]);
        while (next < words.size() && pk::op(words[next]) == pk::Barrier) next += pk::words(words[next]);
        const uint8_t op = next < words.size() ? pk::op(words[next]) : 0;
        b.need_event = b.profile || !(op == pk::Exec || op == pk::Copy);
        record(b, &words[i]);
      }
    } catch (...) {
      // Whatever was enqueued still retires, so the timeline keeps moving.
      b.sub->fail("[submit] " + cfg_.dev->name() + ": the submission failed while it was enqueued");
      finish(b, v);
      throw;
    }
    finish(b, v);
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
    std::lock_guard lk(wait_mu_);
    for (const Waiting& w : waiting_)
      os << "; " << kQueueNames[w.queue] << " waits for signal '" << w.signal->name() << "' to reach "
         << w.value << " (value " << w.signal->value() << ")";
    os << "; OpenCL cannot stop a running kernel, so nothing was reset";
    return os.str();
  }

 private:
  // The submission being enqueued.
  struct Batch {
    int k;
    std::shared_ptr<Sub> sub;
    Completion* open = nullptr;  // the last enqueued command's completion, still taking actions
    cl_event open_ev = nullptr;
    bool skip = false;       // a wait failed before submit: enqueue no more work
    bool profile = false;    // profile records wanted: every command gets its event
    bool need_event = true;  // the command being recorded needs its event (see submit)
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
    SLUICE_CL(clEnqueueMarkerWithWaitList(q_[kCompute], 0, nullptr, &ev), "open_device");
    SLUICE_CL(clWaitForEvents(1, &ev), "open_device");
    const uint64_t h1 = hcq::now_ns();
    cl_ulong end = 0;
    api().clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    api().clReleaseEvent(ev);
    offset_ns_ = int64_t(h0 / 2 + h1 / 2) - int64_t(end);
  }

  uint64_t host_time(cl_event ev, cl_profiling_info what, const Sub& sub) {
    cl_ulong t = 0;
    uint64_t now = hcq::now_ns();
    if (api().clGetEventProfilingInfo(ev, what, sizeof t, &t, nullptr) != CL_SUCCESS) return now;
    // The calibration is approximate: keep the time inside what the host saw (submit .. now).
    return std::clamp<uint64_t>(uint64_t(int64_t(t) + offset_ns_), sub.submit_ns, now);
  }

  // Seals the open completion: its callback may run from now on.
  void seal(Batch& b) {
    if (!b.open) return;
    Completion* c = std::exchange(b.open, nullptr);
    cl_event ev = std::exchange(b.open_ev, nullptr);
    if (c->actions.empty() && !c->profile) {
      api().clReleaseEvent(ev);
      delete c;
      return;
    }
    {
      // The signals it writes are pending until its callback ran: later waits find their event.
      std::lock_guard lk(pending_mu_);
      for (const auto& a : c->actions)
        if (a.kind == Completion::Signal) {
          api().clRetainEvent(ev);
          pending_[a.signal].push_back({a.value, ev, b.k, b.sub});
        }
    }
    ++outstanding_;
    ++in_flight_[b.k];
    cl_int err = api().clSetEventCallback(ev, CL_COMPLETE, &Engine::on_complete, c);
    if (err != CL_SUCCESS) {
      --outstanding_;
      --in_flight_[b.k];
      api().clReleaseEvent(ev);
      delete c;
      fail("submit", "clSetEventCallback", err);
    }
  }

  // Makes the next enqueue's event the open completion.
  Completion* open(Batch& b, std::string name, uint64_t bytes = 0) {
    return new Completion{this, b.k, b.sub, b.sub->waits.size(), std::move(name), bytes, false, {}};
  }

  void enqueued(Batch& b, Completion* c, cl_event ev) {
    seal(b);
    b.open = c;
    b.open_ev = ev;
  }

  void marker(Batch& b, cl_uint n = 0, const cl_event* list = nullptr, bool barrier = false) {
    cl_event ev = nullptr;
    if (barrier)
      SLUICE_CL(clEnqueueBarrierWithWaitList(q_[b.k], n, list, &ev), "submit");
    else
      SLUICE_CL(clEnqueueMarkerWithWaitList(q_[b.k], n, list, &ev), "submit");
    enqueued(b, open(b, barrier ? "barrier" : "marker"), ev);
  }

  Completion& current(Batch& b) {
    if (!b.open) marker(b);
    return *b.open;
  }

  void record(Batch& b, const uint64_t* p) {
    switch (pk::op(p[0])) {
      case pk::Wait: wait(b, *pk::ptr<const hcq::Signal>(p[1]), p[2]); break;
      case pk::Signal:
        current(b).actions.push_back({Completion::Signal, pk::ptr<hcq::Signal>(p[1]), p[2]});
        break;
      case pk::Timestamp:
        current(b).actions.push_back({Completion::Timestamp, pk::ptr<hcq::Signal>(p[1]), 0});
        break;
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

  void wait(Batch& b, const hcq::Signal& s, uint64_t v) {
    if (s.failed()) {
      b.sub->fail(s.error());
      b.skip = true;
      return;
    }
    if (s.value() >= v) return;
    if (b.open)  // written earlier in this submission, by the command just before: in order already
      for (const auto& a : b.open->actions)
        if (a.kind == Completion::Signal && a.signal == &s && a.value >= v) return;
    std::shared_ptr<Sub> producer;
    cl_event dep = nullptr;
    {
      std::lock_guard lk(pending_mu_);
      if (auto it = pending_.find(&s); it != pending_.end())
        for (const Pending& w : it->second)
          if (w.value >= v) {
            producer = w.sub;
            if (w.queue != b.k) dep = w.ev;  // same queue: in order already
            if (dep) api().clRetainEvent(dep);
            break;
          }
      b.sub->waits.push_back({&s, producer});
      if (producer && !dep) return;
    }
    if (dep) {
      marker(b, 1, &dep, true);
      api().clReleaseEvent(dep);
      return;
    }
    // Produced by the host or another device: a user event the waiter thread completes.
    cl_int err = CL_SUCCESS;
    cl_event user = api().clCreateUserEvent(cfg_.ctx->ctx, &err);
    if (!user) fail("submit", "clCreateUserEvent", err);
    try {
      marker(b, 1, &user, true);
    } catch (...) {
      api().clSetUserEventStatus(user, CL_COMPLETE);
      api().clReleaseEvent(user);
      throw;
    }
    {
      std::lock_guard lk(wait_mu_);
      waiting_.push_back({&s, v, user, b.sub, b.k});
    }
    wait_cv_.notify_one();
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
    cl_int err = api().clEnqueueNDRangeKernel(q_[b.k], p.kernel(), dims, nullptr, global, local, 0, nullptr,
                                              b.need_event ? &ev : nullptr);
    if (err != CL_SUCCESS)
      SLUICE_FAIL(hcq::Error, "exec") << cfg_.dev->name() << ": kernel '" << p.name()
                                      << "': clEnqueueNDRangeKernel failed: " << error_name(err)
                                      << " (global " << e.global << " groups of " << e.local << ")";
    last_kernel_.store(&p, std::memory_order_relaxed);
    if (!b.need_event) return seal(b);
    Completion* c = open(b, p.name());
    c->profile = b.profile;
    enqueued(b, c, ev);
  }

  void copy(Batch& b, uint64_t dst, uint64_t src, uint64_t size) {
    auto [dm, doff] = cfg_.mem->resolve(dst, "copy");
    auto [sm, soff] = cfg_.mem->resolve(src, "copy");
    cl_event ev = nullptr;
    SLUICE_CL(
        clEnqueueCopyBuffer(q_[b.k], sm, dm, soff, doff, size, 0, nullptr, b.need_event ? &ev : nullptr),
        "copy");
    if (!b.need_event) return seal(b);
    Completion* c = open(b, "copy", size);
    c->profile = b.profile;
    enqueued(b, c, ev);
  }

  // Ends the submission: the retire of v on its last command.
  void finish(Batch& b, uint64_t v) {
    current(b).actions.push_back({Completion::Retire, nullptr, v});
    seal(b);
    api().clFlush(q_[b.k]);
  }

  static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void* data) {
    std::unique_ptr<Completion> c(static_cast<Completion*>(data));
    c->engine->complete(ev, status, *c);
    api().clReleaseEvent(ev);
    --c->engine->in_flight_[c->queue];
    --c->engine->outstanding_;
  }

  void complete(cl_event ev, cl_int status, Completion& c) {
    if (status < 0)
      c.sub->fail("[exec] " + cfg_.dev->name() + ": " +
                  (c.name == "copy" || c.name == "marker" || c.name == "barrier"
                       ? c.name
                       : "kernel '" + c.name + "'") +
                  " failed on " + kQueueNames[c.queue] + ": " + error_name(status));
    const std::string err = c.sub->error_after(c.waits);
    uint64_t end = 0;
    if (!c.actions.empty() || c.profile) {
      end = std::max(host_time(ev, CL_PROFILING_COMMAND_END, *c.sub), last_ts_[c.queue].load());
      last_ts_[c.queue].store(end);
    }
    if (c.profile && status >= 0) {
      uint64_t start = std::min(host_time(ev, CL_PROFILING_COMMAND_START, *c.sub), end);
      cfg_.profile({cfg_.dev->name(), kQueueNames[c.queue], c.name, start, end, c.bytes});
    }
    for (const auto& a : c.actions) {
      switch (a.kind) {
        case Completion::Signal:
          if (err.empty())
            a.signal->device_write(a.value, end);
          else
            a.signal->fail(err);
          drop_pending(a.signal, a.value);
          break;
        case Completion::Timestamp:
          if (err.empty()) a.signal->device_timestamp(end);
          break;
        case Completion::Retire: retire(a.value, end); break;
      }
    }
  }

  void drop_pending(const hcq::Signal* s, uint64_t v) {
    std::lock_guard lk(pending_mu_);
    auto it = pending_.find(s);
    if (it == pending_.end()) return;
    auto& list = it->second;
    for (auto p = list.begin(); p != list.end();)
      if (p->value <= v) {
        api().clReleaseEvent(p->ev);
        p = list.erase(p);
      } else {
        ++p;
      }
    if (list.empty()) pending_.erase(it);
  }

  // Timeline values complete out of order across the two queues; the timeline advances over the
  // contiguous prefix.
  void retire(uint64_t v, uint64_t ts) {
    std::lock_guard lk(retire_mu_);
    done_.insert(v);
    uint64_t to = retired_;
    while (!done_.empty() && *done_.begin() == to + 1) {
      to = *done_.begin();
      done_.erase(done_.begin());
    }
    if (to == retired_) return;
    retired_ = to;
    cfg_.dev->timeline().device_write(to, ts);
  }

  // --- the waiter thread: completes the user events of waits on host or other devices' signals ---
  struct Waiting {
    const hcq::Signal* signal;
    uint64_t value;
    cl_event user;
    std::shared_ptr<Sub> sub;
    int queue;
  };

  void waiter_main() {
    std::unique_lock lk(wait_mu_);
    for (;;) {
      for (auto it = waiting_.begin(); it != waiting_.end();) {
        const bool failed = it->signal->failed();
        if (stop_ || failed || it->signal->value() >= it->value) {
          if (failed)
            it->sub->fail(it->signal->error());
          else if (it->signal->value() < it->value)
            it->sub->fail("[~Device] " + cfg_.dev->name() + " was destroyed while " + kQueueNames[it->queue] +
                          " waited for signal '" + it->signal->name() + "' to reach " +
                          std::to_string(it->value));
          api().clSetUserEventStatus(it->user, CL_COMPLETE);
          api().clReleaseEvent(it->user);
          it = waiting_.erase(it);
        } else {
          ++it;
        }
      }
      if (stop_) return;
      if (waiting_.empty()) {
        wait_cv_.wait(lk, [&] { return stop_ || !waiting_.empty(); });
        continue;
      }
      const Waiting first = waiting_.front();
      lk.unlock();
      first.signal->wait_until(first.value, hcq::Clock::now() + kWaiterSlice);
      lk.lock();
    }
  }

  struct Pending {
    uint64_t value;
    cl_event ev;  // retained
    int queue;
    std::shared_ptr<Sub> sub;
  };

  QueuesConfig cfg_;
  cl_command_queue q_[2] = {};
  cl_command_queue host_q_ = nullptr;
  int64_t offset_ns_ = 0;
  std::mutex submit_mu_[2];
  std::atomic<int64_t> outstanding_{0}, in_flight_[2] = {0, 0};
  std::atomic<uint64_t> last_ts_[2] = {0, 0};

  std::mutex pending_mu_;
  std::map<const hcq::Signal*, std::list<Pending>> pending_;

  std::mutex retire_mu_;
  std::set<uint64_t> done_;
  uint64_t retired_ = 0;

  mutable std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::list<Waiting> waiting_;
  bool stop_ = false;
  std::thread waiter_;

  std::atomic<const hcq::Program*> last_kernel_{nullptr};
};

}  // namespace

std::unique_ptr<Queues> make_queues(QueuesConfig cfg) { return std::make_unique<Engine>(std::move(cfg)); }

}  // namespace sluice::opencl
