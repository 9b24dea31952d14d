#include "backends/cpu/queue.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <thread>

#include "backends/cpu/program.h"
#include "hcq/counter.h"

namespace sluice::cpu {
namespace {

namespace pk = hcq::packet;
using hcq::QueueStatus;

constexpr auto kForever = hcq::Clock::time_point::max();
// Running exec tokens are odd; this even value marks the exec as abandoned.
constexpr uint64_t kAbandoned = ~uint64_t(0) - 1;
// A core's share of a kernel's grid runs in up to this many parts (a power of two), reporting progress
// after each: an hour-long kernel still reports every minute or so. A part grows while parts take less
// than kPartTime, so a short kernel costs a few calls per core, not kMaxParts.
constexpr uint64_t kMaxParts = 64;
static_assert(kMaxParts < (1 << 16), "a core's share is two 16-bit part counts (Pool::Share)");
constexpr uint64_t kPartTime = 1'000'000;  // ns
// Below this much CPU time a kernel runs on one thread (run): about two hand-offs to a worker here.
constexpr uint64_t kInline = 20'000;  // ns

// The threads that run kernels with the recording thread (core 0), and what they share with it: the
// current job, each core's share of it, the running exec's status. Owned by the queue and by each of
// its threads, so an abandoned queue's stuck threads keep it alive.
class Pool final : public std::enable_shared_from_this<Pool> {
 public:
  explicit Pool(int workers) : n_workers_(workers) {}

  void start() {
    for (int i = 0; i < n_workers_; ++i) workers_.push_back(std::make_unique<Worker>());
    shares_ = std::make_unique<Share[]>(size_t(n_workers_) + 1);
    for (int i = 0; i < n_workers_; ++i)
      workers_[i]->thread = std::thread([self = shared_from_this(), i] { self->worker_main(i); });
  }

  void stop() {
    if (abandoned_.load()) return;  // its threads were detached; its kernel may still run
    stop_.store(true, std::memory_order_seq_cst);
    for (auto& w : workers_) {
      w->go.wake_all();
      if (w->thread.joinable()) w->thread.join();
    }
  }

  // Runs the exec on the calling thread (the recording thread) and the pool; false if it was abandoned
  // while it ran (nothing of it is touched after: its program may be gone).
  bool run(const pk::ExecView& e) {
    bufs_.resize(e.nbufs);
    for (uint32_t i = 0; i < e.nbufs; ++i) bufs_[i] = pk::ptr<void>(e.bufs[i]);
    vars_.resize(e.nvars);
    for (uint32_t i = 0; i < e.nvars; ++i) vars_[i] = e.var(i);
    const unsigned launch[6] = {e.global.x, e.global.y, e.global.z, e.local.x, e.local.y, e.local.z};
    // A launch predicted to cost less than kInline of CPU time (the program's last cost per work-group
    // times this grid) runs whole on this thread: handing a share to a worker (a wake-up, then a wait for
    // it) would cost more than the share. It is also one call: parts only tell a slow kernel from a stuck
    // one.
    std::atomic<double>& cost = group_cost_ns(*e.program);
    // Read before the token is published (below): abandon() acquires the token, so whoever frees the
    // program after an abandon is ordered after this read.
    const KernelFn fn = kernel_entry(*e.program);
    const bool whole = cost.load(std::memory_order_relaxed) * double(e.global.count()) < double(kInline);
    const int n = whole ? 1 : int(std::min<uint64_t>(workers_.size() + 1, e.global.count()));
    uint64_t parts = 1;
    while (!whole && parts * 2 <= std::min<uint64_t>(kMaxParts, e.global.count() / uint64_t(n))) parts *= 2;
    const uint64_t token = (++exec_seq_ << 1) | 1, t0 = hcq::now_ns();
    // The exec's status, for status() and abandon() on other threads. Not sequentially consistent: this
    // thread is their only writer, and such a store costs a full fence, several per tiny kernel. The
    // orders that matter: token_ and phase_ are releases, so a reader that sees this exec's token
    // (abandon()) or its Running (status(), which reads the program's name only then) sees the fields
    // stored before them too.
    program_.store(e.program, std::memory_order_release);
    since_ns_.store(t0, std::memory_order_relaxed);
    progress_ns_.store(t0, std::memory_order_relaxed);
    parts_done_.store(0, std::memory_order_relaxed);
    parts_.store(parts * uint64_t(n), std::memory_order_relaxed);
    token_.store(token, std::memory_order_release);
    phase_.store(QueueStatus::Running, std::memory_order_release);

    uint64_t t1;
    if (n == 1) {
      t1 = run_whole(fn, launch, parts, t0);
    } else {
      const auto r = std::memory_order_relaxed;
      job_.fn.store(fn, r), job_.bufs.store(bufs_.data(), r);
      job_.vars.store(vars_.data(), r), job_.launch.store(launch, r);
      job_.n_cores.store(n, r), job_.parts.store(parts, r);
      const uint64_t seq = seq_.load(r) + 1;  // this thread is its only writer
      for (int c = 0; c < n; ++c) shares_[size_t(c)].word.store(share_word(seq, 0, parts), r);
      seq_.store(seq, std::memory_order_release);
      for (int i = 1; i < n; ++i) workers_[i - 1]->go.add(1);
      // The workers' parts: all but the ones this thread ran.
      finished_.wait_until(parts_given_ += parts * uint64_t(n) - work(0, t0), kForever);
      t1 = hcq::now_ns();
    }
    // Against abandon(): exactly one of the two exchanges of this token succeeds. An abandoned exec's
    // program may be gone by the time its kernel returns: nothing of it is touched after.
    uint64_t expect = token;
    if (!token_.compare_exchange_strong(expect, token - 1)) return false;  // abandoned while it ran
    // The kernel's time times the cores, per work-group.
    cost.store(double(t1 - t0) * n / double(e.global.count()), std::memory_order_relaxed);
    phase_.store(QueueStatus::Idle, std::memory_order_release);
    return true;
  }

  // The running exec, for hcq::CommandProcessor::status(): false when none runs.
  bool status(QueueStatus& s) const {
    // Acquire: once it reads an exec's Running, the loads below see that exec's fields or a later
    // exec's, never an earlier one's (run): the hang rule never times a kernel from a stale start.
    if (phase_.load(std::memory_order_acquire) != QueueStatus::Running) return false;
    s.phase = QueueStatus::Running;
    // Only a running exec's program is known to be alive: the last one of an idle queue may be gone.
    if (const hcq::Program* p = program_.load(std::memory_order_acquire)) s.kernels = "'" + p->name() + "'";
    // The token before the times, acquiring them: the times are its exec's or a later one's, never an
    // earlier one's, so abandon(token) never gives up an exec that just started on a stale start time.
    s.token = token_.load(std::memory_order_acquire);
    s.since_ns = since_ns_.load();
    s.progress_ns = progress_ns_.load();
    s.parts_done = parts_done_.load();
    s.parts = parts_.load();
    return true;
  }

  // Gives up the exec `token` names if it still runs: its threads are detached to finish that kernel
  // and exit, and the kernel's code stays loaded. False if it finished meanwhile.
  bool abandon(uint64_t token) {
    uint64_t expect = token;
    // Taking the token from the running exec (which it released after its program_) also acquires it,
    // and the recording thread writes neither again: its own exchange of the token now fails.
    if (!(token & 1) || !token_.compare_exchange_strong(expect, kAbandoned)) return false;
    keepalive_ = library(*program_.load());
    abandoned_.store(true, std::memory_order_seq_cst);
    stop_.store(true, std::memory_order_seq_cst);
    for (auto& w : workers_) {
      w->go.wake_all();
      w->thread.detach();
    }
    return true;
  }

 private:
  struct Worker {
    hcq::Counter go;  // jobs handed to this worker so far
    std::thread thread;
  };
  // A split kernel (run_exec), written by the CP before it publishes the job's sequence number; read by
  // any thread that claims parts of it. Atomics: a thread that wakes late may read them while the CP
  // writes the next job's, and then fails its claim (work()).
  struct Job {
    std::atomic<KernelFn> fn{nullptr};
    std::atomic<void* const*> bufs{nullptr};
    std::atomic<const int*> vars{nullptr};
    std::atomic<const unsigned*> launch{nullptr};
    std::atomic<int> n_cores{0};
    std::atomic<uint64_t> parts{0};  // per core
  };
  // Core c's share of the current job: parts [front, back) not yet claimed, with the job's sequence number
  // (low 32 bits) in the same word, so a claim on a finished job's share fails. Its owner claims from
  // the front; a core whose own share is done steals from the back (a worker that has not woken yet, or
  // was preempted, does not hold up the kernel).
  struct alignas(64) Share {
    std::atomic<uint64_t> word{0};
  };
  static uint64_t share_word(uint64_t seq, uint64_t front, uint64_t back) {
    return (front << 48) | (back << 32) | (seq & 0xffffffff);
  }

  void worker_main(int i) {
    Worker& w = *workers_[i];
    for (uint64_t seen = 0;;) {
      if (!w.go.wait_until(seen + 1, kForever, &stop_)) return;
      seen = w.go.value();  // a worker that wakes late joins the current job, if any part is left
      if (const uint64_t ran = work(i + 1, hcq::now_ns())) finished_.add(ran);
    }
  }

  // The grid is split into parts of the ABI's finer split (program.h): with P parts per core, part j of
  // core c's share is share c*P+j of n_cores*P, and m aligned consecutive parts are one share of
  // n_cores*P/m. A call runs m parts; m doubles while calls take under kPartTime, so a short kernel costs
  // a few calls, and halves when they take far longer. Progress is counted after each call, so a kernel
  // that still completes parts is slow, not stuck (device.cpp's explain_stall). Each returns when its
  // last part finished, from t0 (the caller read the clock: a read costs as much as a tiny kernel).

  // A kernel on this thread alone: its parts in order.
  uint64_t run_whole(KernelFn fn, const unsigned* launch, uint64_t per, uint64_t t0) {
    uint64_t m = 1;
    for (uint64_t j = 0; j < per;) {
      while (j % m != 0 || j + m > per) m /= 2;
      fn(bufs_.data(), vars_.data(), launch, int(j / m), int(per / m));
      j += m;
      const uint64_t t = hcq::now_ns();
      if (j < per) progress(m, t);  // the last part ends the exec at once: nobody needs its progress
      m = next_part_size(m, t - t0);
      t0 = t;
    }
    return t0;
  }

  // Core `core`'s part of the current split job (seq_): its own share from the front, then what is left
  // of the other cores' shares from the back, half of it at a time. Returns how many parts it ran (the
  // CP's wait counts the workers' parts only: one add per worker and job, not one per call).
  uint64_t work(int core, uint64_t t0) {
    const auto r = std::memory_order_relaxed;
    const uint64_t seq = seq_.load(std::memory_order_acquire) & 0xffffffff;
    const KernelFn fn = job_.fn.load(r);
    void* const* bufs = job_.bufs.load(r);
    const int* vars = job_.vars.load(r);
    const unsigned* launch = job_.launch.load(r);
    const int n = job_.n_cores.load(r);
    const uint64_t per = job_.parts.load(r), total = per * uint64_t(n);
    uint64_t ran = 0;
    if (core >= n) return ran;
    uint64_t m = 1;
    for (int i = 0; i < n; ++i) {
      const int c = (core + i) % n;
      std::atomic<uint64_t>& word = shares_[size_t(c)].word;
      for (uint64_t w = word.load(std::memory_order_acquire);;) {
        // A claim that succeeds on this job's word also proves that the job's fields read above were
        // this job's: the CP writes the next job's only after every part of this one finished.
        if ((w & 0xffffffff) != seq) return ran;  // this job is over
        const uint64_t front = w >> 48, back = (w >> 32) & 0xffff;
        if (front >= back) break;
        // k parts at `at`, aligned to k: the owner's next ones, or a thief's half of what is left.
        uint64_t k, at, claimed;
        if (c == core) {
          for (k = m; front % k != 0 || front + k > back;) k /= 2;
          at = front, claimed = share_word(seq, front + k, back);
        } else {
          for (k = std::min(m, std::max<uint64_t>(1, std::bit_floor((back - front) / 2))); back % k != 0;)
            k /= 2;
          at = back - k, claimed = share_word(seq, front, at);
        }
        if (!word.compare_exchange_weak(w, claimed, std::memory_order_acq_rel)) continue;
        fn(bufs, vars, launch, int((uint64_t(c) * per + at) / k), int(total / k));
        const uint64_t t = hcq::now_ns();
        progress(k, t);
        ran += k;
        m = next_part_size(m, t - t0);
        t0 = t;
        w = word.load(std::memory_order_acquire);
      }
    }
    return ran;
  }

  void progress(uint64_t parts, uint64_t t) {
    parts_done_.fetch_add(parts, std::memory_order_relaxed);
    progress_ns_.store(t, std::memory_order_relaxed);
  }
  static uint64_t next_part_size(uint64_t m, uint64_t took) {
    if (took < kPartTime) return std::min(m * 2, kMaxParts);
    return took > 4 * kPartTime && m > 1 ? m / 2 : m;
  }

  const int n_workers_;
  std::atomic<bool> stop_{false};  // the workers exit (the queue stops, or gave its kernel up)
  std::atomic<bool> abandoned_{false};

  // The running exec, for status() and abandon().
  std::atomic<int> phase_{QueueStatus::Idle};
  std::atomic<const hcq::Program*> program_{nullptr};
  std::atomic<uint64_t> since_ns_{0}, token_{0};
  // Its progress: parts completed of parts_, and when the last one completed.
  std::atomic<uint64_t> progress_ns_{0}, parts_done_{0}, parts_{0};

  // The recording thread's.
  uint64_t exec_seq_ = 0, parts_given_ = 0;
  std::vector<void*> bufs_;
  std::vector<int> vars_;

  std::vector<std::unique_ptr<Worker>> workers_;
  Job job_;
  std::unique_ptr<Share[]> shares_;  // one per core (the recording thread and the workers)
  std::atomic<uint64_t> seq_{0};     // the current split job's sequence number
  hcq::Counter finished_;            // parts finished of split jobs, all jobs together
  std::shared_ptr<void> keepalive_;  // the abandoned kernel's shared object
};

class Queue final : public hcq::CommandProcessor {
 public:
  Queue(Config cfg, int workers) : CommandProcessor(std::move(cfg)), pool_(std::make_shared<Pool>(workers)) {
    pool_->start();
    start();
  }
  ~Queue() override {
    shutdown();
    pool_->stop();
  }

 private:
  void encode_exec(const pk::ExecView& e, Marks*) override {
    // Given up while it ran: the processor is marked abandoned next, and then stops the walk here.
    if (!pool_->run(e))
      while (!abandoned()) std::this_thread::yield();
  }
  void encode_copy(uint64_t dst, uint64_t src, uint64_t size, Marks*) override {
    std::memcpy(pk::ptr<void>(dst), pk::ptr<const void>(src), size);
  }
  void encode_barrier() override {}
  bool executing(QueueStatus& st) const override { return pool_->status(st); }
  bool abandon_executing(uint64_t token) override { return pool_->abandon(token); }

  const std::shared_ptr<Pool> pool_;
};

}  // namespace

std::unique_ptr<hcq::CommandProcessor> start_queue(hcq::CommandProcessor::Config cfg, int workers) {
  cfg.executes = true;
  cfg.pusher_records_work = false;
  cfg.ring_words = uint64_t(1) << 16;  // 512 KiB: thousands of kernel launches in flight
  return std::make_unique<Queue>(std::move(cfg), workers);
}

}  // namespace sluice::cpu
