#pragma once
// splitmix64 (Steele, Lea, Flood): a 64-bit sequence that passes BigCrush, and its finalizer, a mix in
// which every input bit flips about half the output bits, so nearby inputs (seeds, pointers that differ
// in their low bits) give unrelated outputs.
#include <cstdint>

namespace sluice {

inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The next number of the sequence; advances `state`.
inline uint64_t splitmix64(uint64_t& state) { return mix64(state += 0x9e3779b97f4a7c15ull); }

}  // namespace sluice
