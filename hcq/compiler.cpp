#include "hcq/compiler.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <numeric>
#include <optional>
#include <thread>

#include "base/log.h"
#include "hcq/atomic_file.h"

namespace sluice::hcq {

std::filesystem::path default_cache_dir() {
  if (const char* d = std::getenv("SLUICE_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::filesystem::path(d) / "sluice";
  if (const char* d = std::getenv("HOME"); d && *d) return std::filesystem::path(d) / ".cache" / "sluice";
  return {};
}

// FIPS 180-4. A collision would load the wrong binary, so the key gets a real hash, not a fast one.
std::string sha256_hex(std::string_view data) {
  static constexpr uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  std::string msg(data);
  uint64_t bits = uint64_t(data.size()) * 8;
  msg.push_back(char(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(char(bits >> (8 * i)));
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i) {
      auto b = [&](int j) { return uint32_t(uint8_t(msg[off + 4 * i + j])); };
      w[i] = b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
    }
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (uint32_t x : h)
    for (int i = 28; i >= 0; i -= 4) out.push_back(hex[(x >> i) & 0xf]);
  return out;
}

namespace {

// A cache entry is a header naming what it holds, then the binary: "sluice-kernel-cache 1 <sha256 of
// the key> <sha256 of the binary>\n". Reading checks both, so a flipped byte, a truncated write or an
// entry copied under another name is never loaded: it is discarded and compiled again.
constexpr std::string_view kMagic = "sluice-kernel-cache 1 ";
constexpr size_t kHeader = kMagic.size() + 64 + 1 + 64 + 1;

std::string digest(const Binary& b) {
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

Binary entry(const std::string& key_hash, const Binary& bin) {
  const std::string head = std::string(kMagic) + key_hash + " " + digest(bin) + "\n";
  Binary out(head.begin(), head.end());
  out.insert(out.end(), bin.begin(), bin.end());
  return out;
}

// The binary of the entry at p: nullopt when there is none; else `why` says what is wrong with it, or is
// empty when it is whole and holds `key_hash`.
std::optional<Binary> read_entry(const std::filesystem::path& p, const std::string& key_hash,
                                 std::string& why) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  Binary all{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  const std::string_view text(reinterpret_cast<const char*>(all.data()), all.size());
  if (f.bad() || all.size() < kHeader || text.substr(0, kMagic.size()) != kMagic ||
      text[kHeader - 1] != '\n') {
    why = "not a whole cache entry (" + std::to_string(all.size()) + " bytes)";
    return Binary{};
  }
  Binary bin(all.begin() + kHeader, all.end());
  if (text.substr(kMagic.size(), 64) != key_hash)
    why = "it holds the entry of another kernel";
  else if (text.substr(kMagic.size() + 65, 64) != digest(bin))
    why = "its contents do not match their checksum";
  return bin;
}

}  // namespace

std::string Compiler::key_hash(std::string_view source) const {
  std::string key = name_;
  key += '\0';
  key += identity();
  key += '\0';
  key += source;
  return sha256_hex(key);
}

Binary Compiler::compile(std::string_view source) {
  std::string s(source);
  return std::move(compile_many(std::span(&s, 1))[0]);
}

std::vector<Binary> Compiler::compile_many(std::span<const std::string> sources) {
  std::vector<Binary> out(sources.size());
  std::vector<std::string_view> misses;
  std::vector<size_t> miss_index, miss_of;  // sources that missed, and which entry of `misses` each is
  std::vector<std::string> keys(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!cache_dir_.empty()) {
      keys[i] = key_hash(sources[i]);
      const std::filesystem::path path = cache_dir_ / name_ / keys[i];
      std::string why;
      if (std::optional<Binary> bin = read_entry(path, keys[i], why); bin && why.empty()) {
        out[i] = std::move(*bin);
        cache_hits_.fetch_add(1);
        continue;
      } else if (bin) {
        cache_rejects_.fetch_add(1);
        log_message(LogLevel::Info,
                    "kernel cache: discarded " + path.string() + " (" + why + "); compiling again");
        std::error_code ec;
        std::filesystem::remove(path, ec);
      }
    }
    // The same source twice in one unit would define its kernel twice.
    auto m = std::find(misses.begin(), misses.end(), sources[i]);
    if (m == misses.end()) m = misses.insert(m, sources[i]);
    miss_index.push_back(i);
    miss_of.push_back(size_t(m - misses.begin()));
  }
  if (misses.empty()) return out;

  // Longest first onto the lightest unit; each unit keeps the batch's order (a stable build).
  const size_t n = std::clamp<size_t>(parallel_units(misses), 1, misses.size());
  std::vector<size_t> order(misses.size()), unit_of(misses.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::vector<double> cost(misses.size()), load(n, 0.0);
  for (size_t m = 0; m < misses.size(); ++m) cost[m] = compile_cost(misses[m]);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  for (size_t m : order) {
    const size_t u = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    unit_of[m] = u;
    load[u] += cost[m];
  }
  std::vector<std::vector<std::string_view>> units(n);
  for (size_t m = 0; m < misses.size(); ++m) units[unit_of[m]].push_back(misses[m]);

  // Exceptions stay on their thread; the first unit's failure is rethrown once all are done.
  std::vector<Binary> bins(n);
  std::vector<std::exception_ptr> errors(n);
  auto work = [&](size_t u) {
    try {
      invocations_.fetch_add(1);
      bins[u] = compile_unit(units[u]);
    } catch (...) { errors[u] = std::current_exception(); }
  };
  {
    std::vector<std::jthread> threads;
    for (size_t u = 1; u < n; ++u) threads.emplace_back(work, u);
    work(0);
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);

  for (size_t k = 0; k < miss_index.size(); ++k) {
    const size_t i = miss_index[k];
    out[i] = bins[unit_of[miss_of[k]]];
    if (!cache_dir_.empty()) write_file_atomic(cache_dir_ / name_ / keys[i], entry(keys[i], out[i]));
  }
  return out;
}

}  // namespace sluice::hcq
