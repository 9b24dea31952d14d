#pragma once
// hcq::Device — one device and its timeline (DESIGN.md §4). Backends derive from it; users get one from
// a backend's factory (`cpu::open_device(0)`).
//
// Timeline
// - The device owns a timeline Signal and the next timeline value. Every submission is handed the next
//   value and ends by signalling it, and the device keeps the timeline in order across its queues: value
//   v reached means submission v and every earlier one are done with (finished, or skipped because a
//   wait failed). So `timeline().value() >= b.last_use` is "the device no longer touches buffer b", and
//   synchronize() waits for the last value handed out.
// - The timeline is a Signal like any other: other devices' queues may wait on it.
//
// Queues
// - queue_count(kind) hardware queues of each kind; a HwQueue(kind, index) is submitted to queue `index`
//   of its kind. Queues of a device run concurrently (a copy overlaps a kernel); within a queue,
//   submissions run in order (queue.h).
// - submit(q) is thread-safe: any number of threads may submit to a device at once; submissions to one
//   hardware queue run in the order their submit calls took the queue. It blocks only while the
//   device's command ring is full. Throws Error for a queue index the device does not have or a program
//   loaded on another device. Returns the timeline value of the submission.
//
// Hangs and faults
// - Waits without a caller-given timeout (Signal::wait(v), synchronize(), and so every runtime wait) never
//   give up on work that advances: they wait in slices, and after each slice they ask the signal's
//   device to explain_stall(). They fail when that declares a queue they depend on hung (FaultError with
//   the hang's description), or with TimeoutError when, for max(kDefaultTimeout, hang_timeout()), the
//   signal did not move while the device ran nothing it watches (busy() false: its queues wait on a
//   signal nothing sets, or the device cannot tell what its queues run). A wait with a
//   caller-given timeout (Signal::wait(v, t)) gives up after t and then asks explain_stall() once.
// - explain_stall() describes what each queue is doing and declares a queue hung once its kernel has gone
//   hang_timeout() without progress. Progress is what the device can observe: the CPU device counts the
//   parts of a kernel's grid its threads complete, so a kernel whose count still advances is slow, not
//   stuck; devices that cannot look inside a kernel (VULKAN, CUDA, HIP, CL) count from its segment's
//   start (command_processor.h). A hung queue is reset (its threads, or the driver's queue, are
//   abandoned to finish in the background: neither a CPU thread nor a GPU dispatch can be stopped),
//   every signal its pending submissions would have written is failed with the hang's description, and
//   the timeline is failed and replaced by a fresh one that continues from timeline_value(), so the
//   device keeps accepting work. References to the old timeline stay valid (it stays failed).
// - hang_timeout(): $SLUICE_HANG_TIMEOUT seconds (0 or "off": never declare a kernel hung) when the
//   device is built, else 10 s; set_hang_timeout() changes it (sluice::set_hang_timeout does for every
//   device the runtime opens). Zero or less means never, and hang_timeout() then reads kNoHangTimeout.
//   A value of the variable that is not a number of seconds makes the device's constructor throw
//   ValueError naming the variable and the value.
// - Faults that a backend detects asynchronously surface the same way: as failed signals.
//
// Ownership and threading: the caller owns the Device; it owns its allocator, compiler, timeline and
// queues. Programs and signals it creates must be destroyed before it. Destroying a device waits for its
// queues to finish their submitted work, bounded by the hang timeout; a submission held on a wait that
// nothing can satisfy any more (a host signal never set) fails with "[~Device] <dev> was destroyed while
// <queue> waited for signal ..." instead. Every member is thread-safe unless it says otherwise.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hcq/allocator.h"
#include "hcq/compiler.h"
#include "hcq/profile.h"
#include "hcq/program.h"
#include "hcq/queue.h"
#include "hcq/retirement.h"
#include "hcq/signal.h"

namespace sluice::hcq {

// hang_timeout() of a device that never declares a kernel hung: a hundred years, never in practice, and
// still safe to add to a clock reading.
inline constexpr std::chrono::nanoseconds kNoHangTimeout = std::chrono::hours(24 * 365 * 100);

// What a device is, for `sluice devices` and for codegen's limits (a backend's target() reads these).
struct Properties {
  std::string device_name;     // the hardware's own name ("NVIDIA H100", "llvmpipe (LLVM 15.0.6, 256 bits)")
  std::string vendor;          // "NVIDIA", "AMD", "Intel", "Mesa", "host"
  std::string driver_version;  // as the driver reports it; "" when there is no driver
  uint64_t memory_bytes = 0;   // device memory (host RAM for host devices)
  uint32_t max_workgroup_size = 1;  // work-items per work-group
  uint64_t local_memory_bytes = 0;  // shared memory per work-group (0: none)
  uint32_t max_buffers = 0;         // buffers one kernel may take (0: no limit)
  bool float16 = false, bfloat16 = false, int64 = true, float64 = true;  // dtypes kernels may use
  bool software = false;  // a GPU API emulated on the host's CPU (lavapipe, PoCL's CPU device)
  // Device addresses are host pointers (the CPU device): the host reads buffers in place, and memory the
  // host owns can be used as a buffer without a copy (Buffer::adopt).
  bool host_addressable = false;
};

class Device {
 public:
  virtual ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return name_; }  // "CPU", "CPU:1", "NULL"

  Signal& timeline() const { return *timeline_.load(std::memory_order_acquire); }
  uint64_t timeline_value() const { return timeline_value_.load(std::memory_order_acquire); }
  // Waits for every submission so far; TimeoutError / FaultError as Signal::wait (with or without a
  // timeout: "Hangs and faults").
  void synchronize() const;
  void synchronize(std::chrono::nanoseconds timeout) const;

  virtual Properties properties() const = 0;

  uint32_t queue_count(QueueKind k) const { return k == QueueKind::Compute ? compute_queues_ : copy_queues_; }
  uint64_t submit(const HwQueue& q);
  // submit(q) for the replay of hcq::Graph `graph` (its id()), which q is the recorded queue of: a
  // backend with a native graph form uses it (graph.h). forget_graph: the graph is gone; drop that form.
  uint64_t submit_graph(const HwQueue& q, uint64_t graph);
  virtual void forget_graph(uint64_t graph) { (void)graph; }

  Allocator& allocator() const { return *allocator_; }
  Compiler& compiler() const { return *compiler_; }
  // Loads kernel `name` from a binary of this device's compiler. Throws Error if it is not there.
  virtual std::unique_ptr<Program> load_program(const std::string& name, const Binary& binary,
                                                KernelLayout layout) = 0;
  // A signal that names this device in its errors (signal.h).
  std::unique_ptr<Signal> new_signal(std::string name, uint64_t initial = 0) {
    return std::make_unique<Signal>(std::move(name), initial, this);
  }

  void set_profiling(bool on) { profiling_.store(on, std::memory_order_relaxed); }
  bool profiling() const { return profiling_.load(std::memory_order_relaxed); }
  std::vector<ProfileRecord> take_profile();  // every record since the last call, in completion order

  // How long a kernel may go without progress before a wait declares it hung ("Hangs and faults").
  std::chrono::nanoseconds hang_timeout() const { return std::chrono::nanoseconds(hang_timeout_ns_.load()); }
  void set_hang_timeout(std::chrono::nanoseconds t) {
    hang_timeout_ns_.store(t > std::chrono::nanoseconds::zero() ? t.count() : kNoHangTimeout.count());
  }

  // Called by Signal::wait when a wait on `s` (owned by this device) for `value` has not finished: returns
  // what the device's queues are doing (empty if nothing to say) and handles a hang as described above.
  virtual std::string explain_stall(const Signal& s, uint64_t value) = 0;
  // Whether a queue runs work that explain_stall() watches for hangs: while true, a wait without a
  // timeout keeps waiting. The default (false) suits a device that cannot tell.
  virtual bool busy() { return false; }
  // Called by Signal::wait on a signal this device owns before the waiting thread sleeps: a backend whose
  // queues complete through a driver primitive may block in it here (until `deadline` at most) and apply
  // the completion on the waiting thread, so the waiter wakes straight from the driver rather than
  // through a completion thread. The default does nothing. Must not throw: failures land on signals.
  virtual void wait_in_driver(const Signal& s, uint64_t value, Clock::time_point deadline) {
    (void)s, (void)value, (void)deadline;
  }

  // In-order retirement, for a backend's completion path: submission `value` is done (or failed) at
  // device time `timestamp_ns`. Submissions finish out of order across a device's queues; the timeline
  // passes a value once every value up to it is done, and is written once per advance. Thread-safe.
  void retire(uint64_t value, uint64_t timestamp_ns);

 protected:
  Device(std::string name, uint32_t compute_queues, uint32_t copy_queues);

  // The backend's submit: called after the queue's kind and index were checked.
  virtual uint64_t do_submit(const HwQueue& q) = 0;
  // The same for a graph's replay (submit_graph); the default runs it as any submission.
  virtual uint64_t do_submit_graph(const HwQueue& q, uint64_t graph) {
    (void)graph;
    return do_submit(q);
  }
  // Hands out the next timeline value. Backends call it under the lock that orders their ring, so that
  // values reach each hardware queue in increasing order.
  uint64_t next_timeline_value() { return timeline_value_.fetch_add(1, std::memory_order_acq_rel) + 1; }
  // After a hang: fails the current timeline with `error` and continues on a fresh signal whose value is
  // timeline_value(), every value handed out so far counting as retired. The caller must hold every lock
  // under which it calls next_timeline_value().
  void replace_timeline(const std::string& error);
  void add_profile(ProfileRecord r);
  void check_submit(const HwQueue& q) const;  // the queue index, and programs loaded on this device
  friend class Allocator;                     // records its copyin/copyout while the device profiles

  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<Compiler> compiler_;

 private:
  std::string name_;
  uint32_t compute_queues_, copy_queues_;
  std::atomic<Signal*> timeline_;
  // The submitting threads write timeline_value_, the queues' threads the retirement: each on cache lines
  // of its own, which nothing the other side reads shares (profiling_ is read for every submission), since
  // a line that changes hands costs more than launching a tiny kernel.
  alignas(64) std::atomic<uint64_t> timeline_value_{0};
  // The current timeline last; replaced ones stay alive.
  alignas(64) std::vector<std::unique_ptr<Signal>> timelines_;
  std::atomic<bool> profiling_{false};
  std::atomic<int64_t> hang_timeout_ns_;
  std::mutex mu_;  // timelines_, profile_
  std::vector<ProfileRecord> profile_;
  Retirement retire_{timeline_};  // retire()
};

}  // namespace sluice::hcq
