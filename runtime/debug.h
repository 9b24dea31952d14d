#pragma once
// SLUICE_DEBUG (DESIGN.md §5): 1 kernel count and time, 2 each kernel with its time, 3 each ScheduleItem's
// AST, 4 generated source, 5 linearized UOps. Read once per process.
#include <cstdlib>

namespace sluice {
inline int debug_level() {
  static const int level = [] {
    const char* e = std::getenv("SLUICE_DEBUG");
    return e ? std::atoi(e) : 0;
  }();
  return level;
}
}  // namespace sluice
