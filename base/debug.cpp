#include "base/debug.h"

#include <atomic>
#include <cstdlib>

#include "base/log.h"

namespace sluice {
namespace {
std::atomic<int>& level() {
  static std::atomic<int> l = [] {
    const char* e = std::getenv("SLUICE_DEBUG");
    return e ? std::atoi(e) : 0;
  }();
  return l;
}
}  // namespace

int debug_level() { return level().load(std::memory_order_relaxed); }

void set_debug_level(int l) {
  level().store(l, std::memory_order_relaxed);
  if (l >= 1 && log_level() > LogLevel::Info) set_log_level(LogLevel::Info);
}

}  // namespace sluice
