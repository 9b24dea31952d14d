// Builds a small graph through the installed umbrella header; exits 0 when range analysis is right.
#include <sluice/sluice.h>

#include <iostream>

int main() {
  auto x = sluice::UOp::variable("x", 0, 9);
  auto y = x * 2 + 1;
  std::cout << y.str() << "\nvmin " << y.vmin() << " vmax " << y.vmax() << "\n";
  return y.vmax() == 19 ? 0 : 1;
}
