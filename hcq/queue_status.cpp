#include "hcq/queue_status.h"

#include <algorithm>
#include <sstream>

#include "hcq/counter.h"

namespace sluice::hcq {

double ms(uint64_t ns) { return double(ns) / 1e6; }

bool QueueStatus::hung(uint64_t now, uint64_t hang_ns) const {
  const uint64_t last = std::max(since_ns, progress_ns), stalled = now > last ? now - last : 0;
  // A budget times "never" (kNoHangTimeout) would wrap around.
  return !kernels.empty() && hang_ns <= UINT64_MAX / budget && stalled > hang_ns * budget;
}

std::string QueueStatus::ran(uint64_t now) const {
  std::ostringstream os;
  os << "for " << ms(now > since_ns ? now - since_ns : 0) << " ms";
  if (parts > 0) {
    os << ", " << parts_done << " of " << parts << " parts of its grid done";
    if (parts_done > 0) os << ", the last " << ms(now > progress_ns ? now - progress_ns : 0) << " ms ago";
  }
  return os.str();
}

namespace {

// "the hang timeout of 10000 ms"; for a budget of several: "the hang timeout of 10000 ms for each of the
// 8 parts of its work (80000 ms)".
std::string limit(const QueueStatus& st, uint64_t hang_ns) {
  std::ostringstream os;
  os << "the hang timeout of " << ms(hang_ns) << " ms";
  if (st.budget > 1)
    os << " for each of the " << st.budget << " parts of its work (" << ms(hang_ns * st.budget) << " ms)";
  return os.str();
}

}  // namespace

std::string explain_queues(size_t n, const std::function<QueueStatus(size_t)>& status,
                           const std::function<std::string(size_t)>& name, uint64_t hang_ns,
                           const std::function<bool(size_t, const QueueStatus&, uint64_t)>& reset) {
  std::ostringstream os;
  const uint64_t now = now_ns();
  for (size_t k = 0; k < n; ++k) {
    const QueueStatus st = status(k);
    const std::string q = name(k);
    if (k > 0) os << "; ";
    switch (st.phase) {
      case QueueStatus::Idle: os << q << " is idle"; break;
      case QueueStatus::Waiting:
        if (!st.signal) {
          os << q << " holds a submission whose waits are met";
          break;
        }
        os << q << " waits for signal '" << st.signal.name() << "' to reach " << st.value << " (value "
           << st.signal.value() << ")";
        break;
      case QueueStatus::Running:
        if (st.kernels.empty())
          os << q << " has run submission " << st.value << " " << st.ran(now);
        else
          os << "kernel " << st.kernels << " on " << q << " has run " << st.ran(now);
        if (st.hung(now, hang_ns) && reset(k, st, now))
          os << ", past " << limit(st, hang_ns) << ": the queue was reset and its pending work failed";
        break;
    }
  }
  return os.str();
}

std::string hung_message(const std::string& device, const std::string& queue, const QueueStatus& st,
                         uint64_t now, uint64_t hang_ns) {
  std::ostringstream os;
  os << "[wait] " << device << ": kernel " << st.kernels << " on " << queue << " did not finish: it ran "
     << st.ran(now) << ", past " << limit(st, hang_ns) << ", and its queue was reset";
  return os.str();
}

std::string destroyed_while_waiting(const std::string& device, const std::string& queue,
                                    const std::string& signal, uint64_t value) {
  return "[~Device] " + device + " was destroyed while " + queue + " waited for signal '" + signal +
         "' to reach " + std::to_string(value);
}

std::string destroyed_while_hung(const std::string& device, const std::string& queue, uint64_t hang_ns) {
  std::ostringstream os;
  os << "[~Device] " << device << " was destroyed while " << queue
     << " held work the device did not finish within the hang timeout of " << ms(hang_ns) << " ms";
  return os.str();
}

}  // namespace sluice::hcq
