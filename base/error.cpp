#include "base/error.h"

#include <cstdio>
#include <cstdlib>

namespace sluice::detail {
void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "sluice: internal assertion failed: %s (%s:%d)\n", expr, file, line);
  std::abort();
}
}  // namespace sluice::detail
