#pragma once
// Errors of the queue layer (DESIGN.md §6). hcq/ may not include core/ (DESIGN.md §1), so it carries its
// own small hierarchy with the same convention as sluice::Error: the message starts with the failing
// function in brackets and names the values involved, `[wait] CPU: signal 'x' did not reach 5 ...`.
//   SLUICE_HCQ_CHECK(n <= max) << "kernel '" << name << "' takes " << max << " buffers, got " << n;
#include <sstream>
#include <stdexcept>
#include <string>

namespace sluice::hcq {

class Error : public std::runtime_error {  // misuse of the API: bad argument, wrong queue kind, ...
 public:
  using std::runtime_error::runtime_error;
};
class TimeoutError : public Error {  // a host wait ran past its timeout
 public:
  using Error::Error;
};
class FaultError : public Error {  // a failed signal: a device fault, a hang, or fail() by the host
 public:
  using Error::Error;
};
class CompileError : public Error {  // the compiler rejected a program, or could not be run
 public:
  using Error::Error;
};

namespace detail {
class ErrorStream {
 public:
  explicit ErrorStream(const char* func) { os_ << '[' << func << "] "; }
  template <class T>
  ErrorStream& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  std::string str() const { return os_.str(); }

 private:
  std::ostringstream os_;
};
template <class E>
struct Raise {
  [[noreturn]] void operator&(const ErrorStream& s) const { throw E(s.str()); }
};
}  // namespace detail
}  // namespace sluice::hcq

// Throws E with "[func] <message>" unless cond holds; the name is the enclosing function's.
#define SLUICE_HCQ_CHECK_AS(E, cond) \
  if (cond) {                        \
  } else                             \
    ::sluice::hcq::detail::Raise<E>{} & ::sluice::hcq::detail::ErrorStream(__func__)
#define SLUICE_HCQ_CHECK(cond) SLUICE_HCQ_CHECK_AS(::sluice::hcq::Error, cond)
// Unconditional: SLUICE_HCQ_FAIL(CompileError, "compile") << "...";
#define SLUICE_HCQ_FAIL(E, func) ::sluice::hcq::detail::Raise<E>{} & ::sluice::hcq::detail::ErrorStream(func)
