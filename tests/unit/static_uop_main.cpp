// A UOp held by a static object is released after main returns, when this thread's thread_local objects
// are already destroyed: the release path must not need any of them (it used to crash here).
#include "core/ir/uop.h"
using namespace sluice;
static UOp held;  // destroyed after main's thread_locals
int main() {
  UOp x = UOp::variable("x", 0, 9);
  held = (x + 1) * 2;
  return 0;
}
