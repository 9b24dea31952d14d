// Memoized VIEW construction (views.h).
#include "core/schedule/views.h"

#include <array>
#include <unordered_map>
#include <vector>

#include "core/schedule/flat_map.h"

namespace sluice::sched {

namespace {

constexpr size_t kMaxEntries = 1 << 14;  // past this the memo starts over (a few MB at most)

Bounds pairs(const std::vector<int64_t>& flat) {
  Bounds b;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) b.push_back({flat[i], flat[i + 1]});
  return b;
}

ShapeTracker apply(const ShapeTracker& st, const UOp& m) {
  const auto& a = m.arg_as<std::vector<int64_t>>();
  switch (m.op()) {
    case Op::Reshape: return st.reshape(a);
    case Op::Permute: return st.permute(a);
    case Op::Expand: return st.expand(a);
    case Op::Pad: return st.pad(pairs(a));
    case Op::Shrink: return st.shrink(pairs(a));
    default: return st.flip(a);
  }
}

// Structural keys: a flat list of integers (a tag, then shapes and op args with their lengths), found by
// their hash; the entry keeps the key to tell the rare colliding key apart.
uint64_t hash_ints(const std::vector<int64_t>& k) {
  uint64_t h = k.size();
  for (int64_t x : k) h = (h ^ uint64_t(x)) * 0x100000001b3ull;  // FNV-style: keys are short
  return hash_word(h);
}
struct Entry {
  std::vector<int64_t> key;
  UOp view;
};
struct PairHash {
  size_t operator()(const std::pair<const UOpNode*, const UOpNode*>& p) const { return hash_key(p); }
};

struct Memo {
  FlatMap<uint64_t, Entry> by_structure{1024};
  // Both keys are held (in the value) so their addresses cannot be reused by other nodes.
  std::unordered_map<std::pair<const UOpNode*, const UOpNode*>, std::array<UOp, 3>, PairHash> composed;
  std::vector<int64_t> key;

  void bound() {
    if (by_structure.size() + composed.size() > kMaxEntries)
      by_structure = FlatMap<uint64_t, Entry>(1024), composed.clear();
  }
};
Memo& memo() {
  thread_local Memo m;
  return m;
}

enum KeyTag : int64_t { kIdentity, kBroadcast, kChain };

void push_ints(std::vector<int64_t>& key, const std::vector<int64_t>& v) {
  key.push_back(int64_t(v.size()));
  key.insert(key.end(), v.begin(), v.end());
}

// The memo's VIEW for m.key, built by `make` the first time.
template <class Make>
UOp lookup(Memo& m, Make make) {
  m.bound();
  bool fresh = false;
  Entry& e = m.by_structure.get(hash_ints(m.key), &fresh);
  if (fresh) {
    e.key = m.key;
    e.view = make();
  }
  return e.key == m.key ? e.view : make();  // a colliding key is built, not cached
}

}  // namespace

UOp make_view(ShapeTracker st) {
  return UOp::make(Op::View, dtypes::void_, {},
                   std::shared_ptr<const ArgObject>(std::make_shared<ShapeTracker>(std::move(st))));
}
const ShapeTracker& st_of(const UOp& view) {
  return static_cast<const ShapeTracker&>(*view.arg_as<std::shared_ptr<const ArgObject>>());
}

UOp compose(const UOp& below, const UOp& top) {
  if (!below) return top;
  if (!top) return below;
  Memo& m = memo();
  m.bound();
  auto [it, fresh] = m.composed.try_emplace({below.get(), top.get()});
  if (fresh) it->second = {below, top, make_view(st_of(below) + st_of(top))};
  return it->second[2];
}

UOp identity_view(const Shape& shape) {
  Memo& m = memo();
  m.key.assign(1, kIdentity);
  push_ints(m.key, shape);
  return lookup(m, [&] { return make_view(ShapeTracker::from_shape(shape)); });
}

UOp broadcast_view(const Shape& shape) {
  Memo& m = memo();
  m.key.assign(1, kBroadcast);
  push_ints(m.key, shape);
  return lookup(m, [&] { return make_view(ShapeTracker({View::create(shape, Shape(shape.size(), 0))})); });
}

UOp chain_view(const Shape& base, std::span<const UOp* const> chain) {
  Memo& m = memo();
  m.key.assign(1, kChain);
  push_ints(m.key, base);
  for (const UOp* u : chain) {
    m.key.push_back(int64_t(u->op()));
    push_ints(m.key, u->arg_as<std::vector<int64_t>>());
  }
  return lookup(m, [&] {
    ShapeTracker st = ShapeTracker::from_shape(base);
    for (const UOp* u : chain) st = apply(st, *u);
    return make_view(std::move(st));
  });
}

}  // namespace sluice::sched
