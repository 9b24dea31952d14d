#pragma once
// hcq::CommandProcessor — the runtime side of one hardware queue, written once for every backend that
// records into a driver's queue (DESIGN.md §4). A backend derives from it and supplies only an encoder
// (exec, copy, barrier, time marks, a native graph form) and its completion primitive (submit a segment,
// wait for one, read a mark's time); everything the contract of hcq/queue.h says about waits, failures,
// completion and retirement lives here:
//
// - Submissions run in push order. One thread records at a time: the pusher itself when the queue is
//   idle and no wait of the submission can block (each is met, failed or one the encoder can put on the
//   device: the fast path; it records within the submit call, so it reads the packets' signals in
//   place, SubmissionSignals::live), else the queue's worker thread, which takes submissions from a ring
//   of packet words (submission_ring.h). A third: the thread that records a write of a signal for
//   another queue of the device (written()) records that queue's next submissions itself once they
//   cannot block any more, if its worker has not started on them (drive()), so that the dependency
//   never waits for that worker to wake up.
// - An encoder that executes each command before it returns (Config::executes: the CPU device runs it,
//   NULL has nothing to run) needs no segments: what the walk reaches is applied as it is reached, on
//   the recording thread (signal writes and timestamps at that moment, a profile record around each
//   command, the retirement at the submission's end). Where its commands take time (Config::
//   pusher_records_work false: the CPU's), only a submission without kernels or copies takes the fast
//   path: a kernel that does not end must not hold the submitter.
// - Packets are walked once (packet::each). A met wait costs nothing; a wait the backend can put on the
//   device (encode_wait) stays there, and its submission's later signals are written only if the signal
//   it waited for was reached, not failed (the completion waits for that signal's own completion); any
//   other wait submits what was recorded so far and blocks the worker on the host until the signal
//   reaches the value or fails, or until the backend reports a write of that signal recorded on another
//   queue (retry_wait) and encode_wait takes it after all. A submission that starts with such a wait
//   is not taken from the ring meanwhile (the worker waits for the signal without recording), so the
//   thread that records the signal's writer may record it (written()). After a failed wait (or a command
//   the backend could not record) the rest of the submission is skipped and every signal it would have
//   written fails with that error; the submission still retires in order.
// - Recorded work goes to the device in segments (submit_segment) of at most Config::segment_commands
//   kernels and copies, so a queue's progress is seen part by part. A segment with nothing for the
//   device (an empty submission, or signals the encoder puts no mark for) is never submitted: it is
//   applied once the segments before it are, on the recording thread when none is in flight. Each segment
//   carries its completion list: signal writes, timestamps, failures, profile records and the timeline
//   retirement, in record order. The completion thread waits for the oldest segment (wait_segment) and
//   applies its list in that order, with every time read from the segment's marks and clamped into the window
//   in which the host saw the segment run ([submit, done]): a calibration error never puts a device time
//   before the submit or after the host saw it done. A signal recorded before a timestamp of the same signal
//   keeps the timestamp's time, on every backend.
// - A host thread waiting on a signal a segment writes may wait for that segment itself (wait_for,
//   Device::wait_in_driver) and apply it, so it wakes straight from the driver.
// - Bounded: at most Config::max_segments segments in flight; recording the next waits for one to
//   retire, so a caller that never waits holds bounded memory.
// - status() describes the queue for Device::explain_stall (queue_status.h); abandon() gives a hung
//   queue up (its threads stop touching signals and the timeline); close()/shutdown() end it without a
//   hang (a host wait nobody can meet any more fails, a GPU that does not finish within the hang timeout
//   ends the drain).
// - A backend error the backend calls fatal (a lost device, a sticky fault) fails the work in flight and
//   every later submission with that error; the queue keeps retiring, so no wait hangs.
//
// Signal lifetime (signal.h): push() takes a SignalRef to every signal the submission names; the
// threads use only those, so a signal destroyed while its submission is pending is never touched.
//
// Threading: push() under the device's submit lock of this queue; status(), abandon(), wait_for(),
// quiet(), close(), forget_graph() from any thread; shutdown() from one thread at a time. A derived class
// calls start() last in its constructor and shutdown() first in its destructor.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hcq/profile.h"
#include "hcq/queue.h"
#include "hcq/queue_status.h"
#include "hcq/signal.h"
#include "hcq/submission_ring.h"

namespace sluice::hcq {

// Owned through a std::shared_ptr: an executing queue abandoned while its thread runs a kernel that may
// never end keeps itself alive until that thread leaves.
class CommandProcessor : public std::enable_shared_from_this<CommandProcessor> {
 public:
  // How often a blocked thread (the processor's, or a backend's) looks at the stop and abandon flags.
  static constexpr std::chrono::milliseconds kPoll{50};
  struct Config {
    std::string device_name, queue_name;  // "VULKAN", "compute:0"
    std::function<bool()> profiling;
    std::function<void(ProfileRecord)> profile;
    std::function<void(uint64_t value, uint64_t ns)> retire;  // submission `value` is done (Device::retire)
    std::function<std::chrono::nanoseconds()> hang_timeout;   // the device's (device.h)
    // Every queue of the device is quiet() (below): nothing of it can write a signal without the host.
    std::function<bool()> settled;
    size_t max_segments = 1024;
    // Kernels and copies per segment: a long submission goes to the device in parts, so the device starts
    // on it sooner and a slow one shows progress part by part (status(): a queue runs its oldest segment
    // since the one before it finished; a hang is that time past the hang timeout). A native graph
    // replay is one segment.
    size_t segment_commands = 16;
    // The encoder runs each command before it returns (above); it is not asked for waits or graphs
    // (encode_wait, encode_graph): a wait not met is held on the host, a replay runs its packets.
    bool executes = false;
    // The fast path may record kernels and copies. Where it may not (the CPU's), the worker runs them
    // and spins a while for the next submission before it sleeps; elsewhere the pusher records whatever
    // it can, and a spinning worker would take a core from the driver threads (lavapipe's, PoCL's) that
    // do the work, so it sleeps at once.
    bool pusher_records_work = true;
    uint64_t ring_words = 1u << 14;  // the submission ring (a power of two)
  };

  virtual ~CommandProcessor();
  CommandProcessor(const CommandProcessor&) = delete;
  CommandProcessor& operator=(const CommandProcessor&) = delete;

  // Submission `timeline_value` (q's packets); `graph`: the hcq::Graph it replays (its id,
  // Device::submit_graph), 0 for none.
  void push(const HwQueue& q, uint64_t timeline_value, uint64_t graph);
  // The hcq::Graph is gone: the recording thread drops its native form (drop_graph) before it next records.
  void forget_graph(uint64_t graph);
  QueueStatus status();  // token: the oldest unfinished segment
  // Marks the queue abandoned if segment `token` is still the oldest unfinished one; its threads stop
  // touching signals and the timeline. Returns false if that segment finished meanwhile.
  bool abandon(uint64_t token);
  // After abandon(): every signal the queue's unfinished work would have written.
  std::vector<SignalRef> dropped_signals();
  // If a submitted segment writes `s` >= `value` (or retires timeline value `timeline_value`, when
  // non-zero), waits for it on the calling thread (until `deadline` at most) and applies what finished.
  // Never throws.
  void wait_for(const Signal& s, uint64_t value, uint64_t timeline_value, Clock::time_point deadline);
  // Device destruction (never a hang), in two steps so that every queue of the device closes before any
  // drains (a wait on one may be met by another's work):
  // - close(): from now on a host wait of the worker gives up once its signal is not reached and the
  //   device is settled (Config::settled): only the host could still write it, and a destructor does not
  //   wait for the host. The submission fails as a failed wait does, with `[~Device] VULKAN was
  //   destroyed while compute:0 waited for signal '<name>' to reach <v>`.
  // - shutdown(): drains the queue and stops its threads. A segment the device keeps for longer than the
  //   hang timeout ends the drain: the queue's unfinished signals fail, and shutdown() returns false (the
  //   backend then leaves what the device may still use alive). Repeated calls return the first answer.
  void close();
  bool shutdown();
  // Nothing on this queue progresses without the host: no segment in flight, and the worker idle or
  // blocked on a signal that is not reached; or shutdown() gave its work up. Takes only this queue's lock.
  bool quiet();
  // A write of `s` was just recorded on another queue of the device: a wait for it that this queue holds
  // on the host is offered to encode_wait again, so the dependency goes to the device instead of
  // costing a round trip through the host. Any thread; takes no lock of this queue.
  void retry_wait(const SignalRef& s) {
    retry_ = true;
    s.wake();
  }
  // The device's other queue, which written() tells (ProcessorDevice pairs its queues, and again after
  // a reset replaced one). It outlives this queue's threads: a device keeps every queue it made, replaced
  // ones too, until all have stopped.
  void pair_with(CommandProcessor* other) { sibling_.store(other, std::memory_order_release); }

 protected:
  explicit CommandProcessor(Config cfg);
  // Starts the worker and completion threads. `worker` false: no worker (a test's queue that only the
  // fast path and drive() record).
  void start(bool worker = true);

  static constexpr uint32_t kNoMark = UINT32_MAX;
  struct Marks {  // a profiled command's start and end
    uint32_t start = kNoMark, end = kNoMark;
  };
  // For a backend: what each mark it handed out stands for (an event; an event and which of its times),
  // until mark_ns reads it. Ids skip kNoMark when they wrap; a segment keeps the ids it took, dropped
  // when it is recycled. Not locked: the backend's lock around its segments covers it.
  template <class T>
  class MarkTable {
   public:
    uint32_t add(T what, std::vector<uint32_t>& segment) {  // also recorded in the segment's ids
      const uint32_t m = next_++;
      if (next_ == kNoMark) next_ = 0;
      marks_[m] = std::move(what);
      segment.push_back(m);
      return m;
    }
    const T* find(uint32_t m) const {
      auto it = marks_.find(m);
      return it == marks_.end() ? nullptr : &it->second;
    }
    void drop(const std::vector<uint32_t>& segment) {
      for (uint32_t m : segment) marks_.erase(m);
    }

   private:
    std::unordered_map<uint32_t, T> marks_;
    uint32_t next_ = 0;
  };

  // --- The encoder: called by the recording thread only. Each records into the open segment, which
  // the backend begins on its first command. They throw on failure (the submission's rest is skipped).
  // `timing`: non-null while profiling; the backend sets marks around the command where it has them.
  virtual void encode_exec(const packet::ExecView& e, Marks* timing) = 0;
  virtual void encode_copy(uint64_t dst, uint64_t src, uint64_t size, Marks* timing) = 0;
  virtual void encode_barrier() = 0;
  // A time mark at this point for a signal or timestamp; kNoMark: its time is when the segment is seen
  // done.
  virtual uint32_t encode_mark() { return kNoMark; }
  // The same for signal(s, value), where a backend also writes the value on the device (a word other
  // work of the device awaits: encode_wait).
  virtual uint32_t encode_signal(const SignalRef& s, uint64_t value) {
    (void)s, (void)value;
    return encode_mark();
  }
  // A wait the device itself can hold (true: recorded; false: the processor holds it on the host).
  virtual bool encode_wait(const SignalRef& s, uint64_t value) {
    (void)s, (void)value;
    return false;
  }
  // Whether encode_wait would take this wait now (its writer is recorded), recording nothing: a
  // submission whose waits all pass may be recorded by a thread that must not block (the pusher, or
  // another queue's recording thread), and the worker takes a submission that starts with a wait only
  // once this or the signal says it cannot block. An encoder with encode_wait answers it too. Called by
  // any thread; true must stay true until the signal is reached or failed.
  virtual bool can_encode_wait(const SignalRef& s, uint64_t value) {
    (void)s, (void)value;
    return false;
  }
  // Records the whole replay of hcq::Graph `graph` (its packets `words`) in the backend's native graph
  // form; false: the packets are recorded one by one. `programs`: the kernels it runs (status()).
  virtual bool encode_graph(uint64_t graph, std::span<const uint64_t> words,
                            std::vector<const Program*>& programs) {
    (void)graph, (void)words, (void)programs;
    return false;
  }
  virtual void drop_graph(uint64_t graph) { (void)graph; }
  // Submits the open segment (something was recorded in it, or a discarded segment's commands were
  // enqueued before: it then marks their completion point) and returns its token: > 0, increasing. Throws on
  // failure; then discard_segment() follows. Never called when Config::executes.
  virtual uint64_t submit_segment() { return 0; }
  // The open segment will not run (a command failed, or submit_segment threw): its commands and marks
  // are void. It still completes in order, as a segment that was never submitted (token 0).
  virtual void discard_segment() {}
  // Whether error `e` (thrown by the encoder, or returned by wait_segment) leaves the queue unusable: the
  // work in flight and every later submission fail with it. Otherwise only its submission (or segment)
  // fails.
  virtual bool fatal(const std::string& e) const {
    (void)e;
    return false;
  }

  // --- Completion: the completion thread, or a host thread in wait_for (one at a time per segment).
  // Waits up to `slice` for segment `token` to finish: true when it did; an error string fails it.
  virtual bool wait_segment(uint64_t token, std::chrono::nanoseconds slice, std::string& error) {
    (void)token, (void)slice, (void)error;
    return true;
  }
  // The newest token known finished (later segments may be done when an earlier one is seen).
  virtual uint64_t finished_segment() { return 0; }
  // Host-clock ns of mark `m` of a finished segment; 0: unknown (the done time is used).
  virtual uint64_t mark_ns(uint32_t m) {
    (void)m;
    return 0;
  }
  // Segment `token` is in flight now (the recording thread, right after submit_segment): a backend whose
  // driver may report completion before that (complete_now would find nothing) completes it here.
  virtual void sealed(uint64_t token) { (void)token; }
  // Segment `token` (0: a discarded one) was applied: its resources may be reused. In segment order.
  virtual void recycle_segment(uint64_t token) { (void)token; }

  // --- An executing encoder (Config::executes), from any thread ---
  // The command running now, for status(): fills the Running fields (token included) and returns true;
  // false when none runs.
  virtual bool executing(QueueStatus& st) const {
    (void)st;
    return false;
  }
  // Gives up the command `token` names if it still runs (abandon()): false if it finished meanwhile.
  // The recording thread, back from it, waits for abandoned() before it returns.
  virtual bool abandon_executing(uint64_t token) {
    (void)token;
    return false;
  }

  // For a backend whose driver reports completion in a callback: applies segment `token` on the calling
  // thread if it is the oldest in flight and nothing in it may block (no device-held wait unresolved),
  // and returns true (token 0: the segments first in line that were never submitted); false (another thread
  // is applying, or it must wait) leaves it to the completion thread. Never blocks. Host waiters are then
  // woken by the signal writes themselves.
  bool complete_now(uint64_t token);
  // For the encoder: submit what was recorded so far (it needs room, e.g. for marks); may block while
  // max_segments are in flight. Recording thread only.
  void flush();
  // For the encoder (encode_signal): a write of `s` that the device's other queue (pair_with) may wait
  // for was just recorded. That queue offers a wait for it that it holds on the host to encode_wait again
  // (retry_wait); and once this thread has recorded the current submission, it records that queue's next
  // submissions itself if its worker has not started on them and none can block (drive()). Its worker
  // is woken only after that, so that it does not take them first.
  void written(const SignalRef& s);
  bool abandoned() const { return abandoned_.load(); }
  const Config& config() const { return cfg_; }
  uint64_t submission() const { return tv_; }  // the timeline value of the submission being recorded
  // While encode_exec/encode_copy run: a signal or timestamp follows the command (barriers aside), or it
  // ends its submission, so its completion time will be asked for (a backend that gives a command an
  // event only when needed gives it one now).
  bool mark_follows() const { return mark_follows_; }
  uint64_t last_submitted() const { return submitted_; }  // recording thread only

 private:
  struct Completion {
    // Waited: a wait the device holds (encode_wait); its signal must be reached, not failed, for the
    // rest of its submission's signals to be written.
    enum Kind : uint8_t { Signal, Timestamp, Fail, Profile, Waited, Retire };
    explicit Completion(Kind k, SignalRef s = {}, uint64_t v = 0) : kind(k), signal(std::move(s)), value(v) {}
    Kind kind;
    SignalRef signal;                    // Signal, Timestamp, Fail, Waited
    uint64_t value = 0;                  // Signal, Waited, Retire: the value; Profile: bytes
    Marks marks;                         // Signal, Timestamp: start; Profile: both
    const Program* program = nullptr;    // Profile: null for a copy
    std::shared_ptr<std::string> error;  // Fail
    uint64_t submission = 0;             // Profile: the command's timeline value and packet offset
    uint32_t at = 0;
  };
  struct Segment {
    uint64_t token = 0;  // 0: never submitted (applied once the one before it is)
    // Nothing for the device (flush): the backend never saw it, so it has nothing to recycle.
    bool host_only = false;
    uint64_t submit_ns = 0;
    std::vector<Completion> completions;
    std::vector<const Program*> programs;
  };
  bool recordable(std::span<const uint64_t> words, const SubmissionSignals& signals);
  bool blocked_first(std::span<const uint64_t> words, const SubmissionSignals& signals, SignalRef& s,
                     uint64_t& v);
  void work();
  bool wait_first(const SignalRef& s, uint64_t v, std::unique_lock<std::mutex>& consume);
  enum class Held { Reached, Retry, GivenUp, Abandoned };  // how a host wait ended (reached: or failed)
  Held hold(const SignalRef& s, uint64_t v);
  void release(SubmissionRing::Entry& e);
  void drive();
  void drive_told();
  void wake_told();
  void process(std::span<const uint64_t> words, uint64_t tv, const SubmissionSignals& signals,
               uint64_t graph);
  void execute(std::span<const uint64_t> words, uint64_t tv, const SubmissionSignals& signals);
  std::shared_ptr<std::string> begin_submission();
  std::shared_ptr<std::string> host_wait(const SignalRef& s, uint64_t v);
  void record(const Program* program, uint64_t t0, uint64_t t1, uint64_t bytes, uint64_t submission,
              uint32_t at);
  void profiled(Marks timing, const Program* program, uint64_t bytes);  // a Profile completion
  static bool mark_follows_after(std::span<const uint64_t> w, size_t at);
  // An error that fails a submission; a fatal() or `sticky` one fails every later one too.
  std::shared_ptr<std::string> failure(const std::string& e, bool sticky = false);
  void seal(bool notify = true);  // hands the open segment to the completion thread (token set)
  void complete();
  void drain(uint64_t reached, std::shared_ptr<std::string> error);
  void apply_host_only();
  std::shared_ptr<std::string> wait_device(uint64_t token);
  void apply(Segment& s, const std::shared_ptr<std::string>& error);
  void notify_all();

  Config cfg_;
  // Recording state: touched only by the thread that holds busy_.
  Segment cur_;
  bool open_ = false;    // cur_ goes to the device: the backend recorded in it (discarded or not)
  size_t commands_ = 0;  // kernels and copies in cur_
  bool mark_follows_ = false;
  uint64_t submitted_ = 0;  // the token of the last submitted segment
  uint64_t tv_ = 0;         // the packet being recorded: its submission's timeline value, its offset
  uint32_t at_ = 0;
  // What written() reported for the other queue (pair_with) since this thread last drove it (drive_told):
  // the signals whose waiters are woken after the drive; none, no drive.
  std::vector<SignalRef> told_signals_;
  // Held by the thread that takes submissions from the ring and records them: the worker, except while it
  // waits for one or for the first wait of the next (wait_first), when drive() may take it.
  std::mutex consume_mu_;
  // The ring's submission being recorded. dropped_signals() reads it and at_ from another thread
  // only after abandon_executing() took the running command's token, which the backend published after
  // these were written (a release the taking acquires), and the worker writes neither again until it
  // leaves (under mu_).
  SubmissionRing::Entry* entry_ = nullptr;

  std::mutex mu_;  // everything below
  // Each waiter has its own condition variable, so a notification wakes only the thread it is for.
  std::condition_variable done_cv_;  // the completion thread: inflight_, stop_, abandoned_
  std::condition_variable cv_;       // the rest: segments freed, the queue drained (shutdown)
  SubmissionRing ring_;
  std::atomic<bool> ring_stop_{false};  // the worker drains the ring, then stops
  std::atomic<bool> forgot_{false};     // forgotten_ is not empty
  std::vector<uint64_t> forgotten_;     // hcq::Graphs destroyed, for the recording thread to drop
  std::atomic<bool> busy_{false};       // a pusher records (the fast path); written without mu_
  bool stop_ = false;
  std::shared_ptr<CommandProcessor> keepalive_;  // an abandoned executing queue's, until its thread leaves
  std::atomic<bool> worker_left_{false};
  std::atomic<bool> abandoned_{false};
  std::atomic<bool> closing_{false};   // close(): host waits give up once the device is settled
  std::atomic<bool> given_up_{false};  // shutdown() gave up on work the device did not finish
  bool started_ = false;
  bool shut_ = false, clean_ = true;  // shutdown() ran; its answer (one thread at a time)
  SignalRef waiting_on_;
  uint64_t waiting_for_ = 0;
  std::atomic<CommandProcessor*> sibling_{nullptr};
  std::atomic<bool> retry_{false};  // retry_wait() since the worker last offered its held wait
  std::deque<Segment> inflight_;
  // Applied segments, emptied, for the recording thread to fill again (seal).
  static constexpr size_t kSpareSegments = 4, kSpareCapacity = 1024;
  std::vector<Segment> spare_;
  std::shared_ptr<std::string> lost_;  // set once a fatal error happened: later work fails with it
  uint64_t last_done_ns_ = 0;
  std::mutex complete_mu_;  // held while applying finished segments (drain)
  std::thread worker_, completer_;
};

}  // namespace sluice::hcq
