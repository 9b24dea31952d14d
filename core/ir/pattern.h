#pragma once
// Patterns over UOps and the rewrite engine (DESIGN.md §2). Every transformation in sluice is a table of
// one-line rules `{pattern, fn}` where fn returns the replacement or a null UOp (no rewrite):
//
//   const PatternMatcher rules{{
//     {var("x") + 0, [](Match& m) { return m["x"]; }},   // x+0 -> x (either order: ADD is commutative)
//   }};
//
// A UPat constrains an op (or a set of ops), a dtype (or set; a vector matches its scalar too), the
// sources (in order, in any order, or all matching one pattern), the arg, and may capture the node under a
// name. A name captured twice must bind the same node. Matching does not allocate: captures live in a
// fixed array inside Match.
#include <array>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/uop.h"

namespace sluice {

// A set of ops as a bitmask (empty = any op).
struct OpSet {
  uint64_t bits[2] = {0, 0};
  OpSet() = default;
  OpSet(std::initializer_list<Op> ops) {
    for (Op o : ops) add(o);
  }
  void add(Op o) { bits[int(o) / 64] |= uint64_t(1) << (int(o) % 64); }
  bool has(Op o) const { return (bits[int(o) / 64] >> (int(o) % 64)) & 1; }
  bool empty() const { return !bits[0] && !bits[1]; }
};
static_assert(kNumOps <= 128);

class UPat {
 public:
  enum class SrcMode : uint8_t { Any, InOrder, AnyOrder, Repeat };

  UPat() = default;  // matches any node
  UPat(Op op) : ops_{op} {}
  UPat(std::initializer_list<Op> ops) : ops_(ops) {}
  explicit UPat(OpSet ops) : ops_(ops) {}

  // Builders (each returns a modified copy).
  UPat named(const char* name) const;
  UPat dtype(DType d) const;
  UPat dtypes(std::initializer_list<DType> ds) const;
  UPat src(std::vector<UPat> s) const;            // sources match in order
  UPat src_any_order(std::vector<UPat> s) const;  // some permutation of the sources matches
  UPat src_repeat(UPat s) const;                  // every source matches s (any count)
  UPat allow_any_len() const;                     // in-order prefix match; extra sources are fine
  UPat arg(Arg a) const;

  // ALU sugar: commutative ops match their sources in either order.
  UPat alu(Op op, std::vector<UPat> s) const;
  UPat lt(const UPat& b) const { return alu(Op::CmpLT, {b}); }
  UPat ne(const UPat& b) const { return alu(Op::CmpNE, {b}); }
  UPat max(const UPat& b) const { return alu(Op::Max, {b}); }
  UPat where(const UPat& t, const UPat& f) const { return alu(Op::Where, {t, f}); }
  UPat cast() const { return UPat(Op::Cast).src({*this}); }

  // Matching: fills m with captures; on failure m's captures are left as they were.
  bool match(const UOp& u, struct Match& m) const;

  OpSet root_ops() const { return ops_; }  // for indexing a matcher by root op
  const std::vector<UPat>& alternatives() const { return alts_; }

  static UPat any_of(std::vector<UPat> alts);  // matches if one of alts matches

 private:
  friend UPat cvar(const char*, std::optional<DType>);
  friend UPat cnst(double);
  bool match_node(const UOp& u, struct Match& m) const;
  bool match_srcs(const UOp& u, struct Match& m) const;

  OpSet ops_;
  std::vector<DType> dtypes_;
  std::vector<UPat> src_;
  std::vector<UPat> alts_;
  std::optional<Arg> arg_;
  std::optional<double> const_;  // CONST whose value equals this (any dtype)
  std::string name_;
  SrcMode mode_ = SrcMode::Any;
  bool any_len_ = false;
};

// Shorthands for the rule tables.
UPat var(const char* name, std::optional<DType> dt = std::nullopt);   // any node, captured
UPat cvar(const char* name, std::optional<DType> dt = std::nullopt);  // a CONST, captured
UPat cnst(double v);                                                  // a CONST equal to v
UPat operator+(const UPat& a, const UPat& b);
UPat operator-(const UPat& a, const UPat& b);  // SUB
UPat operator*(const UPat& a, const UPat& b);
UPat operator/(const UPat& a, const UPat& b);  // IDIV (integer rules); FDIV via alu(Op::FDiv, ...)
UPat operator%(const UPat& a, const UPat& b);
UPat operator-(const UPat& a);  // NEG
UPat operator&(const UPat& a, const UPat& b);
UPat operator|(const UPat& a, const UPat& b);
UPat operator^(const UPat& a, const UPat& b);
#define SLUICE_UPAT_SCALAR(OP)                                              \
  inline UPat operator OP(const UPat& a, double b) { return a OP cnst(b); } \
  inline UPat operator OP(double a, const UPat& b) { return cnst(a) OP b; }
SLUICE_UPAT_SCALAR(+)
SLUICE_UPAT_SCALAR(-)
SLUICE_UPAT_SCALAR(*)
SLUICE_UPAT_SCALAR(/)
SLUICE_UPAT_SCALAR(%)
#undef SLUICE_UPAT_SCALAR

// Captures of one match. Names point into the pattern and nodes into the matched graph: a Match is valid
// while both the pattern and the matched node are alive.
struct Match {
  static constexpr int kMaxCaptures = 16;
  std::array<const char*, kMaxCaptures> names;  // only [0, count) is meaningful: left uninitialized
  std::array<const UOp*, kMaxCaptures> nodes;
  int count = 0;
  void* ctx = nullptr;  // the graph_rewrite context, if any

  const UOp& operator[](const char* name) const;  // the node captured under name (must exist)
  bool has(const char* name) const;
  template <class T>
  T& context() const {
    return *static_cast<T*>(ctx);
  }
};

using RewriteFn = std::function<UOp(Match&)>;
struct Rule {
  UPat pat;
  RewriteFn fn;
};

// A rule table, indexed by root op. Combine with +; the earlier table's rules are tried first.
class PatternMatcher {
 public:
  PatternMatcher() = default;
  PatternMatcher(std::vector<Rule> rules);
  PatternMatcher operator+(const PatternMatcher& other) const;
  // The first rule whose pattern matches u and whose fn returns a node other than u; else null.
  UOp rewrite(const UOp& u, void* ctx = nullptr) const;
  size_t size() const { return rules_.size(); }

 private:
  void index();
  std::vector<Rule> rules_;
  std::array<std::vector<uint32_t>, kNumOps> by_op_;  // rule ids to try for each root op
};

// Rewrites the graph under sink to a fixed point with pm, memoizing every node it visits.
// Bottom-up (default): a node's sources are rewritten first, then rules are applied to the node, and any
// replacement is itself rewritten. Top-down: rules are applied to a node until none fires, then to its
// sources. Iterative: deep graphs do not recurse on the C++ stack.
UOp graph_rewrite(const UOp& sink, const PatternMatcher& pm, void* ctx = nullptr, bool top_down = false);

}  // namespace sluice
