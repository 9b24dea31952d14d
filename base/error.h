#pragma once
// Errors (DESIGN.md §6). User mistakes throw a sluice::Error subclass whose message starts with the
// failing function in brackets and names the values that were wrong:
//   SLUICE_CHECK(a == b) << "cannot reshape " << from << " to " << to;   // [reshape] cannot reshape ...
// Internal invariants use SLUICE_ASSERT, active in debug and sanitizer builds only.
#include <sstream>
#include <stdexcept>
#include <string>

namespace sluice {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class ShapeError : public Error {  // shapes, axes, indices out of range
 public:
  using Error::Error;
};
class DTypeError : public Error {  // an op on a dtype it does not accept
 public:
  using Error::Error;
};
class ValueError : public Error {  // a bad argument value
 public:
  using Error::Error;
};
class DeviceError : public Error {  // unknown or absent device, driver failure
 public:
  using Error::Error;
};

namespace detail {
// Collects the message of a failed check; `Raise<E>{} & stream` throws once the whole `<<` chain ran.
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
[[noreturn]] void assert_fail(const char* expr, const char* file, int line);
}  // namespace detail
}  // namespace sluice

// Throws E with "[func] <message>" unless cond holds. The name defaults to the enclosing function.
#define SLUICE_CHECK_AS(E, cond) SLUICE_CHECK_IN(E, __func__, cond)
// The same with the name given, for checks that run on behalf of another function.
#define SLUICE_CHECK_IN(E, func, cond) \
  if (cond) {                          \
  } else                               \
    ::sluice::detail::Raise<E>{} & ::sluice::detail::ErrorStream(func)
#define SLUICE_CHECK(cond) SLUICE_CHECK_AS(::sluice::Error, cond)
// Unconditional: SLUICE_FAIL(ShapeError, "reshape") << "...";
#define SLUICE_FAIL(E, func) ::sluice::detail::Raise<E>{} & ::sluice::detail::ErrorStream(func)

#if !defined(NDEBUG) || defined(SLUICE_ENABLE_ASSERTS)
#define SLUICE_ASSERT(cond) ((cond) ? (void)0 : ::sluice::detail::assert_fail(#cond, __FILE__, __LINE__))
#else
#define SLUICE_ASSERT(cond) ((void)sizeof((cond) ? 1 : 0))
#endif
