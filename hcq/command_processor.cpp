#include "hcq/command_processor.h"

#include <algorithm>

namespace sluice::hcq {
namespace {

namespace pk = packet;

}  // namespace

CommandProcessor::CommandProcessor(Config cfg)
    : cfg_(std::move(cfg)),
      ring_(cfg_.ring_words, cfg_.device_name + " " + cfg_.queue_name, !cfg_.pusher_records_work) {}

CommandProcessor::~CommandProcessor() {
  // The derived class ran shutdown() (its encoder is gone by now); a constructor that threw before
  // start() left no threads.
  if (worker_.joinable() || completer_.joinable()) {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
      abandoned_ = true;
    }
    ring_stop_ = true;
    notify_all();
    if (worker_.joinable()) worker_.join();
    if (completer_.joinable()) completer_.join();
  }
}

void CommandProcessor::start(bool worker) {
  started_ = true;
  if (worker) worker_ = std::thread([this] { work(); });
  if (!cfg_.executes) completer_ = std::thread([this] { complete(); });
}

void CommandProcessor::notify_all() {
  ring_.wake();
  done_cv_.notify_all();
  cv_.notify_all();
}

void CommandProcessor::close() {
  closing_ = true;
  std::lock_guard lk(mu_);
  notify_all();
}

bool CommandProcessor::shutdown() {
  if (shut_) return clean_;
  shut_ = true;
  if (!started_) return clean_;
  close();
  const auto limit = cfg_.hang_timeout();
  bool hung = false;
  {
    // Drain: the worker empties its ring (its host waits give up, close()), the completion thread
    // retires every segment (unless abandoned). The wait for the device is bounded by the hang timeout,
    // counted while the oldest submitted segment stays the same; an executing encoder's kernel is hung
    // by the hang rule (queue_status.h), which sees its progress.
    std::unique_lock lk(mu_);
    uint64_t front = 0;
    auto since = Clock::now();
    // A queue started without a worker (a test's) leaves what its ring holds.
    while (!((ring_.drained() || !worker_.joinable()) && !busy_ && inflight_.empty()) && !abandoned_) {
      cv_.wait_for(lk, kPoll);
      if (cfg_.executes) {
        lk.unlock();
        const QueueStatus st = status();
        hung = st.hung(now_ns(), uint64_t(limit.count())) && abandon(st.token);
        lk.lock();
        if (hung) break;
        continue;
      }
      const uint64_t f = inflight_.empty() ? 0 : inflight_.front().token;
      const auto now = Clock::now();
      if (f == 0 || f != front) {
        front = f, since = now;
      } else if (now - since > limit) {
        hung = true;
        abandoned_ = true;
        break;
      }
    }
    stop_ = true;
  }
  ring_stop_ = true;
  notify_all();
  if (worker_.joinable()) worker_.join();
  if (completer_.joinable()) completer_.join();
  { std::lock_guard c(complete_mu_); }  // a host thread applying the last segments (wait_for) is done
  if (hung) {
    const std::string msg = destroyed_while_hung(cfg_.device_name, cfg_.queue_name, uint64_t(limit.count()));
    for (const SignalRef& s : dropped_signals()) s.fail(msg);
    given_up_ = true;  // quiet() from now on: another queue's host wait may give up too
    clean_ = false;
  } else if (abandoned_ && cfg_.executes) {
    clean_ = worker_left_;  // else the command it gave up on may still run
  } else if (abandoned_ && submitted_) {
    // Reset after a hang (device.h): its abandoned work must finish before the backend's objects go,
    // but a hung device is not waited for without end.
    std::string error;
    clean_ = wait_segment(submitted_, limit, error) || !error.empty();
  }
  if (clean_)
    for (Segment& s : inflight_)
      if (!s.host_only) recycle_segment(s.token);
  return clean_;
}

bool CommandProcessor::quiet() {
  if (given_up_) return true;  // what the work given up on would have written has failed
  std::lock_guard lk(mu_);
  if (!inflight_.empty()) return false;
  if (waiting_on_) return waiting_on_.value() < waiting_for_ && !waiting_on_.failed();
  return !busy_ && ring_.drained();
}

void CommandProcessor::push(const HwQueue& q, uint64_t tv, uint64_t graph) {
  // Pushes come one at a time, so a drained ring stays empty while this thread records.
  const std::span<const uint64_t> words = q.packets();
  const SubmissionSignals live = SubmissionSignals::live(words);
  // What q holds spares the walk over its packets (a replayed graph's are many) where it has no wait.
  const bool fast = (cfg_.pusher_records_work || !(q.holds(pk::Exec) || q.holds(pk::Copy))) &&
                    (!q.holds(pk::Wait) || recordable(words, live));
  if (fast && ring_.drained()) {                   // drained() last: it reads what the worker writes
    busy_.store(true, std::memory_order_release);  // for quiet() and shutdown()
    process(words, tv, live, graph);
    drive_told();
    // A release, not a full barrier (which costs as much as NULL's whole command): a shutdown() that read
    // busy_ before this store and is not woken here sees it at its next poll (kPoll). Only a device
    // destroyed while a thread still submits to it races so.
    busy_.store(false, std::memory_order_release);
    if (closing_.load(std::memory_order_acquire)) {
      std::lock_guard lk(mu_);
      cv_.notify_all();
    }
    return;
  }
  ring_.push(words, tv, graph, abandoned_);
}

void CommandProcessor::forget_graph(uint64_t graph) {
  std::lock_guard lk(mu_);
  forgotten_.push_back(graph);  // the recording thread drops it (a backend's graph form is not thread-safe)
  forgot_ = true;
}

QueueStatus CommandProcessor::status() {
  std::lock_guard lk(mu_);
  QueueStatus st;
  if (waiting_on_) {
    st.phase = QueueStatus::Waiting;
    st.signal = waiting_on_;
    st.value = waiting_for_;
  }
  if (!inflight_.empty() && !inflight_.front().programs.empty()) {
    const Segment& s = inflight_.front();
    st.phase = QueueStatus::Running;
    for (size_t i = 0; i < s.programs.size(); ++i)
      st.kernels += (i ? ", '" : "'") + s.programs[i]->name() + "'";
    st.since_ns = std::max(s.submit_ns, last_done_ns_);
    st.token = s.token;
    // A native graph replay holds more kernels than a segment would: the device cannot show progress
    // inside it, so it gets the time of the segments it would have been.
    st.budget = uint32_t((s.programs.size() + cfg_.segment_commands - 1) / cfg_.segment_commands);
    st.budget = std::max(st.budget, 1u);
  }
  if (cfg_.executes && st.phase == QueueStatus::Idle) executing(st);
  return st;
}

void CommandProcessor::wait_for(const Signal& s, uint64_t v, uint64_t tv, Clock::time_point deadline) {
  if (cfg_.executes) return;  // no segments: nothing to wait for in a driver
  // The segment that writes it, or the newest submitted one before it, if it was never submitted (it
  // is applied with that one).
  uint64_t target = 0;
  {
    std::lock_guard lk(mu_);
    auto writes = [&](const Segment& seg) {
      for (const Completion& c : seg.completions)
        if ((c.kind == Completion::Signal && c.signal.refers_to(s) && c.value >= v) ||
            (tv && c.kind == Completion::Retire && c.value >= tv))
          return true;
      return false;
    };
    uint64_t newest = 0;
    for (const Segment& seg : inflight_) {
      newest = seg.token ? seg.token : newest;
      if (writes(seg)) {
        target = newest;
        break;
      }
    }
  }
  if (!target) return;
  // In slices, so that a failed signal or an abandoned queue ends the wait (a hung device never answers).
  for (;;) {
    const auto now = Clock::now();
    if (now >= deadline || abandoned_ || s.failed()) return;
    std::string error;
    if (wait_segment(target, std::min<Clock::duration>(deadline - now, kPoll), error)) break;
    if (!error.empty()) {
      // The device failed under this thread: it applies the failure, as the completion thread would (a
      // driver may report a fault to one query only).
      auto err = failure(error);
      {
        std::lock_guard c(complete_mu_);
        uint64_t front = 0;
        {
          std::lock_guard lk(mu_);
          for (const Segment& seg : inflight_)
            if (seg.token) {
              front = seg.token;
              break;
            }
        }
        if (front == target) drain(front, err);  // else the completion thread reaches it in turn
      }
      return apply_host_only();
    }
  }
  {
    std::lock_guard c(complete_mu_);
    drain(target, nullptr);
  }
  apply_host_only();
}

bool CommandProcessor::abandon(uint64_t token) {
  if (cfg_.executes) {
    // The recording thread runs the command: it is left to finish it (or never), and owns this queue
    // until it leaves (work()).
    if (!abandon_executing(token)) return false;
    std::lock_guard lk(mu_);
    keepalive_ = weak_from_this().lock();
    abandoned_ = true;
    if (worker_.joinable()) worker_.detach();
    notify_all();
    return true;
  }
  std::lock_guard lk(mu_);
  if (inflight_.empty() || inflight_.front().token != token) return false;
  abandoned_ = true;
  notify_all();
  return true;
}

std::vector<SignalRef> CommandProcessor::dropped_signals() {
  std::lock_guard lk(mu_);
  std::vector<SignalRef> out;
  for (const Segment& s : inflight_)
    for (const Completion& c : s.completions)
      if (c.kind == Completion::Signal || c.kind == Completion::Fail) out.push_back(c.signal);
  // An executing encoder's current submission: what follows the command it gave up on.
  if (cfg_.executes && entry_)
    for (SignalRef& r : entry_->signals.written_from(at_ + pk::words(entry_->words[at_])))
      out.push_back(std::move(r));
  for (SignalRef& r : ring_.written_after(0)) out.push_back(std::move(r));
  return out;
}

// A thread other than the worker (the pusher, drive()) may record this submission: no wait of it can
// block (each is met, failed, or one the encoder can put on the device), and it holds no kernel or copy
// where those may not run there.
bool CommandProcessor::recordable(std::span<const uint64_t> w, const SubmissionSignals& signals) {
  for (pk::Ref r : pk::each(w)) {
    if (r.op == pk::Wait) {
      const SignalRef& s = signals.at(r.at);
      if (s.value() < r.p[2] && !s.failed() && !can_encode_wait(s, r.p[2])) return false;
    }
    if (!cfg_.pusher_records_work && (r.op == pk::Exec || r.op == pk::Copy)) return false;
  }
  return true;
}

void CommandProcessor::work() {
  std::shared_ptr<CommandProcessor> self;  // the last owner of an abandoned queue, maybe: released last
  SubmissionRing::Entry e;
  // A submission that starts with a wait that can block stays in the ring while the worker waits for it
  // (wait_first), unless the device is being destroyed and only the host could meet it (give_up: then
  // host_wait fails it).
  SignalRef first;
  uint64_t first_v = 0;
  bool give_up = false;
  const SubmissionRing::Accept unblocked = [&](std::span<const uint64_t> w, const SubmissionSignals& sigs) {
    return give_up || !blocked_first(w, sigs, first, first_v);
  };
  std::unique_lock c(consume_mu_);
  while (!abandoned_) {
    first = {};
    if (!ring_.take(e, unblocked)) {
      if (first) {
        give_up = wait_first(first, first_v, c);
        continue;
      }
      c.unlock();  // drive() may take what comes meanwhile
      const bool more = ring_.wait(ring_stop_, abandoned_);
      c.lock();
      if (!more) break;
      continue;
    }
    give_up = false;
    entry_ = &e;
    process(e.words, e.tv, e.signals, e.graph);
    if (abandoned_) {
      wake_told();
      break;
    }
    entry_ = nullptr;
    drive_told();  // before the release: from then on the pusher may record (and tell) again
    release(e);
  }
  c.unlock();
  std::lock_guard lk(mu_);
  entry_ = nullptr;  // dropped_signals() reads it under mu_: `e` goes with this frame
  worker_left_ = true;
  self = std::move(keepalive_);
}

// Whether submission `w` starts with a wait that can block (before anything but met waits and barriers):
// then `s` and `v` are that wait's.
bool CommandProcessor::blocked_first(std::span<const uint64_t> w, const SubmissionSignals& signals,
                                     SignalRef& s, uint64_t& v) {
  for (pk::Ref r : pk::each(w)) {
    if (r.op == pk::Barrier) continue;
    if (r.op != pk::Wait) return false;
    const SignalRef& x = signals.at(r.at);
    if (x.value() >= r.p[2] || x.failed()) continue;
    if (can_encode_wait(x, r.p[2])) return false;
    s = x, v = r.p[2];
    return true;
  }
  return false;
}

// The worker, holding the consume lock, found the ring's next submission blocked by its first wait:
// it waits for that wait's signal without the lock, so that the thread that records the signal's writer
// may record the submission itself (drive()) instead of waking this one; it takes the lock again once
// the signal is reached or failed, a write of it was recorded (retry_wait), or the queue is abandoned.
// Returns true when the device is being destroyed and nothing but the host could meet the wait (close()).
bool CommandProcessor::wait_first(const SignalRef& s, uint64_t v, std::unique_lock<std::mutex>& consume) {
  flush();                 // earlier work must not wait behind the signal
  ring_.give_back_read();  // a producer waiting for room may be what would meet it
  consume.unlock();
  const Held why = hold(s, v);
  consume.lock();
  return why == Held::GivenUp;
}

// The host waits of the recording thread (host_wait, wait_first): until `s` reaches `v` or fails, another
// queue records a write of some signal (retry_wait), the device is being destroyed and nothing of it can
// write `s` any more (only the host could, and a destructor does not wait for the host: close()), or the
// queue is abandoned. It spins a while first on every device: a host set() soon after the submit
// (host_signal_wake) is seen at once, and sleeping at once measured no better for PoCL's threads
// (unlike the ring's wait). status() shows the wait meanwhile.
CommandProcessor::Held CommandProcessor::hold(const SignalRef& s, uint64_t v) {
  {
    std::lock_guard lk(mu_);
    waiting_on_ = s, waiting_for_ = v;
  }
  Held why = Held::Reached;  // or failed
  while (!s.wait_until(v, Clock::now() + kPoll, &retry_)) {
    if (abandoned_) {
      why = Held::Abandoned;
      break;
    }
    if (retry_.exchange(false)) {
      why = Held::Retry;
      break;
    }
    if (closing_ && cfg_.settled() && s.value() < v && !s.failed()) {
      why = Held::GivenUp;
      break;
    }
  }
  std::lock_guard lk(mu_);
  waiting_on_ = {};
  return why;
}

void CommandProcessor::written(const SignalRef& s) {
  CommandProcessor* other = sibling_.load(std::memory_order_acquire);
  if (!other) return;
  // A queue whose recording runs kernels is driven only by its own threads.
  if (other->cfg_.executes) return other->retry_wait(s);
  other->retry_ = true;  // its worker is woken after the drive (wake_told): woken first, it would record
  if (told_signals_.empty() || told_signals_.back().id() != s.id()) told_signals_.push_back(s);
}

void CommandProcessor::drive_told() {
  if (told_signals_.empty()) return;  // nothing was written for the other queue
  if (CommandProcessor* other = sibling_.load(std::memory_order_acquire)) other->drive();
  wake_told();
}

void CommandProcessor::wake_told() {
  for (const SignalRef& s : told_signals_) s.wake();  // a worker holding a wait for it looks again
  told_signals_.clear();
}

// Another queue's recording thread records this queue's next submissions, as long as none can block,
// unless the worker is recording (it holds the consume lock; retry_wait told it). Bounded: one hop (the
// queues these submissions tell are left to their own threads, so no chain of queues grows here), a
// few submissions (a producer that keeps pushing must not keep this thread), and half the segment
// budget in flight at most (flush() would block this thread on the device).
void CommandProcessor::drive() {
  if (abandoned_ || closing_) return;
  std::unique_lock c(consume_mu_, std::try_to_lock);
  if (!c.owns_lock()) return;
  const SubmissionRing::Accept accept = [this](std::span<const uint64_t> w, const SubmissionSignals& sigs) {
    return recordable(w, sigs);
  };
  constexpr int kMostSubmissions = 16;
  SubmissionRing::Entry e;
  for (int n = 0; n < kMostSubmissions && !abandoned_; ++n) {
    {
      std::lock_guard lk(mu_);
      if (inflight_.size() >= cfg_.max_segments / 2) break;
    }
    if (!ring_.take(e, accept)) break;
    {
      std::lock_guard lk(mu_);
      waiting_on_ = {};  // the worker's wait for it (wait_first) is over: status() and quiet() see so
    }
    entry_ = &e;
    process(e.words, e.tv, e.signals, e.graph);
    entry_ = nullptr;
    wake_told();  // no further hop: before the release, as work() does
    release(e);
  }
}

// Done with a submission taken from the ring.
void CommandProcessor::release(SubmissionRing::Entry& e) {
  ring_.release(e);
  if (closing_ && ring_.drained()) {
    std::lock_guard lk(mu_);
    cv_.notify_all();  // shutdown() waits for the drain
  }
}

std::shared_ptr<std::string> CommandProcessor::failure(const std::string& e, bool sticky) {
  auto err = std::make_shared<std::string>(e);
  if (sticky || fatal(e)) {
    std::lock_guard lk(mu_);
    if (!lost_) lost_ = err;
  }
  return err;
}

// --- Recording (one thread at a time: the worker, or a pusher while busy_) ---

// A fatal error from before (what comes later fails with it), and the hcq::Graphs forgotten since the
// last submission: their native forms are dropped here, on the recording thread.
std::shared_ptr<std::string> CommandProcessor::begin_submission() {
  std::vector<uint64_t> forgotten;
  std::shared_ptr<std::string> error;
  {
    std::lock_guard lk(mu_);
    error = lost_;
    forgotten.swap(forgotten_);
    forgot_ = false;
  }
  for (uint64_t g : forgotten) drop_graph(g);
  return error;
}

// The packets' signals are read through `signals` (in process() and execute()): the Signals themselves
// may be gone by now.
void CommandProcessor::process(std::span<const uint64_t> w, uint64_t tv, const SubmissionSignals& signals,
                               uint64_t graph) {
  if (cfg_.executes) return execute(w, tv, signals);
  std::shared_ptr<std::string> error = begin_submission();
  const bool profiling = cfg_.profiling();
  size_t i = 0;  // where the submission stopped: the signals recorded from here on fail
  auto discard = [&] {
    discard_segment();
    open_ = true;  // what the encoder enqueued before it failed runs: a completion point follows it
    cur_.programs.clear();
    for (Completion& c : cur_.completions) c.marks = {};
    std::erase_if(cur_.completions, [](const Completion& c) { return c.kind == Completion::Profile; });
  };
  // A graph's replay runs in the backend's native form where it has one; profiling needs a time around
  // every command, so it records them one by one.
  if (!error && graph && !profiling) {
    try {
      if (encode_graph(graph, w, cur_.programs)) i = w.size(), open_ = true;
    } catch (const std::exception& e) {
      error = failure(e.what());
      discard();
    }
  }
  for (pk::Ref r : pk::each(w)) {
    if (error || i == w.size()) break;
    const uint64_t* p = r.p;
    i = r.at + pk::words(p[0]);
    tv_ = tv, at_ = r.at;
    try {
      Marks timing;
      Marks* t = profiling ? &timing : nullptr;
      switch (r.op) {
        case pk::Wait: {
          const SignalRef& s = signals.at(r.at);
          if (s.value() >= p[2] && !s.failed()) break;
          if (!s.failed() && encode_wait(s, p[2])) {
            open_ = true;
            cur_.completions.emplace_back(Completion::Waited, s, p[2]);
            break;
          }
          error = host_wait(s, p[2]);
          break;
        }
        case pk::Signal:
        case pk::Timestamp: {
          const bool write = r.op == pk::Signal;
          Completion c(write ? Completion::Signal : Completion::Timestamp, signals.at(r.at),
                       write ? p[2] : 0);
          c.marks.start = write ? encode_signal(c.signal, c.value) : encode_mark();
          open_ |= c.marks.start != kNoMark;
          cur_.completions.push_back(std::move(c));
          break;
        }
        case pk::Exec: {
          pk::ExecView e(p);
          if (commands_ >= cfg_.segment_commands) flush();  // a full segment goes before the next command
          open_ = true;
          mark_follows_ = mark_follows_after(w, r.at + pk::words(p[0]));
          encode_exec(e, t);
          cur_.programs.push_back(e.program);
          if (timing.start != kNoMark) profiled(timing, e.program, 0);
          ++commands_;
          break;
        }
        case pk::Copy:
          if (commands_ >= cfg_.segment_commands) flush();
          open_ = true;
          mark_follows_ = mark_follows_after(w, r.at + pk::words(p[0]));
          encode_copy(p[1], p[2], p[3], t);
          if (timing.start != kNoMark) profiled(timing, nullptr, p[3]);
          ++commands_;
          break;
        case pk::Barrier:
          open_ = true;
          encode_barrier();
          break;
        default: break;
      }
    } catch (const std::exception& e) {
      error = failure(e.what());
      discard();
      break;
    }
  }
  // The rest of a failed submission is skipped: its signals fail; it still retires in order.
  for (SignalRef& s : signals.written_from(i)) cur_.completions.emplace_back(Completion::Fail, std::move(s));
  if (error)
    for (Completion& c : cur_.completions)
      if (c.kind == Completion::Fail && !c.error) c.error = error;
  cur_.completions.emplace_back(Completion::Retire, SignalRef{}, tv);
  try {
    flush();
  } catch (const std::exception& e) {
    // The segment could not be submitted: its completions apply as failures, in order.
    auto err = failure(e.what());
    discard();
    for (Completion& c : cur_.completions)
      if (c.kind == Completion::Signal) c.kind = Completion::Fail, c.error = err;
    seal();
  }
}

// An executing encoder's submission (Config::executes): each command runs as the walk reaches it and
// what follows it applies at once, on this thread. No segment, and no lock per submission unless a
// graph was forgotten meanwhile: NULL's whole submission costs about as much as one lock.
void CommandProcessor::execute(std::span<const uint64_t> w, uint64_t tv, const SubmissionSignals& signals) {
  std::shared_ptr<std::string> error = forgot_ ? begin_submission() : nullptr;
  const bool profiling = cfg_.profiling();
  // The time of the signals and retirement that follow a command: one clock read until something runs
  // again (a clock read costs as much as a NULL device's whole command).
  uint64_t now = 0;
  auto stamp = [&now] { return now ? now : now = now_ns(); };
  size_t i = 0;  // where the submission stopped: the signals recorded from here on fail
  for (pk::Ref r : pk::each(w)) {
    if (error) break;
    const uint64_t* p = r.p;
    i = r.at + pk::words(p[0]);
    tv_ = tv, at_ = r.at;
    try {
      switch (r.op) {
        case pk::Wait: {
          const SignalRef& s = signals.at(r.at);
          if (s.value() >= p[2] && !s.failed()) break;
          error = host_wait(s, p[2]);
          now = 0;
          if (abandoned_) return;
          break;
        }
        case pk::Signal: signals.at(r.at).device_write(p[2], stamp()); break;
        case pk::Timestamp: signals.at(r.at).device_timestamp(stamp()); break;
        case pk::Exec:
        case pk::Copy: {
          const bool exec = r.op == pk::Exec;
          const uint64_t t0 = profiling ? now_ns() : 0;
          if (exec)
            encode_exec(pk::ExecView(p), nullptr);
          else
            encode_copy(p[1], p[2], p[3], nullptr);
          if (abandoned_) return;  // the device failed what follows
          now = profiling ? now_ns() : 0;
          if (profiling) record(exec ? pk::ExecView(p).program : nullptr, t0, now, exec ? 0 : p[3], tv, r.at);
          break;
        }
        case pk::Barrier: encode_barrier(); break;
        default: break;
      }
    } catch (const std::exception& e) { error = failure(e.what()); }
  }
  // The rest of a failed submission is skipped: its signals fail; it still retires in order.
  if (error)
    for (const SignalRef& s : signals.written_from(i)) s.fail(*error);
  cfg_.retire(tv, stamp());
}

// Whether a signal or timestamp packet follows word `at` of `w` (barriers aside), or nothing does.
bool CommandProcessor::mark_follows_after(std::span<const uint64_t> w, size_t at) {
  while (at < w.size() && pk::op(w[at]) == pk::Barrier) at += pk::words(w[at]);
  return at >= w.size() || pk::op(w[at]) == pk::Signal || pk::op(w[at]) == pk::Timestamp;
}

// A profile record of a kernel, or of a copy (no program), from the command's times and where it sits.
void CommandProcessor::record(const Program* program, uint64_t t0, uint64_t t1, uint64_t bytes,
                              uint64_t submission, uint32_t at) {
  cfg_.profile({cfg_.device_name, cfg_.queue_name, program ? program->name() : "copy", t0, t1, bytes,
                submission, at, program ? Transfer::None : Transfer::DeviceToDevice});
}

void CommandProcessor::profiled(Marks timing, const Program* program, uint64_t bytes) {
  Completion& c = cur_.completions.emplace_back(Completion::Profile, SignalRef{}, bytes);
  c.marks = timing, c.program = program, c.submission = tv_, c.at = at_;
}

// Host-side wait of the recording thread. Returns the error that fails the submission, if any.
std::shared_ptr<std::string> CommandProcessor::host_wait(const SignalRef& s, uint64_t v) {
  flush();                                    // earlier work must not wait behind the signal
  if (entry_) ring_.give_back(*entry_, at_);  // a producer waiting for room may be what would meet it
  wake_told();                                // a queue this one told may be what would meet it
  for (;;) {
    const Held why = hold(s, v);
    if (why == Held::Retry) {  // maybe of this signal: outside the lock, encode_wait may throw
      if (!encode_wait(s, v)) continue;
      open_ = true;  // the device holds the wait from here on
      cur_.completions.emplace_back(Completion::Waited, s, v);
      return nullptr;
    }
    if (s.failed()) return std::make_shared<std::string>(s.error());
    if (why == Held::GivenUp)
      return std::make_shared<std::string>(
          destroyed_while_waiting(cfg_.device_name, cfg_.queue_name, s.name(), v));
    if (abandoned_)
      return std::make_shared<std::string>("[wait] " + cfg_.device_name + ": " + cfg_.queue_name +
                                           " was reset");
    return nullptr;
  }
}

void CommandProcessor::flush() {
  if (!open_ && cur_.completions.empty()) return;
  {
    // At most max_segments in flight; an abandoned queue's segments never retire.
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return inflight_.size() < cfg_.max_segments || abandoned_; });
  }
  if (!open_) {
    // Nothing for the device (an empty submission; signals where the encoder puts no mark): no driver
    // call, and no thread woken when nothing is in flight before it, as its completions apply once the
    // segments before it have. A driver marker here cost PoCL more than the rest of the submission.
    cur_.host_only = true;
    seal(/*notify=*/false);
    if (complete_now(0)) return;
  } else {
    cur_.submit_ns = now_ns();
    const uint64_t token = cur_.token = submit_segment();
    submitted_ = token;
    seal(/*notify=*/false);
    sealed(token);
  }
  // The completion thread is woken only for a segment that is still to be applied: one the backend
  // completed in sealed() costs no thread a wake-up.
  std::lock_guard lk(mu_);
  if (!inflight_.empty()) done_cv_.notify_one();
}

void CommandProcessor::seal(bool notify) {
  if (!cur_.token) cur_.submit_ns = now_ns();  // applied without waiting on the device
  open_ = false;
  commands_ = 0;
  std::lock_guard lk(mu_);
  inflight_.push_back(std::move(cur_));
  if (spare_.empty()) {
    cur_ = Segment{};
  } else {  // its lists keep their capacity: no allocation per segment
    cur_ = std::move(spare_.back());
    spare_.pop_back();
  }
  if (notify) done_cv_.notify_one();
}

// --- Completion ---

// Segments finish in the order they were submitted; whichever thread sees one finished applies it
// (complete_mu_ keeps that in order): the completion thread, or a host thread waiting on one of the
// queue's signals (wait_for), so that it wakes straight from the driver. The recording thread leaves
// completions alone (it is the one that limits eager throughput), except for a segment never submitted
// that nothing is in flight before (flush).
void CommandProcessor::complete() {
  std::unique_lock lk(mu_);
  for (;;) {
    done_cv_.wait(lk, [&] { return stop_ || abandoned_ || !inflight_.empty(); });
    if (abandoned_ || (stop_ && inflight_.empty())) return;
    const uint64_t token = inflight_.front().token;
    lk.unlock();
    std::shared_ptr<std::string> error = token ? wait_device(token) : nullptr;
    uint64_t reached = token;
    if (token && !error) reached = std::max(token, finished_segment());  // later segments may be done too
    {
      std::lock_guard c(complete_mu_);
      drain(reached, error);
    }
    lk.lock();
  }
}

// Applies the segments at the front of inflight_ that are done: token <= `reached` (0: a segment that
// was never submitted). `error` (the wait for `reached` failed) fails the first submitted one. Called
// with complete_mu_ held.
void CommandProcessor::drain(uint64_t reached, std::shared_ptr<std::string> error) {
  for (;;) {
    Segment s;
    {
      std::lock_guard lk(mu_);
      if (abandoned_ || inflight_.empty()) return;  // abandoned: the device failed its signals
      const Segment& f = inflight_.front();
      if (f.token > reached) return;
      s = std::move(inflight_.front());
      inflight_.pop_front();
      last_done_ns_ = now_ns();
    }
    // `error` is the failure of the first segment that was submitted; one never submitted has none.
    apply(s, s.token ? error : nullptr);
    if (!s.host_only) recycle_segment(s.token);
    if (s.token) error = nullptr;
    s.completions.clear();
    s.programs.clear();
    s.token = s.submit_ns = 0;
    s.host_only = false;
    std::lock_guard lk(mu_);
    // Not one grown by a long submission (a profiled graph): its lists would stay that large.
    if (spare_.size() < kSpareSegments && s.completions.capacity() <= kSpareCapacity &&
        s.programs.capacity() <= kSpareCapacity)
      spare_.push_back(std::move(s));
    cv_.notify_all();
  }
}

bool CommandProcessor::complete_now(uint64_t token) {
  auto ready = [&] {
    std::lock_guard lk(mu_);
    if (abandoned_ || inflight_.empty() || inflight_.front().token != token) return false;
    for (const Completion& x : inflight_.front().completions)  // a device-held wait not yet resolved
      if (x.kind == Completion::Waited && x.signal.value() < x.value && !x.signal.failed()) return false;
    return true;
  };
  bool applied = false;
  {
    std::unique_lock c(complete_mu_, std::try_to_lock);
    if (!c.owns_lock()) return false;
    if (ready()) drain(token, nullptr), applied = true;
  }
  apply_host_only();
  return applied;
}

// Called by a thread other than the completion thread right after it let complete_mu_ go: a segment
// never submitted that became first in line meanwhile found the lock taken (flush) and was left to the
// holder, and the completion thread may be asleep in the backend's wait for a later segment.
void CommandProcessor::apply_host_only() {
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (abandoned_ || inflight_.empty() || inflight_.front().token != 0) return;
    }
    std::unique_lock c(complete_mu_, std::try_to_lock);
    if (!c.owns_lock()) return;  // its holder looks again once it lets go
    drain(0, nullptr);
  }
}

// Waits for segment `token`; returns an error if the device failed (a fatal one: later work fails too).
std::shared_ptr<std::string> CommandProcessor::wait_device(uint64_t token) {
  for (;;) {
    std::string error;
    if (wait_segment(token, kPoll, error)) return nullptr;
    if (!error.empty()) return failure(error);
    std::lock_guard lk(mu_);
    // Abandoned, or applied meanwhile by another thread (wait_for, complete_now).
    if (abandoned_ || inflight_.empty() || inflight_.front().token != token) return nullptr;
  }
}

void CommandProcessor::apply(Segment& s, const std::shared_ptr<std::string>& error) {
  const uint64_t done = now_ns();
  auto ns_of = [&](uint32_t m) -> uint64_t {
    if (m == kNoMark || error) return done;
    const uint64_t t = mark_ns(m);
    return t ? std::clamp(t, s.submit_ns, done) : done;
  };
  std::string skipped;  // the error of a failed device-held wait: its submission's later signals fail
  for (const Completion& c : s.completions) {
    switch (c.kind) {
      case Completion::Signal:
        if (error)
          c.signal.fail(*error);
        else if (!skipped.empty())
          c.signal.fail(skipped);
        else
          c.signal.device_write(c.value, ns_of(c.marks.start));
        break;
      case Completion::Timestamp:
        if (!error && skipped.empty()) c.signal.device_timestamp(ns_of(c.marks.start));
        break;
      case Completion::Waited:
        // The device ran past the wait, so the signal's writer ran too; its completion (on another queue
        // perhaps) says whether it was written or failed. An abandoned writer fails it.
        while (!error && skipped.empty() && !c.signal.wait_until(c.value, Clock::now() + kPoll) &&
               !abandoned_) {}
        if (!error && skipped.empty() && c.signal.failed()) skipped = c.signal.error();
        break;
      case Completion::Fail: c.signal.fail(c.error ? *c.error : std::string("[submit] failed")); break;
      case Completion::Profile:
        if (!error) record(c.program, ns_of(c.marks.start), ns_of(c.marks.end), c.value, c.submission, c.at);
        break;
      case Completion::Retire:
        cfg_.retire(c.value, done);
        skipped.clear();
        break;
    }
  }
}

}  // namespace sluice::hcq
