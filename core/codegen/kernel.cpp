#include "core/codegen/kernel.h"

#include <sstream>
#include <unordered_map>

namespace sluice::codegen {

std::string Kernel::str() const {
  std::ostringstream os;
  os << name << " global=(" << global_size[0] << "," << global_size[1] << "," << global_size[2] << ") local=("
     << local_size[0] << "," << local_size[1] << "," << local_size[2] << ")\n";
  std::unordered_map<const UOpNode*, size_t> at;
  int indent = 1;
  for (size_t i = 0; i < uops.size(); ++i) {
    const UOp& u = uops[i];
    at[u.get()] = i;
    if (u.op() == Op::EndRange) --indent;
    os << i << "\t" << std::string(size_t(2 * indent), ' ') << op_name(u.op()) << " " << u.dtype().name()
       << " [";
    for (size_t s = 0; s < u.num_src(); ++s) {
      auto it = at.find(u.src(s).get());
      os << (s ? ", " : "") << (it == at.end() ? std::string("?") : std::to_string(it->second));
    }
    os << "]";
    if (!std::holds_alternative<std::monostate>(u.arg())) os << " " << arg_str(u.arg());
    os << "\n";
    if (u.op() == Op::Range) ++indent;
  }
  return os.str();
}

}  // namespace sluice::codegen
