#include "backends/opencl/queue.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "backends/opencl/program.h"

namespace sluice::opencl {

struct Queues {
  const Context& ctx;
  Memory& mem;
  std::string device;
  cl_command_queue host = nullptr;
  int64_t offset_ns = 0;  // device profiling time + offset = host clock

  // A signal write enqueued and not yet applied: a wait of either queue for it stays on the device.
  struct Pending {
    hcq::SignalRef signal;  // keeps its id from naming another signal while listed
    uint64_t value;
    cl_event ev;  // retained while listed
    int queue;
  };
  std::mutex mu;
  std::vector<Pending> pending;                                              // few, scanned linearly
  const Pending* pending_write(const hcq::SignalRef& s, uint64_t v) const {  // under mu
    for (const Pending& p : pending)
      if (p.signal.id() == s.id() && p.value >= v) return &p;
    return nullptr;
  }

  Queues(const Context& c, Memory& m, std::string d) : ctx(c), mem(m), device(std::move(d)) {}
  ~Queues() {
    for (const Pending& p : pending) api().clReleaseEvent(p.ev);
    if (host) api().clReleaseCommandQueue(host);
  }
};

namespace {

namespace pk = hcq::packet;

cl_command_queue create_queue(const Context& ctx, cl_command_queue_properties props) {
  cl_int err = CL_SUCCESS;
  cl_command_queue q = api().clCreateCommandQueue(ctx.ctx, ctx.device, props, &err);
  if (!q) fail("open_device", "clCreateCommandQueue", err);
  return q;
}

class ClQueue;

// Where a queue's segments stand, shared with the completion callbacks (which may run after the queue
// was abandoned: then `owner` is null).
struct Done {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t reached = 0;                 // the newest segment whose end event completed
  uint64_t sealed = 0;                  // the newest segment the command processor holds
  std::map<uint64_t, cl_int> failures;  // segments whose end event completed with an error status
  std::mutex owner_mu;                  // held while a callback applies a segment through owner
  ClQueue* owner = nullptr;
};
struct CallbackData {
  std::shared_ptr<Done> done;
  uint64_t token;
};
void CL_CALLBACK on_complete(cl_event, cl_int status, void* data);

class ClQueue final : public hcq::CommandProcessor {
  using Marks = hcq::CommandProcessor::Marks;

 public:
  ClQueue(Queues& sh, Config cfg, int kind) : hcq::CommandProcessor(std::move(cfg)), sh_(sh), kind_(kind) {
    q_ = create_queue(sh_.ctx, CL_QUEUE_PROFILING_ENABLE);
    done_->owner = this;
    start();
  }

  // The driver's callback: segment `token` ended. It is applied right there (the waiters on its signals
  // wake from the driver's thread, without a hop through the completion thread) unless it must wait.
  bool completed(uint64_t token) { return complete_now(token); }

  ~ClQueue() override {
    {
      std::lock_guard lk(done_->owner_mu);  // no callback applies through this queue from now on
      done_->owner = nullptr;
    }
    if (!shutdown()) return;  // the driver may still run its work: its queue and events stay alive
    for (const Segment& s : segs_) release(s);
    api().clReleaseCommandQueue(q_);
  }

 private:
  struct Segment {
    uint64_t token = 0;
    std::vector<cl_event> events;  // every event it holds a reference to
    std::vector<uint32_t> marks;
    const hcq::Program* end_kernel = nullptr;  // the kernel its end event belongs to (failure messages)
    uint64_t submission = 0;                   // the submission it ends in
  };

  // --- The encoder (the recording thread) ---

  void encode_exec(const pk::ExecView& e, Marks* timing) override {
    const auto& p = static_cast<const Program&>(*e.program);
    for (uint32_t i = 0; i < e.nbufs; ++i) {
      auto [m, off] = sh_.mem.resolve(e.bufs[i], "exec");
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
    const bool timed = timing || mark_follows();
    cl_event ev = nullptr;
    // The fewest dimensions that hold the launch: drivers pick a cheaper path for 1-D ranges.
    const cl_uint dims = global[2] > 1 ? 3 : global[1] > 1 ? 2 : 1;
    const cl_int err = api().clEnqueueNDRangeKernel(q_, p.kernel(), dims, nullptr, global, local, 0, nullptr,
                                                    timed ? &ev : nullptr);
    if (err != CL_SUCCESS)
      SLUICE_FAIL(hcq::Error, "exec") << config().device_name << ": kernel '" << p.name()
                                      << "': clEnqueueNDRangeKernel failed: " << error_name(err)
                                      << " (global " << e.global << " groups of " << e.local << ")";
    enqueued(ev, &p, timing);
  }

  void encode_copy(uint64_t dst, uint64_t src, uint64_t size, Marks* timing) override {
    auto [dm, doff] = sh_.mem.resolve(dst, "copy");
    auto [sm, soff] = sh_.mem.resolve(src, "copy");
    const bool timed = timing || mark_follows();
    cl_event ev = nullptr;
    SLUICE_CL(clEnqueueCopyBuffer(q_, sm, dm, soff, doff, size, 0, nullptr, timed ? &ev : nullptr), "copy");
    enqueued(ev, nullptr, timing);
  }

  void encode_barrier() override {}  // an in-order queue (queue.h)

  uint32_t encode_mark() override {
    if (!last_ev_) marker();
    return mark(last_ev_, CL_PROFILING_COMMAND_END);
  }

  uint32_t encode_signal(const hcq::SignalRef& s, uint64_t v) override {
    const uint32_t m = encode_mark();
    api().clRetainEvent(last_ev_);
    {
      std::lock_guard lk(sh_.mu);
      sh_.pending.push_back({s, v, last_ev_, kind_});
    }
    written(s);  // listed first: the other queue may encode a wait for it from now on
    return m;
  }

  bool encode_wait(const hcq::SignalRef& s, uint64_t v) override {
    std::lock_guard lk(sh_.mu);
    const Queues::Pending* p = sh_.pending_write(s, v);
    if (p && p->queue != kind_) {  // on this queue: in order already
      SLUICE_CL(clEnqueueBarrierWithWaitList(q_, 1, &p->ev, nullptr), "submit");
      last_ev_ = nullptr;
    }
    return p;
  }
  // Listed until its segment is recycled, after the write was applied.
  bool can_encode_wait(const hcq::SignalRef& s, uint64_t v) override {
    std::lock_guard lk(sh_.mu);
    return sh_.pending_write(s, v);
  }

  uint64_t submit_segment() override {
    if (!last_ev_) {
      try {
        marker();
      } catch (...) {  // it is recycled as a discarded one (token 0): in line, as below
        std::lock_guard lk(mu_);
        segs_.push_back(std::move(cur_));
        cur_ = Segment{};
        throw;
      }
    }
    Segment s = std::move(cur_);
    cur_ = Segment{};
    s.token = ++tokens_;
    s.end_kernel = last_kernel_, s.submission = submission();
    cl_event end = last_ev_;
    last_ev_ = nullptr;
    const uint64_t token = s.token;
    {
      std::lock_guard lk(mu_);
      segs_.push_back(std::move(s));  // first in line for recycle_segment, whether or not the rest works
    }
    auto* data = new CallbackData{done_, token};
    if (const cl_int err = api().clSetEventCallback(end, CL_COMPLETE, &on_complete, data);
        err != CL_SUCCESS) {
      delete data;
      fail("submit", "clSetEventCallback", err);
    }
    SLUICE_CL(clFlush(q_), "submit");
    return token;
  }

  // What was enqueued runs; nothing is taken back. The segment completes as usual.
  void discard_segment() override { last_ev_ = nullptr; }

  // A segment the driver finished before the processor held it (a marker on an idle queue often is):
  // its callback left it to this thread.
  void sealed(uint64_t token) override {
    bool finished = false;
    {
      std::lock_guard lk(done_->mu);
      done_->sealed = token;
      finished = done_->reached >= token && !done_->failures.count(token);
    }
    if (finished && !complete_now(token)) done_->cv.notify_all();
  }

  // --- Completion ---

  bool wait_segment(uint64_t token, std::chrono::nanoseconds slice, std::string& error) override {
    std::unique_lock lk(done_->mu);
    if (!done_->cv.wait_for(lk, slice, [&] { return done_->reached >= token; })) return false;
    auto it = done_->failures.find(token);  // kept until the segment is recycled: every waiter sees it
    if (it == done_->failures.end()) return true;
    const cl_int status = it->second;
    lk.unlock();
    std::string what = "a command";
    {
      std::lock_guard l(mu_);
      for (const Segment& s : segs_)
        if (s.token == token)
          what = s.end_kernel ? "kernel '" + s.end_kernel->name() + "'"
                              : "a command of submission " + std::to_string(s.submission);
    }
    error = "[exec] " + config().device_name + ": " + what + " failed on " + config().queue_name + ": " +
            error_name(status);
    return false;
  }

  // Segments end in order on an in-order queue: the newest one done, short of the first that failed.
  uint64_t finished_segment() override {
    std::lock_guard lk(done_->mu);
    uint64_t ok = done_->reached;
    if (!done_->failures.empty()) ok = std::min(ok, done_->failures.begin()->first - 1);
    return ok;
  }

  uint64_t mark_ns(uint32_t m) override {
    std::lock_guard lk(mu_);
    const auto* mark = marks_.find(m);
    if (!mark) return 0;
    cl_ulong t = 0;
    if (api().clGetEventProfilingInfo(mark->first, mark->second, sizeof t, &t, nullptr) != CL_SUCCESS)
      return 0;
    return uint64_t(std::max<int64_t>(1, int64_t(t) + sh_.offset_ns));
  }

  void recycle_segment(uint64_t token) override {
    {
      std::lock_guard lk(done_->mu);
      done_->failures.erase(token);
    }
    Segment s;
    {
      std::lock_guard lk(mu_);
      s = std::move(segs_.front());
      segs_.pop_front();
      marks_.drop(s.marks);
    }
    release(s);
  }

  // --- Helpers (the recording thread) ---

  // The command just enqueued, with its event if it got one.
  // `kernel`: null for a copy or a marker. Names are formatted only when a segment fails.
  void enqueued(cl_event ev, const hcq::Program* kernel, Marks* timing) {
    last_ev_ = ev;
    if (!ev) return;
    cur_.events.push_back(ev);
    last_kernel_ = kernel;
    if (timing)
      timing->start = mark(ev, CL_PROFILING_COMMAND_START), timing->end = mark(ev, CL_PROFILING_COMMAND_END);
  }
  void marker() {
    cl_event ev = nullptr;
    SLUICE_CL(clEnqueueMarkerWithWaitList(q_, 0, nullptr, &ev), "submit");
    enqueued(ev, nullptr, nullptr);
  }
  uint32_t mark(cl_event ev, cl_profiling_info what) {
    std::lock_guard lk(mu_);
    return marks_.add({ev, what}, cur_.marks);
  }
  // Drops a segment's events and the signal writes they carry.
  void release(const Segment& s) {
    {
      std::lock_guard lk(sh_.mu);
      std::erase_if(sh_.pending, [&](const Queues::Pending& p) {
        if (std::find(s.events.begin(), s.events.end(), p.ev) == s.events.end()) return false;
        api().clReleaseEvent(p.ev);
        return true;
      });
    }
    for (cl_event e : s.events) api().clReleaseEvent(e);
  }

  Queues& sh_;
  const int kind_;
  cl_command_queue q_ = nullptr;
  std::shared_ptr<Done> done_ = std::make_shared<Done>();
  // Recording state.
  Segment cur_;
  cl_event last_ev_ = nullptr;                 // the event of the last command, if it got one
  const hcq::Program* last_kernel_ = nullptr;  // the last command with an event, if a kernel
  uint64_t tokens_ = 0;
  // Under mu_.
  std::mutex mu_;
  std::deque<Segment> segs_;  // handed to the processor, oldest first
  MarkTable<std::pair<cl_event, cl_profiling_info>> marks_;
};

void CL_CALLBACK on_complete(cl_event, cl_int status, void* data) {
  std::unique_ptr<CallbackData> d(static_cast<CallbackData*>(data));
  Done& done = *d->done;
  bool held = false;  // the processor holds the segment already; else ClQueue::sealed completes it
  {
    std::lock_guard lk(done.mu);
    done.reached = std::max(done.reached, d->token);
    if (status < 0) done.failures[d->token] = status;
    held = d->token <= done.sealed;
  }
  if (status >= 0 && !held) return;
  if (status >= 0) {
    std::lock_guard lk(done.owner_mu);
    if (done.owner && done.owner->completed(d->token)) return;
  }
  done.cv.notify_all();
}

}  // namespace

std::shared_ptr<Queues> make_queues(const Context& ctx, Memory& mem, const std::string& device) {
  auto q = std::make_shared<Queues>(ctx, mem, device);
  q->host = create_queue(ctx, CL_QUEUE_PROFILING_ENABLE);
  // Device profiling time -> host clock: an offset measured once, around a marker.
  cl_event ev = nullptr;
  const uint64_t h0 = hcq::now_ns();
  SLUICE_CL(clEnqueueMarkerWithWaitList(q->host, 0, nullptr, &ev), "open_device");
  const cl_int err = api().clWaitForEvents(1, &ev);
  const uint64_t h1 = hcq::now_ns();
  cl_ulong end = 0;
  if (err == CL_SUCCESS)
    api().clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
  api().clReleaseEvent(ev);
  if (err != CL_SUCCESS) fail("open_device", "clWaitForEvents", err);
  q->offset_ns = int64_t(h0 / 2 + h1 / 2) - int64_t(end);
  return q;
}

cl_command_queue host_queue(const Queues& q) { return q.host; }

std::unique_ptr<hcq::CommandProcessor> start_queue(Queues& shared, hcq::CommandProcessor::Config cfg,
                                                   int kind) {
  return std::make_unique<ClQueue>(shared, std::move(cfg), kind);
}

}  // namespace sluice::opencl
