#include "hcq/queue.h"

#include <ostream>

#include "hcq/device.h"
#include "hcq/error.h"
#include "hcq/signal.h"

namespace sluice::hcq {

const char* queue_kind_name(QueueKind k) { return k == QueueKind::Compute ? "compute" : "copy"; }

std::ostream& operator<<(std::ostream& os, Dims d) {
  return os << '(' << d.x << ',' << d.y << ',' << d.z << ')';
}

namespace {
uint64_t word(const void* p) { return uint64_t(uintptr_t(p)); }
const char* op_name(uint8_t op) {
  switch (op) {
    case packet::Wait: return "wait";
    case packet::Signal: return "signal";
    case packet::Timestamp: return "timestamp";
    case packet::Exec: return "exec";
    case packet::Copy: return "copy";
    case packet::Barrier: return "memory_barrier";
    default: return "unknown";
  }
}
}  // namespace

// Most queues hold a handful of commands; one reservation up front keeps recording to one allocation.
HwQueue::HwQueue(QueueKind kind, uint32_t index) : kind_(kind), index_(index) { words_.reserve(32); }

void HwQueue::begin(packet::Op op, uint32_t words, Cmd* cmd) {
  if (cmd) cmd->at = uint32_t(words_.size());
  ++commands_;
  ops_ |= 1u << op;
  words_.push_back(packet::header(op, words));
}

HwQueue& HwQueue::wait(const Signal& s, uint64_t value, Cmd* cmd) {
  begin(packet::Wait, 3, cmd);
  words_.insert(words_.end(), {word(&s), value});
  return *this;
}

HwQueue& HwQueue::signal(Signal& s, uint64_t value, Cmd* cmd) {
  begin(packet::Signal, 3, cmd);
  words_.insert(words_.end(), {word(&s), value});
  return *this;
}

HwQueue& HwQueue::timestamp(Signal& s, Cmd* cmd) {
  begin(packet::Timestamp, 2, cmd);
  words_.push_back(word(&s));
  return *this;
}

HwQueue& HwQueue::exec(const Program& p, const KernelArgs& args, Dims global, Dims local, Cmd* cmd) {
  SLUICE_CHECK_AS(::sluice::hcq::Error, kind_ == QueueKind::Compute)
      << "kernel '" << p.name() << "': a copy queue cannot execute kernels";
  KernelLayout l = p.layout();
  SLUICE_CHECK_AS(::sluice::hcq::Error, args.bufs.size() == l.buffers && args.vars.size() == l.vars)
      << "kernel '" << p.name() << "' takes " << l.buffers << " buffers and " << l.vars << " vars, got "
      << args.bufs.size() << " buffers and " << args.vars.size() << " vars";
  SLUICE_CHECK_AS(::sluice::hcq::Error, global.count() > 0 && local.count() > 0)
      << "kernel '" << p.name() << "': launch size global " << global << " local " << local
      << " has a zero dimension";
  auto n = uint32_t(packet::kExecFixedWords + l.buffers + (l.vars + 1) / 2);
  begin(packet::Exec, n, cmd);
  if (!device_) device_ = &p.device();
  mixed_ |= device_ != &p.device();
  words_.insert(words_.end(),
                {word(&p), global.x | uint64_t(global.y) << 32, global.z | uint64_t(local.x) << 32,
                 local.y | uint64_t(local.z) << 32, l.buffers | uint64_t(l.vars) << 32});
  words_.insert(words_.end(), args.bufs.begin(), args.bufs.end());
  for (uint32_t i = 0; i < l.vars; i += 2) {
    uint64_t lo = uint32_t(args.vars[i]), hi = i + 1 < l.vars ? uint32_t(args.vars[i + 1]) : 0;
    words_.push_back(lo | hi << 32);
  }
  return *this;
}

HwQueue& HwQueue::copy(uint64_t dst, uint64_t src, uint64_t size, Cmd* cmd) {
  begin(packet::Copy, 4, cmd);
  words_.insert(words_.end(), {dst, src, size});
  return *this;
}

HwQueue& HwQueue::memory_barrier(Cmd* cmd) {
  begin(packet::Barrier, 1, cmd);
  return *this;
}

uint64_t HwQueue::submit(Device& dev) const { return dev.submit(*this); }

uint64_t* HwQueue::at(Cmd c, packet::Op a, packet::Op b, const char* func) {
  if (c.at >= words_.size())
    SLUICE_FAIL(Error, func) << "command handle " << c.at << " is not in this queue (" << words_.size()
                             << " words recorded)";
  uint8_t op = packet::op(words_[c.at]);
  if (op != a && op != b)
    SLUICE_FAIL(Error, func) << "command at " << c.at << " is " << op_name(op) << ", expected " << op_name(a)
                             << (a != b ? std::string(" or ") + op_name(b) : "");
  return &words_[c.at];
}

void HwQueue::patch_value(Cmd c, uint64_t value) {
  at(c, packet::Wait, packet::Signal, "patch_value")[2] = value;
}

void HwQueue::patch_global(Cmd c, Dims g) {
  uint64_t* p = at(c, packet::Exec, packet::Exec, "patch_global");
  SLUICE_CHECK_AS(::sluice::hcq::Error, g.count() > 0)
      << "launch size global " << g << " has a zero dimension";
  p[2] = g.x | uint64_t(g.y) << 32;
  p[3] = g.z | (p[3] & 0xffffffff00000000ull);
}

void HwQueue::patch_local(Cmd c, Dims l) {
  uint64_t* p = at(c, packet::Exec, packet::Exec, "patch_local");
  SLUICE_CHECK_AS(::sluice::hcq::Error, l.count() > 0)
      << "launch size local " << l << " has a zero dimension";
  p[3] = uint32_t(p[3]) | uint64_t(l.x) << 32;
  p[4] = l.y | uint64_t(l.z) << 32;
}

void HwQueue::patch_buf(Cmd c, uint32_t i, uint64_t addr) {
  uint64_t* p = at(c, packet::Exec, packet::Exec, "patch_buf");
  packet::ExecView e(p);
  SLUICE_CHECK_AS(::sluice::hcq::Error, i < e.nbufs)
      << "kernel '" << e.program->name() << "' has " << e.nbufs << " buffers, no buffer " << i;
  p[packet::kExecFixedWords + i] = addr;
}

void HwQueue::patch_var(Cmd c, uint32_t i, int32_t value) {
  uint64_t* p = at(c, packet::Exec, packet::Exec, "patch_var");
  packet::ExecView e(p);
  SLUICE_CHECK_AS(::sluice::hcq::Error, i < e.nvars)
      << "kernel '" << e.program->name() << "' has " << e.nvars << " vars, no var " << i;
  uint64_t& w = p[packet::kExecFixedWords + e.nbufs + i / 2];
  unsigned shift = 32 * (i % 2);
  w = (w & ~(0xffffffffull << shift)) | uint64_t(uint32_t(value)) << shift;
}

void HwQueue::patch_copy(Cmd c, uint64_t dst, uint64_t src, uint64_t size) {
  uint64_t* p = at(c, packet::Copy, packet::Copy, "patch_copy");
  p[1] = dst, p[2] = src, p[3] = size;
}

}  // namespace sluice::hcq
