#include "backends/cpu/queue.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <thread>

#include "backends/cpu/program.h"
#include "hcq/error.h"

namespace sluice::cpu {
namespace {

namespace pk = hcq::packet;

constexpr uint8_t kPad = pk::kFirstBackendOp, kEnd = pk::kFirstBackendOp + 1;
constexpr uint64_t kRingWords = uint64_t(1) << 16;   // 512 KiB: thousands of kernel launches in flight
constexpr uint64_t kPublishWords = kRingWords / 16;  // the CP gives consumed words back at least this often
// A CP blocked on a signal wakes this often to see whether its device is being destroyed.
constexpr auto kWaitSlice = std::chrono::milliseconds(20);
constexpr auto kForever = hcq::Clock::time_point::max();
// Running exec tokens are odd; this even value marks the exec as abandoned.
constexpr uint64_t kAbandoned = ~uint64_t(0) - 1;
// A core's share of a kernel's grid runs in up to this many parts (a power of two), reporting progress
// after each: an hour-long kernel still reports every minute or so. A part grows while parts take less
// than kPartTime, so a short kernel costs a few calls per core, not kMaxParts.
constexpr uint64_t kMaxParts = 64;
static_assert(kMaxParts < (1 << 16), "a core's share is two 16-bit part counts (Engine::Share)");
constexpr uint64_t kPartTime = 1'000'000;  // ns
// Below this much CPU time a kernel runs on one thread (run_exec): about two hand-offs to a worker here.
constexpr uint64_t kInline = 20'000;  // ns

class Engine final : public std::enable_shared_from_this<Engine> {
 public:
  explicit Engine(QueueConfig cfg)
      : cfg_(std::move(cfg)), ring_(new uint64_t[kRingWords]), refs_(new hcq::SignalRef[kRingWords / 2]) {}

  // Threads hold a reference, so an abandoned engine lives as long as its stuck threads do.
  void start() {
    for (int i = 0; i < cfg_.workers; ++i) workers_.push_back(std::make_unique<Worker>());
    shares_ = std::make_unique<Share[]>(size_t(cfg_.workers) + 1);
    for (int i = 0; i < cfg_.workers; ++i)
      workers_[i]->thread = std::thread([self = shared_from_this(), i] { self->worker_main(i); });
    cp_ = std::thread([self = shared_from_this()] { self->cp_main(); });
  }

  void close() { closing_.store(true, std::memory_order_seq_cst); }

  bool shutdown() {
    if (abandoned_.load()) return false;  // its threads were detached; its kernel may still run
    if (shut_) return true;
    shut_ = true;
    close();
    stop_.store(true, std::memory_order_seq_cst);
    written_.wake_all();
    // The CP drains the ring before it sees stop_. A kernel that goes the hang timeout without progress
    // ends the drain, as a hang does (a destructor never hangs): it is abandoned, and everything behind it
    // fails.
    while (!exited_.wait_until(1, hcq::Clock::now() + kWaitSlice)) {
      const QueueStatus st = status();
      const uint64_t hang = uint64_t(cfg_.hang_timeout().count());
      if (st.hung(hcq::now_ns(), hang) && abandon(st.token)) {
        const std::string msg = hcq::destroyed_while_hung(cfg_.device, cfg_.name, hang);
        for (const hcq::SignalRef& s : dropped_signals()) s.fail(msg);
        given_up_.store(true);  // quiet() from now on: another queue's wait may give up too
        return false;
      }
    }
    cp_.join();
    for (auto& w : workers_) {
      w->go.wake_all();
      w->thread.join();
    }
    return true;
  }

  void push(std::span<const uint64_t> w, uint64_t value) {
    const uint64_t end[2] = {pk::header(kEnd, 2), value};
    uint64_t pos = wp_ & (kRingWords - 1);
    if (pos + w.size() + 2 <= kRingWords && has_room(w.size() + 2)) {  // the usual case: one copy
      std::copy(w.begin(), w.end(), &ring_[pos]);
      for (pk::Ref r : pk::each(w)) hold(r.p, pos + r.at);
      std::copy(end, end + 2, &ring_[pos + w.size()]);
      wp_ += w.size() + 2;
    } else {
      for (pk::Ref r : pk::each(w)) put(r.p, pk::words(r.p[0]));
      put(end, 2);
    }
    written_.store(wp_);  // the doorbell
  }

  bool quiet() const {
    // A kernel shutdown() gave up on writes nothing any more: what it would have written has failed.
    if (given_up_.load()) return true;
    // The CP gives the ring back when it has run everything up to the doorbell, and before a wait.
    if (consumed_.value() == written_.value()) return true;
    std::lock_guard lk(wait_mu_);
    return wait_signal_ && wait_signal_.value() < wait_value_ && !wait_signal_.failed();
  }

  QueueStatus status() const {
    QueueStatus s;
    {
      std::lock_guard lk(wait_mu_);  // Waiting comes with its signal
      // Acquire: once it reads an exec's Running, the loads below see that exec's fields or a later
      // exec's, never an earlier one's (run_exec): the hang rule never times a kernel from a stale start.
      s.phase = QueueStatus::Phase(phase_.load(std::memory_order_acquire));
      s.signal = wait_signal_;
      s.value = wait_value_;
    }
    // Only a running exec's program is known to be alive: the last one of an idle queue may be gone.
    if (s.phase == QueueStatus::Running)
      if (const hcq::Program* p = program_.load(std::memory_order_acquire)) s.kernels = "'" + p->name() + "'";
    // The token before the times, acquiring them: the times are its exec's or a later one's, never an
    // earlier one's, so abandon(token) never gives up an exec that just started on a stale start time.
    s.token = token_.load(std::memory_order_acquire);
    s.since_ns = since_ns_.load();
    s.progress_ns = progress_ns_.load();
    s.parts_done = parts_done_.load();
    s.parts = parts_.load();
    return s;
  }

  bool abandon(uint64_t token) {
    uint64_t expect = token;
    // Taking the token from the running exec (which it released after its program_ and exec_at_) also
    // acquires those, and the CP writes neither again: its own exchange of the token now fails.
    if (!(token & 1) || !token_.compare_exchange_strong(expect, kAbandoned)) return false;
    keepalive_ = library(*program_.load());
    abandoned_.store(true, std::memory_order_seq_cst);
    stop_.store(true, std::memory_order_seq_cst);
    consumed_.wake_all();  // a producer blocked on a full ring gives up
    for (auto& w : workers_) {
      w->go.wake_all();
      w->thread.detach();
    }
    cp_.detach();
    return true;
  }

  std::vector<hcq::SignalRef> dropped_signals() const {
    std::vector<hcq::SignalRef> out;
    uint64_t rp = exec_at_.load();
    for (rp += pk::words(ring_[rp & (kRingWords - 1)]); rp < wp_;) {
      const uint64_t* p = &ring_[rp & (kRingWords - 1)];
      if (pk::op(p[0]) == pk::Signal) out.push_back(held(rp));
      rp += pk::words(p[0]);
    }
    return out;
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

  // --- producer side (under the device's submit lock) ---
  bool has_room(uint64_t n) const { return wp_ + n - consumed_.value() <= kRingWords; }

  void reserve(uint64_t n) {
    if (has_room(n)) return;
    written_.store(wp_);  // let the CP see what is already there, so that it frees space
    if (!consumed_.wait_until(wp_ + n - kRingWords, kForever, &abandoned_))
      SLUICE_FAIL(hcq::Error, "submit") << cfg_.device << " " << cfg_.name
                                        << " was reset after a hang while this submission waited for room";
  }

  void put(const uint64_t* p, uint64_t n) {
    if (n > kRingWords / 2)
      SLUICE_FAIL(hcq::Error, "submit") << "a command of " << n << " words does not fit " << cfg_.device
                                        << " " << cfg_.name << "'s ring of " << kRingWords << " words";
    uint64_t pos = wp_ & (kRingWords - 1);
    if (pos + n > kRingWords) {  // packets never wrap: pad to the end of the ring
      uint64_t pad = kRingWords - pos;
      reserve(pad);
      ring_[pos] = pk::header(kPad, uint32_t(pad));
      wp_ += pad;
      pos = 0;
    }
    reserve(n);
    std::copy(p, p + n, &ring_[pos]);
    hold(p, pos);
    wp_ += n;
  }

  // A packet that names a signal keeps a reference to it in its slot until the CP consumed it (cp_main).
  // Such a packet has two words at least, so no two of them in the ring share a slot.
  static bool names_signal(uint64_t hdr) {
    return pk::op(hdr) == pk::Wait || pk::op(hdr) == pk::Signal || pk::op(hdr) == pk::Timestamp;
  }
  hcq::SignalRef& held(uint64_t pos) const { return refs_[(pos & (kRingWords - 1)) / 2]; }
  void hold(const uint64_t* p, uint64_t pos) {
    if (names_signal(p[0])) held(pos) = pk::ptr<const hcq::Signal>(p[1])->ref();
  }

  // --- command processor ---
  void cp_main() {
    run_ring();
    exited_.store(1);
  }
  void run_ring() {
    for (uint64_t rp = 0;;) {
      if (!written_.wait_until(rp + 1, kForever, &stop_)) return;  // stopped and drained
      for (uint64_t end = written_.value(); rp < end;) {
        const uint64_t* p = &ring_[rp & (kRingWords - 1)];
        if (!execute(p, rp)) return;            // abandoned
        if (names_signal(p[0])) held(rp) = {};  // before the producer may reuse the slot
        rp += pk::words(p[0]);
        if (rp == end || rp - published_ >= kPublishWords) publish(rp);
      }
    }
  }

  // Gives the ring up to rp back to the producer. Not after every packet: a Counter's store wakes every
  // sleeper in its bucket (hcq/counter.cpp), and where an idle queue's CP sleeps on a counter that shares
  // consumed_'s bucket, a store per packet made a graph replay of tiny kernels 3-5x slower. The CP
  // publishes when it has run everything up to the doorbell, every kPublishWords, and before anything
  // that may take long (a blocking wait, a copy, a kernel it splits), so only tiny kernels hold up a
  // producer that waits for room.
  void publish(uint64_t rp) {
    if (rp > published_) consumed_.store(published_ = rp);
  }

  // Blocks until s >= v or s failed; false if the queue is abandoned, or closed while only the host could
  // still write s (close()). The packet at rp blocks.
  bool block_on(const hcq::SignalRef& s, uint64_t v, uint64_t rp) {
    if (s.value() >= v || s.failed()) return true;
    publish(rp);
    waiting(s, v);
    bool ok = false;
    while (!(ok = s.wait_until(v, hcq::Clock::now() + kWaitSlice)) && !abandoned_.load() &&
           !(closing_.load() && cfg_.settled() && s.value() < v && !s.failed())) {}
    waiting({}, 0);
    return ok || s.value() >= v || s.failed();
  }

  // Sets what status() reports: Waiting for s to reach v, or (s empty) Idle.
  void waiting(hcq::SignalRef s, uint64_t v) {
    std::lock_guard lk(wait_mu_);
    wait_signal_ = std::move(s);
    wait_value_ = v;
    phase_.store(wait_signal_ ? QueueStatus::Waiting : QueueStatus::Idle);
  }

  void fail_submission(std::string error) {
    if (failing_) return;
    failing_ = true;
    error_ = std::move(error);
  }

  bool execute(const uint64_t* p, uint64_t rp) {
    // Where the packet sits in its HwQueue (profile records): the ring adds its own packets (padding,
    // end), which the submission did not have.
    at_ = sub_words_;
    if (pk::op(p[0]) < pk::kFirstBackendOp) sub_words_ += pk::words(p[0]);
    switch (pk::op(p[0])) {
      case pk::Wait: {
        if (failing_) break;
        const hcq::SignalRef& s = held(rp);
        if (!block_on(s, p[2], rp))
          fail_submission(hcq::destroyed_while_waiting(cfg_.device, cfg_.name, s.name(), p[2]));
        else if (s.failed())
          fail_submission(s.error());
        break;
      }
      case pk::Signal:
        if (failing_) {
          held(rp).fail(error_);
        } else {
          held(rp).device_write(p[2], hcq::now_ns());
        }
        break;
      case pk::Timestamp:
        if (!failing_) held(rp).device_timestamp(hcq::now_ns());
        break;
      case pk::Exec:
        if (!failing_) return run_exec(p, rp);
        break;
      case pk::Copy:
        if (!failing_) {
          publish(rp);
          uint64_t t0 = hcq::now_ns();
          std::memcpy(pk::ptr<void>(p[1]), pk::ptr<const void>(p[2]), p[3]);
          record("copy", t0, p[3], hcq::Transfer::DeviceToDevice);
        }
        break;
      // A barrier has nothing left to do here: the CP runs commands one after another, and it resumes after
      // a kernel only through the pool's completion counter, which orders every core's writes before it.
      case pk::Barrier:
      case kPad: break;
      case kEnd:
        for (hcq::ProfileRecord& r : records_) {  // before the timeline says they are done
          r.submission = p[1];
          cfg_.profile(std::move(r));
        }
        records_.clear();
        sub_words_ = 0;
        // Even a skipped submission retires: the timeline says "done with", not "succeeded".
        cfg_.retire(p[1], hcq::now_ns());
        failing_ = false;
        error_.clear();
        break;
    }
    return true;
  }

  bool run_exec(const uint64_t* p, uint64_t rp) {
    pk::ExecView e(p);
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
    if (!whole) publish(rp);
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
    exec_at_.store(rp, std::memory_order_relaxed);
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
    record(e.program->name(), t0, 0, hcq::Transfer::None);
    return true;
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

  // Held until the submission retires, when its timeline value is known.
  void record(const std::string& name, uint64_t t0, uint64_t bytes, hcq::Transfer transfer) {
    if (cfg_.owner && cfg_.owner->profiling())
      records_.push_back({cfg_.device, cfg_.name, name, t0, hcq::now_ns(), bytes, 0, at_, transfer});
  }

  const QueueConfig cfg_;
  const std::unique_ptr<uint64_t[]> ring_;
  const std::unique_ptr<hcq::SignalRef[]> refs_;  // beside the ring's packets that name a signal (held())
  uint64_t wp_ = 0;                // producer's write position, in words since the start (never wraps)
  hcq::Counter written_;           // the doorbell: words published to the CP
  hcq::Counter consumed_;          // words the CP is done with
  std::atomic<bool> stop_{false};  // drain, then exit (destruction), or give up (abandon)
  std::atomic<bool> abandoned_{false};
  std::atomic<bool> closing_{false};   // close(): a wait only the host could meet gives up
  bool shut_ = false;                  // shutdown() ran
  hcq::Counter exited_;                // 1 once the CP thread has stopped
  std::atomic<bool> given_up_{false};  // shutdown() abandoned a kernel and failed what follows it

  // What the CP is doing, for status() and abandon().
  std::atomic<int> phase_{QueueStatus::Idle};
  mutable std::mutex wait_mu_;  // wait_signal_, wait_value_, and phase_ moving in and out of Waiting
  hcq::SignalRef wait_signal_;
  uint64_t wait_value_ = 0;
  std::atomic<const hcq::Program*> program_{nullptr};
  std::atomic<uint64_t> since_ns_{0}, token_{0}, exec_at_{0};
  // The running exec's progress: parts completed of parts_, and when the last one completed (run_share).
  std::atomic<uint64_t> progress_ns_{0}, parts_done_{0}, parts_{0};

  // CP-only state.
  uint64_t published_ = 0;  // consumed_'s value (publish())
  uint64_t exec_seq_ = 0, parts_given_ = 0;
  bool failing_ = false;  // a wait in this submission failed: skip to its End
  std::string error_;
  std::vector<void*> bufs_;
  std::vector<int> vars_;
  uint32_t sub_words_ = 0, at_ = 0;          // words of the submission so far; the current packet's offset
  std::vector<hcq::ProfileRecord> records_;  // the submission's, until it retires

  std::vector<std::unique_ptr<Worker>> workers_;
  Job job_;
  std::unique_ptr<Share[]> shares_;  // one per core (CP and workers)
  std::atomic<uint64_t> seq_{0};     // the current split job's sequence number
  hcq::Counter finished_;            // parts finished of split jobs, all jobs together
  std::thread cp_;
  std::shared_ptr<void> keepalive_;  // the abandoned kernel's shared object
};

class QueueImpl final : public Queue {
 public:
  explicit QueueImpl(QueueConfig cfg) : engine_(std::make_shared<Engine>(std::move(cfg))) {
    engine_->start();
  }
  ~QueueImpl() override { engine_->shutdown(); }

  void close() override { engine_->close(); }
  bool shutdown() override { return engine_->shutdown(); }
  bool quiet() const override { return engine_->quiet(); }

  void push(std::span<const uint64_t> packets, uint64_t value) override { engine_->push(packets, value); }
  QueueStatus status() const override { return engine_->status(); }
  bool abandon(uint64_t token) override { return engine_->abandon(token); }
  std::vector<hcq::SignalRef> dropped_signals() const override { return engine_->dropped_signals(); }

 private:
  std::shared_ptr<Engine> engine_;
};

}  // namespace

std::unique_ptr<Queue> start_queue(QueueConfig config) {
  return std::make_unique<QueueImpl>(std::move(config));
}

}  // namespace sluice::cpu
