#pragma once
// error_of<E>(f): the message of the E that f throws, or "no error" — for tests that check an error's
// type and words together.
#include <functional>
#include <string>

namespace sluice::testing_errors {

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  return "no error";
}

}  // namespace sluice::testing_errors
