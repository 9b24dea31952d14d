#include "core/ir/pattern.h"

#include <algorithm>
#include <unordered_map>

#include "base/error.h"

namespace sluice {

// ---------------------------------------------------------------- building patterns

UPat UPat::named(const char* name) const {
  UPat p = *this;
  p.name_ = name;
  return p;
}
UPat UPat::dtype(DType d) const { return dtypes({d}); }
UPat UPat::dtypes(std::initializer_list<DType> ds) const {
  UPat p = *this;
  p.dtypes_.assign(ds);
  return p;
}
UPat UPat::src(std::vector<UPat> s) const {
  UPat p = *this;
  p.src_ = std::move(s);
  p.mode_ = SrcMode::InOrder;
  return p;
}
UPat UPat::src_any_order(std::vector<UPat> s) const {
  SLUICE_CHECK(s.size() <= 4) << "any-order matching supports up to 4 sources, got " << s.size();
  UPat p = *this;
  p.src_ = std::move(s);
  p.mode_ = SrcMode::AnyOrder;
  return p;
}
UPat UPat::src_repeat(UPat s) const {
  UPat p = *this;
  p.src_ = {std::move(s)};
  p.mode_ = SrcMode::Repeat;
  return p;
}
UPat UPat::allow_any_len() const {
  UPat p = *this;
  p.any_len_ = true;
  return p;
}
UPat UPat::arg(Arg a) const {
  UPat p = *this;
  p.arg_ = std::move(a);
  return p;
}
UPat UPat::alu(Op op, std::vector<UPat> s) const {
  s.insert(s.begin(), *this);
  return is_commutative(op) ? UPat(op).src_any_order(std::move(s)) : UPat(op).src(std::move(s));
}
UPat UPat::any_of(std::vector<UPat> alts) {
  UPat p;
  for (const UPat& a : alts) {
    SLUICE_CHECK(!a.root_ops().empty()) << "alternatives need a root op";
    for (int o = 0; o < kNumOps; o++)
      if (a.root_ops().has(Op(o))) p.ops_.add(Op(o));
  }
  p.alts_ = std::move(alts);
  return p;
}

UPat var(const char* name, std::optional<DType> dt) {
  UPat p = UPat().named(name);
  return dt ? p.dtype(*dt) : p;
}
UPat cvar(const char* name, std::optional<DType> dt) {
  UPat p = UPat(Op::Const).named(name);
  return dt ? p.dtype(*dt) : p;
}
UPat cnst(double v) {
  UPat p(Op::Const);
  p.const_ = v;
  return p;
}
UPat operator+(const UPat& a, const UPat& b) { return a.alu(Op::Add, {b}); }
UPat operator-(const UPat& a, const UPat& b) { return a.alu(Op::Sub, {b}); }
UPat operator*(const UPat& a, const UPat& b) { return a.alu(Op::Mul, {b}); }
UPat operator/(const UPat& a, const UPat& b) { return a.alu(Op::IDiv, {b}); }
UPat operator%(const UPat& a, const UPat& b) { return a.alu(Op::Mod, {b}); }
UPat operator-(const UPat& a) { return UPat(Op::Neg).src({a}); }
UPat operator&(const UPat& a, const UPat& b) { return a.alu(Op::And, {b}); }
UPat operator|(const UPat& a, const UPat& b) { return a.alu(Op::Or, {b}); }
UPat operator^(const UPat& a, const UPat& b) { return a.alu(Op::Xor, {b}); }

// ---------------------------------------------------------------- matching

const UOp& Match::operator[](const char* name) const {
  for (int i = 0; i < count; i++)
    if (std::strcmp(names[size_t(i)], name) == 0) return *nodes[size_t(i)];
  SLUICE_FAIL(Error, "Match") << "no capture named '" << name << "'";
}
bool Match::has(const char* name) const {
  for (int i = 0; i < count; i++)
    if (std::strcmp(names[size_t(i)], name) == 0) return true;
  return false;
}

bool UPat::match(const UOp& u, Match& m) const {
  int saved = m.count;
  if (match_node(u, m)) return true;
  m.count = saved;
  return false;
}

bool UPat::match_node(const UOp& u, Match& m) const {
  if (!alts_.empty()) {
    for (const UPat& a : alts_) {
      if (!a.match(u, m)) continue;
      if (!name_.empty()) {
        SLUICE_ASSERT(m.count < Match::kMaxCaptures);
        m.names[size_t(m.count)] = name_.c_str();
        m.nodes[size_t(m.count++)] = &u;
      }
      return true;
    }
    return false;
  }
  if (!ops_.empty() && !ops_.has(u.op())) return false;
  if (!dtypes_.empty()) {
    DType d = u.dtype();
    bool ok = false;
    for (DType want : dtypes_) ok |= want == d || want == d.base();
    if (!ok) return false;
  }
  if (const_ && !(u.op() == Op::Const && u.const_value() == *const_)) return false;
  if (arg_ && !arg_equal(*arg_, u.arg())) return false;
  if (!name_.empty()) {
    for (int i = 0; i < m.count; i++)
      if (std::strcmp(m.names[size_t(i)], name_.c_str()) == 0) {
        if (m.nodes[size_t(i)]->get() != u.get()) return false;  // a name binds one node
        return match_srcs(u, m);
      }
    SLUICE_ASSERT(m.count < Match::kMaxCaptures);
    m.names[size_t(m.count)] = name_.c_str();
    m.nodes[size_t(m.count++)] = &u;
  }
  return match_srcs(u, m);
}

bool UPat::match_srcs(const UOp& u, Match& m) const {
  auto s = u.src();
  switch (mode_) {
    case SrcMode::Any: return true;
    case SrcMode::Repeat:
      for (const UOp& x : s)
        if (!src_[0].match(x, m)) return false;
      return true;
    case SrcMode::InOrder: {
      if (any_len_ ? s.size() < src_.size() : s.size() != src_.size()) return false;
      int saved = m.count;
      for (size_t i = 0; i < src_.size(); i++)
        if (!src_[i].match(s[i], m)) {
          m.count = saved;
          return false;
        }
      return true;
    }
    case SrcMode::AnyOrder: {
      if (s.size() != src_.size()) return false;
      std::array<uint8_t, 4> perm{0, 1, 2, 3};
      int saved = m.count;
      do {
        bool ok = true;
        for (size_t i = 0; i < src_.size() && ok; i++) ok = src_[i].match(s[perm[i]], m);
        if (ok) return true;
        m.count = saved;
      } while (std::next_permutation(perm.begin(), perm.begin() + long(src_.size())));
      return false;
    }
  }
  return false;
}

// ---------------------------------------------------------------- matchers

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) { index(); }

void PatternMatcher::index() {
  for (auto& v : by_op_) v.clear();
  for (uint32_t r = 0; r < rules_.size(); r++) {
    OpSet ops = rules_[r].pat.root_ops();
    for (int o = 0; o < kNumOps; o++)
      if (ops.empty() || ops.has(Op(o))) by_op_[size_t(o)].push_back(r);
  }
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& other) const {
  PatternMatcher out;
  out.rules_ = rules_;
  out.rules_.insert(out.rules_.end(), other.rules_.begin(), other.rules_.end());
  out.index();
  return out;
}

UOp PatternMatcher::rewrite(const UOp& u, void* ctx) const {
  for (uint32_t r : by_op_[size_t(u.op())]) {
    Match m;
    m.ctx = ctx;
    if (!rules_[r].pat.match(u, m)) continue;
    UOp out = rules_[r].fn(m);
    if (out && !(out == u)) return out;
  }
  return {};
}

// ---------------------------------------------------------------- graph_rewrite

namespace {

// Memo of finished nodes: an open-addressing map from node to result. Keys hold a reference so an
// intermediate node cannot die and have its address reused by a different node while the rewrite runs.
struct Memo {
  std::vector<std::pair<UOp, UOp>> entries;
  std::vector<uint32_t> slots = std::vector<uint32_t>(1024, kEmpty);  // index into entries
  static constexpr uint32_t kEmpty = ~0u;

  size_t home(const UOpNode* n) const { return (n->hash ^ (n->hash >> 29)) & (slots.size() - 1); }
  const UOp* find(const UOp& u) const {
    for (size_t i = home(u.get());; i = (i + 1) & (slots.size() - 1)) {
      uint32_t e = slots[i];
      if (e == kEmpty) return nullptr;
      if (entries[e].first == u) return &entries[e].second;
    }
  }
  void put(const UOp& k, const UOp& v) {
    if (find(k)) return;
    if (2 * (entries.size() + 1) > slots.size()) {
      slots.assign(slots.size() * 2, kEmpty);
      for (uint32_t e = 0; e < entries.size(); e++) place(e);
    }
    entries.emplace_back(k, v);
    place(uint32_t(entries.size() - 1));
  }
  void place(uint32_t e) {
    size_t i = home(entries[e].first.get());
    while (slots[i] != kEmpty) i = (i + 1) & (slots.size() - 1);
    slots[i] = e;
  }
};

// Rebuilds u with its sources replaced by their rewritten forms; null when no source changed.
UOp rebuild(const UOp& u, const Memo& memo, std::vector<UOp>& scratch) {
  scratch.clear();
  bool changed = false;
  for (const UOp& s : u.src()) {
    const UOp& r = *memo.find(s);
    changed |= !(r == s);
    scratch.push_back(r);
  }
  return changed ? u.with_src(scratch) : UOp();
}

UOp rewrite_bottom_up(const UOp& root, const PatternMatcher& pm, void* ctx) {
  Memo memo;
  struct Frame {
    UOp n;
    UOp next;  // the node n was rewritten to, waiting for its own rewrite
    bool expanded = false;
  };
  std::vector<Frame> stack;
  std::vector<UOp> scratch;
  stack.push_back({root, {}});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next) {  // n -> next, and next is done
      UOp n = f.n, result = *memo.find(f.next);
      stack.pop_back();
      memo.put(n, result);
      memo.put(result, result);  // a result is a fixed point: no need to walk it again
      continue;
    }
    if (memo.find(f.n)) {
      stack.pop_back();
      continue;
    }
    if (!f.expanded) {
      f.expanded = true;
      UOp n = f.n;  // stack may reallocate below
      for (const UOp& s : n.src())
        if (!memo.find(s)) stack.push_back({s, {}});
      continue;
    }
    UOp next = rebuild(f.n, memo, scratch);
    if (!next) next = pm.rewrite(f.n, ctx);
    if (!next) {
      UOp n = f.n;
      stack.pop_back();
      memo.put(n, n);
      continue;
    }
    f.next = next;
    if (!memo.find(next)) stack.push_back({next, {}});
  }
  return *memo.find(root);
}

UOp rewrite_top_down(const UOp& root, const PatternMatcher& pm, void* ctx) {
  Memo memo;
  struct Frame {
    UOp n;   // the original node
    UOp at;  // n after rules stopped firing at the top; its sources are rewritten next
  };
  std::vector<Frame> stack;
  std::vector<UOp> scratch;
  stack.push_back({root, {}});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (!f.at) {
      if (memo.find(f.n)) {
        stack.pop_back();
        continue;
      }
      UOp at = f.n;
      for (UOp r = pm.rewrite(at, ctx); r; r = pm.rewrite(at, ctx)) at = r;
      f.at = at;
      for (const UOp& s : at.src())
        if (!memo.find(s)) stack.push_back({s, {}});
      continue;
    }
    UOp n = f.n, at = f.at;
    stack.pop_back();
    UOp rebuilt = rebuild(at, memo, scratch);
    memo.put(n, rebuilt ? rebuilt : at);
  }
  return *memo.find(root);
}

}  // namespace

UOp graph_rewrite(const UOp& sink, const PatternMatcher& pm, void* ctx, bool top_down) {
  return top_down ? rewrite_top_down(sink, pm, ctx) : rewrite_bottom_up(sink, pm, ctx);
}

}  // namespace sluice
