#pragma once
// hcq::HwQueue — commands recorded by chaining, then submitted to a device (DESIGN.md §4):
//
//   hcq::HwQueue q;                                   // a compute queue
//   q.wait(a, 1).exec(prog, {{x.addr, y.addr}, {n}}, {n}).signal(b, 2).submit(dev);
//
// Semantics
// - A device's hardware queue runs submissions in submit order and the commands of a submission in
//   record order. `exec` dispatches a kernel; a later command starts after it finished (the CPU device
//   and NULL never overlap commands of one queue); `memory_barrier` makes every earlier write of the
//   queue visible to every later command and to the host, and is where a backend that overlaps
//   dispatches must drain.
// - wait(s, v): the queue stalls until s >= v. If s failed, the rest of the submission is skipped and
//   every signal it would have written is failed with s's error (failures propagate through waits).
// - signal(s, v): raises s to v (a smaller v leaves the value alone) once every earlier command of the
//   submission finished; also stores the device time into s's timestamp.
// - timestamp(s): stores the device time (host clock, ns) into s's timestamp; s's value is unchanged.
// - exec(p, args, global, local): runs p over `global` work-groups of `local` work-items; args must
//   match p's layout. Only on compute queues.
// - copy(dst, src, size): copies size bytes between device addresses (Buffer::addr + offset).
// - submit(dev) appends the device's timeline signal (device.h) and returns the timeline value that
//   marks this submission done. The recorded commands are copied at submit, so a queue can be submitted
//   any number of times, and patching it afterwards changes only later submissions, never one in flight.
// - Patching: every record call can hand back the command's handle (`Cmd* cmd`); patch_* rewrite wait
//   and signal values, kernel buffers and variables, launch sizes and copy addresses in place, without
//   re-recording. A handle of the wrong command kind or past the recorded commands throws Error; a
//   handle means something only to the queue whose record call returned it.
//
// Ownership and threading: a HwQueue is a plain value holding its commands; it refers to signals and
// programs by address, and those must outlive every submission that uses them. Recording and patching
// are not thread-safe; submitting the same unmodified queue from several threads is.
//
// Recorded form: commands are packets of 64-bit words (namespace packet below) that every backend reads;
// the CPU device copies them into its ring as they are.
#include <cstdint>
#include <iosfwd>
#include <span>
#include <vector>

#include "hcq/program.h"

namespace sluice::hcq {

class Device;
class Signal;

enum class QueueKind : uint8_t { Compute, Copy };
const char* queue_kind_name(QueueKind k);  // "compute", "copy"

struct Dims {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
  friend bool operator==(const Dims&, const Dims&) = default;
};
std::ostream& operator<<(std::ostream& os, Dims d);  // (x,y,z)

// The recorded packet format. Word 0 of a packet is its header: opcode in bits 0..7, packet length in
// words (header included) in bits 8..31. Pointers are stored as 64-bit integers.
//   Wait      [hdr][Signal*][value]
//   Signal    [hdr][Signal*][value]
//   Timestamp [hdr][Signal*]
//   Exec      [hdr][Program*][gx | gy<<32][gz | lx<<32][ly | lz<<32][nbufs | nvars<<32][buf]*nbufs
//             [var0 | var1<<32]...   (variables packed two per word)
//   Copy      [hdr][dst][src][size]
//   Barrier   [hdr]
namespace packet {
enum Op : uint8_t { Wait = 1, Signal = 2, Timestamp = 3, Exec = 4, Copy = 5, Barrier = 6 };
inline constexpr uint8_t kFirstBackendOp =
    0x80;  // opcodes from here on are a backend's own (ring padding...)
inline constexpr uint32_t kExecFixedWords = 6;
inline constexpr uint64_t header(uint8_t op, uint32_t words) { return op | uint64_t(words) << 8; }
inline constexpr uint8_t op(uint64_t hdr) { return uint8_t(hdr); }
inline constexpr uint32_t words(uint64_t hdr) { return uint32_t(hdr >> 8) & 0xffffff; }
// Its word 1 is a Signal* (what a queue keeps a SignalRef for).
inline constexpr bool names_signal(uint8_t op) { return op == Wait || op == Signal || op == Timestamp; }
template <class T>
T* ptr(uint64_t w) {
  return reinterpret_cast<T*>(uintptr_t(w));
}

// A decoded Exec packet.
struct ExecView {
  explicit ExecView(const uint64_t* p)
      : program(ptr<const hcq::Program>(p[1])),
        global{uint32_t(p[2]), uint32_t(p[2] >> 32), uint32_t(p[3])},
        local{uint32_t(p[3] >> 32), uint32_t(p[4]), uint32_t(p[4] >> 32)},
        nbufs(uint32_t(p[5])),
        nvars(uint32_t(p[5] >> 32)),
        bufs(p + kExecFixedWords),
        vars_(p + kExecFixedWords + nbufs) {}
  int32_t var(uint32_t i) const { return int32_t(uint32_t(vars_[i / 2] >> (32 * (i % 2)))); }

  const hcq::Program* program;
  Dims global, local;
  uint32_t nbufs, nvars;
  const uint64_t* bufs;

 private:
  const uint64_t* vars_;
};

// One recorded packet: its opcode, its words (p[0] is the header, then the fields above) and its offset
// in the recorded words (what a HwQueue::Cmd holds, and what SubmissionSignals::at is keyed by).
struct Ref {
  uint8_t op;
  const uint64_t* p;
  uint32_t at;
};
// The packets of recorded words in record order, the one walk over the format every reader uses:
//   for (packet::Ref r : packet::each(q.packets())) if (r.op == packet::Exec) ...
class Each {
 public:
  explicit Each(std::span<const uint64_t> w) : w_(w) {}
  struct iterator {
    std::span<const uint64_t> w;
    size_t at;
    Ref operator*() const { return {op(w[at]), &w[at], uint32_t(at)}; }
    iterator& operator++() {
      at += words(w[at]);
      return *this;
    }
    bool operator!=(const iterator& end) const { return at < end.at; }
  };
  iterator begin() const { return {w_, 0}; }
  iterator end() const { return {w_, w_.size()}; }

 private:
  std::span<const uint64_t> w_;
};
inline Each each(std::span<const uint64_t> w) { return Each(w); }
}  // namespace packet

class HwQueue {
 public:
  // A command's handle, for patch_*: its packet's offset in the recorded words.
  struct Cmd {
    uint32_t at = UINT32_MAX;
  };

  explicit HwQueue(QueueKind kind = QueueKind::Compute, uint32_t index = 0);

  QueueKind kind() const { return kind_; }
  uint32_t index() const { return index_; }  // which of the device's queues of this kind

  HwQueue& wait(const Signal& s, uint64_t value, Cmd* cmd = nullptr);
  HwQueue& signal(Signal& s, uint64_t value, Cmd* cmd = nullptr);
  HwQueue& timestamp(Signal& s, Cmd* cmd = nullptr);
  // Throws Error on a copy queue, on a zero launch dimension, or if args do not match p's layout.
  HwQueue& exec(const Program& p, const KernelArgs& args, Dims global, Dims local = {}, Cmd* cmd = nullptr);
  HwQueue& copy(uint64_t dst, uint64_t src, uint64_t size, Cmd* cmd = nullptr);
  HwQueue& memory_barrier(Cmd* cmd = nullptr);

  // Device::submit(*this): see device.h. Returns the timeline value that marks this submission done.
  uint64_t submit(Device& dev) const;

  void patch_value(Cmd wait_or_signal, uint64_t value);
  void patch_global(Cmd exec, Dims global);
  void patch_local(Cmd exec, Dims local);
  void patch_buf(Cmd exec, uint32_t i, uint64_t addr);
  void patch_var(Cmd exec, uint32_t i, int32_t value);
  void patch_copy(Cmd copy, uint64_t dst, uint64_t src, uint64_t size);

  std::span<const uint64_t> packets() const { return words_; }
  size_t size() const { return commands_; }  // commands recorded
  bool empty() const { return commands_ == 0; }
  // Every kernel recorded was loaded on `dev` (Device::submit's check, without a walk over the packets).
  bool programs_on(const Device& dev) const { return !mixed_ && (!device_ || device_ == &dev); }
  // Whether a command with opcode `op` was recorded (a submitter that looks for waits, or for work, needs
  // no walk over the packets of a queue that has none).
  bool holds(packet::Op op) const { return ops_ >> op & 1; }

 private:
  uint64_t* at(Cmd c, packet::Op a, packet::Op b, const char* func);
  void begin(packet::Op op, uint32_t words, Cmd* cmd);

  QueueKind kind_;
  uint32_t index_;
  size_t commands_ = 0;
  uint32_t ops_ = 0;  // bit op: an `op` command was recorded
  std::vector<uint64_t> words_;
  const Device* device_ = nullptr;  // the first kernel's; mixed_: a later one's differs
  bool mixed_ = false;
};

}  // namespace sluice::hcq
