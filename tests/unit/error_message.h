#pragma once
// The message of the exception a call throws, for tests that check error texts.
#include <functional>
#include <string>

#include "base/error.h"

namespace sluice::testing_errors {

// The what() of the E that f throws, or "" when it throws none (another exception type propagates).
template <class E = Error>
std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  return "";
}
inline std::string shape_error(const std::function<void()>& f) { return error_message<ShapeError>(f); }

}  // namespace sluice::testing_errors
