#include "base/error.h"

#include <cstdlib>
#include <string>

#include "base/log.h"

namespace sluice::detail {
void assert_fail(const char* expr, const char* file, int line) {
  log_fatal("internal assertion failed: " + std::string(expr) + " (" + file + ":" + std::to_string(line) +
            ")");
  std::abort();
}
}  // namespace sluice::detail
