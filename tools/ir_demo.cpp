// sluice-ir-demo: builds the index expressions a kernel would use to read a few views of a buffer, prints
// each UOp tree before and after symbolic simplification, and the bounds range analysis gives.
#include <cstdio>
#include <string>

#include "core/ir/shape_tracker.h"
#include "core/ir/symbolic.h"
#include "core/ir/uop.h"

using sluice::ShapeTracker;
using sluice::UOp;

namespace {

void show(const std::string& what, const UOp& u) {
  UOp s = sluice::simplify(u);
  std::printf("== %s\n%s\n", what.c_str(), u.str().c_str());
  if (s == u)
    std::printf("(already in simplest form)\n\n");
  else
    std::printf("after simplification:\n%s\n\n", s.str().c_str());
}

void bounds(const std::string& name, const UOp& u) {
  std::printf("  %-26s in [%g, %g]\n", name.c_str(), u.vmin(), u.vmax());
}

}  // namespace

int main() {
  // One thread per output element: gidx in [0, 24) over a 4x6 buffer.
  UOp i = UOp::variable("gidx", 0, 23);
  UOp row = i / 4, col = i % 4;
  // Read as a 6x4 reshape: element (i/4, i%4) sits at (i/4)*4 + i%4, which is just i.
  UOp reshaped = row * 4 + col;
  // Read as the 6x4 transpose: element (i/4, i%4) is element (i%4, i/4) of the buffer.
  UOp transposed = col * 6 + row;
  // The same transpose padded by one column on the right (6x5), as movement ops on a ShapeTracker:
  // its index and validity over one index per axis (idx0, idx1), already simplified.
  ShapeTracker st = ShapeTracker::from_shape({4, 6}).permute({1, 0}).pad({{0, 0}, {0, 1}});
  auto [index, valid] = st.to_indexed();

  show("reshape 4x6 -> 6x4, index", reshaped);
  show("transpose 4x6 -> 6x4, index", transposed);
  std::printf("== %s\nindex:\n%s\nvalid:\n%s\n\n", st.str().c_str(), index.str().c_str(),
              valid.str().c_str());

  std::printf("range analysis:\n");
  bounds("gidx/4 (row)", row);
  bounds("gidx%4 (column)", col);
  bounds("reshape index", reshaped);
  bounds("transpose index", transposed);
  bounds("padded index", index);
  bounds("padded valid", valid);
  bounds("x*2+1, x in [0,9]", UOp::variable("x", 0, 9) * 2 + 1);
  bounds("x-y, x,y in [0,9]", UOp::variable("x", 0, 9) - UOp::variable("y", 0, 9));
  return sluice::simplify(reshaped) == i ? 0 : 1;
}
