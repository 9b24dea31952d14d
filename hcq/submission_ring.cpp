#include "hcq/submission_ring.h"

#include <algorithm>

#include "hcq/error.h"
#include "hcq/queue.h"

namespace sluice::hcq {
namespace {

namespace pk = packet;

// The ring's own packets: Pad fills the ring's end so that no submission wraps; Begin is
// [hdr][timeline value][graph][packet words, or the address of a Big].
constexpr uint8_t kPad = pk::kFirstBackendOp, kBegin = pk::kFirstBackendOp + 1;
constexpr uint32_t kBeginWords = 4;
constexpr uint64_t kBigFlag = uint64_t(1) << 63;
constexpr auto kForever = Clock::time_point::max();

}  // namespace

SubmissionRing::SubmissionRing(uint64_t words, std::string who, bool spin)
    : size_(words),
      ring_(new uint64_t[words]),
      slots_(new SignalRef[words / 2]),
      who_(std::move(who)),
      spin_(spin) {}

SubmissionRing::~SubmissionRing() {
  // Submissions never taken (an abandoned queue's): their heap copies.
  for (uint64_t p = rp_.load(), end = wp_.load(); p < end;) {
    const Slot s = slot(p);
    delete s.big;
    p = s.next;
  }
}

SubmissionRing::Slot SubmissionRing::slot(uint64_t p) const {
  const uint64_t pos = p & (size_ - 1);
  const uint64_t* h = &ring_[pos];
  Slot s;
  if (pk::op(h[0]) == kPad) {
    s.pad = true, s.next = p + pk::words(h[0]);
    return s;
  }
  s.tv = h[1], s.graph = h[2], s.next = p + kBeginWords;
  if (h[3] & kBigFlag) {
    s.big = pk::ptr<Big>(h[3] & ~kBigFlag);
  } else {
    s.words = {h + kBeginWords, size_t(h[3])};
    s.base = pos + kBeginWords;
    s.next += h[3];
  }
  return s;
}

// Producer side: consumed_ is read only when its last value leaves no room.
bool SubmissionRing::has_room(uint64_t n) {
  const uint64_t end = wp_.load(std::memory_order_relaxed) + n;
  return end - freed_ <= size_ || end - (freed_ = consumed_.value()) <= size_;
}

void SubmissionRing::reserve(uint64_t n, const std::atomic<bool>& abandoned) {
  if (has_room(n)) return;
  const uint64_t wp = wp_.load(std::memory_order_relaxed);
  written_.store(wp);  // let the consumer see what is already there, so that it frees space
  if (!consumed_.wait_until(wp + n - size_, kForever, &abandoned))
    SLUICE_FAIL(Error, "submit") << who_ << " was reset after a hang while this submission waited for room";
  freed_ = consumed_.value();
}

void SubmissionRing::push(std::span<const uint64_t> words, uint64_t tv, uint64_t graph,
                          const std::atomic<bool>& abandoned) {
  const bool big = words.size() + kBeginWords > size_ / 2;
  const uint64_t n = kBeginWords + (big ? 0 : words.size());
  uint64_t wp = wp_.load(std::memory_order_relaxed), pos = wp & (size_ - 1);
  if (pos + n > size_) {  // a submission never wraps: pad to the end of the ring
    const uint64_t pad = size_ - pos;
    reserve(pad, abandoned);
    ring_[pos] = pk::header(kPad, uint32_t(pad));
    wp += pad, pos = 0;
    wp_.store(wp, std::memory_order_relaxed);
  }
  reserve(n, abandoned);
  uint64_t* b = &ring_[pos];
  b[0] = pk::header(kBegin, kBeginWords), b[1] = tv, b[2] = graph;
  if (big) {
    auto* heap = new Big{{words.begin(), words.end()}, SubmissionSignals(words)};
    b[3] = uint64_t(uintptr_t(heap)) | kBigFlag;
  } else {
    b[3] = words.size();
    std::copy(words.begin(), words.end(), b + kBeginWords);
    for (pk::Ref r : pk::each(words))
      if (pk::names_signal(r.op))
        slots_[(pos + kBeginWords + r.at) / 2] = pk::ptr<const Signal>(r.p[1])->ref();
  }
  wp_.store(wp + n, std::memory_order_release);
  written_.store(wp + n);  // the doorbell
}

bool SubmissionRing::take(Entry& e, const Accept& accept) {
  uint64_t rp = rp_.load(std::memory_order_relaxed);
  for (;;) {
    // The doorbell is read again only once the consumer has caught up with its last value.
    if (rp >= rung_ && rp >= (rung_ = written_.value())) return false;
    const Slot s = slot(rp);
    if (s.pad) {
      rp = s.next;
      rp_.store(rp, std::memory_order_release);
      continue;
    }
    if (s.big) {
      if (accept && !accept(s.big->words, s.big->signals)) return false;
      e.big.reset(s.big);
      e.words = e.big->words;
      e.signals = std::move(e.big->signals);
    } else {
      SubmissionSignals signals(s.words, slots_.get(), s.base);
      if (accept && !accept(s.words, signals)) return false;
      e.words = s.words;
      e.signals = std::move(signals);
    }
    e.begin = rp, e.end = s.next, e.given = 0;
    e.tv = s.tv, e.graph = s.graph;
    rp_.store(e.end, std::memory_order_release);
    return true;
  }
}

bool SubmissionRing::wait(const std::atomic<bool>& stop, const std::atomic<bool>& abort) const {
  if (abort.load()) return false;
  const uint64_t rp = rp_.load(std::memory_order_acquire);
  // A wait that returns with words past rp goes on, stop or not: the consumer drains the ring first.
  const bool more = written_.wait_until(rp + 1, kForever, {&stop, &abort}, spin_) || written_.value() > rp;
  return more && !abort.load();
}

// Before the producer may reuse them. Packets from offset `from` (a packet's) up to `to`.
void SubmissionRing::clear_slots(const Entry& e, size_t from, size_t to) {
  if (e.big) return;
  const uint64_t base = (e.begin & (size_ - 1)) + kBeginWords + from;
  for (pk::Ref r : pk::each(e.words.subspan(from, to - from)))
    if (pk::names_signal(r.op)) slots_[(base + r.at) / 2] = {};
}

void SubmissionRing::release(Entry& e) {
  clear_slots(e, e.given, e.words.size());  // what give_back() left: the rest may be overwritten already
  e.big.reset();
  e.signals = {};
  if (e.end == rung_ || e.end - published_ >= size_ / 16) publish(e.end);
}

void SubmissionRing::give_back(Entry& e, size_t offset) {
  if (e.big || offset <= e.given) return;
  clear_slots(e, e.given, offset);
  e.given = offset;
  publish(e.begin + kBeginWords + offset);
}

void SubmissionRing::give_back_read() { publish(rp_.load(std::memory_order_relaxed)); }

void SubmissionRing::publish(uint64_t pos) {
  if (pos > published_) consumed_.store(published_ = pos);
}

void SubmissionRing::wake() const {
  written_.wake_all();
  consumed_.wake_all();
}

std::vector<SignalRef> SubmissionRing::written_after(uint64_t from) const {
  std::vector<SignalRef> out;
  for (uint64_t p = std::max(from, rp_.load()), end = wp_.load(); p < end;) {
    const Slot s = slot(p);
    p = s.next;
    if (s.pad) continue;
    const std::vector<SignalRef> w = s.big ? s.big->signals.written_from(0)
                                           : SubmissionSignals(s.words, slots_.get(), s.base).written_from(0);
    out.insert(out.end(), w.begin(), w.end());
  }
  return out;
}

}  // namespace sluice::hcq
