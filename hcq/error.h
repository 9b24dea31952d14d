#pragma once
// Errors of the queue layer (DESIGN.md §6): sluice::Error subclasses (base/error.h), so a caller catches
// queue failures like any other, with the usual convention: the message starts with the failing function
// in brackets and names the values involved, `[wait] CPU: signal 'x' did not reach 5 ...`.
//   SLUICE_CHECK_AS(hcq::Error, n <= max) << "kernel '" << name << "' takes " << max << " buffers, got " <<
//   n;
#include "base/error.h"

namespace sluice::hcq {

class Error : public sluice::Error {  // misuse of the API: bad argument, wrong queue kind, ...
 public:
  using sluice::Error::Error;
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

}  // namespace sluice::hcq
