#pragma once
// An open-addressing hash map for the scheduler's hot loops (internal to core/schedule). Keys are small
// trivially copyable values (node pointers, indices, pairs of them) compared with ==; linear probing over a
// power-of-two table that doubles at half load. No erase: the scheduler only ever adds.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "base/splitmix64.h"

namespace sluice::sched {

inline size_t hash_word(uint64_t x) { return size_t(mix64(x)); }  // pointers differ in their low bits
inline size_t hash_key(const void* p) { return hash_word(reinterpret_cast<uintptr_t>(p)); }
inline size_t hash_key(uint64_t v) { return hash_word(v); }
template <class A, class B>
size_t hash_key(const std::pair<A, B>& p) {
  return hash_key(p.first) ^ (hash_key(p.second) * 31);
}

template <class K, class V>
class FlatMap {
 public:
  explicit FlatMap(size_t capacity = 64) {
    size_t n = 16;
    while (n < 2 * capacity) n *= 2;
    slots_.resize(n);
    used_.assign(n, 0);
  }

  V* find(const K& k) {
    for (size_t i = hash_key(k) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      if (!used_[i]) return nullptr;
      if (slots_[i].first == k) return &slots_[i].second;
    }
  }
  const V* find(const K& k) const { return const_cast<FlatMap*>(this)->find(k); }

  // The value under k, default-constructed first if absent; `inserted` tells which.
  V& get(const K& k, bool* inserted = nullptr) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = hash_key(k) & (slots_.size() - 1);
    for (; used_[i]; i = (i + 1) & (slots_.size() - 1))
      if (slots_[i].first == k) {
        if (inserted) *inserted = false;
        return slots_[i].second;
      }
    used_[i] = 1;
    slots_[i] = {k, V()};
    size_++;
    if (inserted) *inserted = true;
    return slots_[i].second;
  }
  V& operator[](const K& k) { return get(k); }
  size_t size() const { return size_; }
  // Forgets every entry, keeping the table's memory for the next use.
  void clear() {
    for (size_t i = 0; i < slots_.size(); i++)
      if (used_[i]) slots_[i].second = V(), used_[i] = 0;
    size_ = 0;
  }

 private:
  void grow() {
    std::vector<std::pair<K, V>> old = std::move(slots_);
    std::vector<uint8_t> old_used = std::move(used_);
    slots_.assign(old.size() * 2, {});
    used_.assign(old.size() * 2, 0);
    size_ = 0;
    for (size_t i = 0; i < old.size(); i++)
      if (old_used[i]) get(old[i].first) = std::move(old[i].second);
  }

  std::vector<std::pair<K, V>> slots_;
  std::vector<uint8_t> used_;
  size_t size_ = 0;
};

}  // namespace sluice::sched
