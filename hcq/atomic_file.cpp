#include "hcq/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <string>

namespace sluice::hcq {

bool write_file_atomic(const std::filesystem::path& p, std::span<const uint8_t> data) {
  static std::atomic<uint64_t> seq{0};
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  auto tmp = p;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(seq.fetch_add(1));
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
    if (!f.flush()) {
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace sluice::hcq
