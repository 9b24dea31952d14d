#pragma once
// UOp: the one node type of the whole pipeline, UOp{op, dtype, src, arg} (DESIGN.md §2).
//
// Contract:
// - Nodes are immutable and hash-consed: UOp::make with the same (op, dtype, src, arg) returns the same
//   node, so structural equality is pointer equality (`a == b`) and graphs share subtrees for free.
// - A UOp is a cheap handle (one pointer, intrusive atomic refcount). Copying and dropping handles is
//   thread-safe; nodes are immutable, so reading them from many threads is too.
// - The intern table holds nodes weakly: a node is freed (and leaves the table) when its last handle
//   goes. Freeing is iterative, so dropping a million-deep chain does not recurse.
// - Float constants compare by bit pattern, so NaN constants intern too and -0.0 differs from 0.0.
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/ops.h"
#include "core/ir/view.h"

namespace sluice {

// Extension point for structured args (a ShapeTracker, a kernel description): hashable, comparable,
// printable. Stored behind a shared_ptr so UOps sharing an arg do not copy it.
struct ArgObject {
  virtual ~ArgObject() = default;
  virtual size_t hash() const = 0;
  virtual bool equals(const ArgObject& other) const = 0;
  virtual std::string str() const = 0;
};

struct ReduceArg {  // arg of REDUCE_AXIS: the combining op (ADD, MUL, MAX) and the reduced axes
  Op op;
  std::vector<int64_t> axes;
  friend bool operator==(const ReduceArg&, const ReduceArg&) = default;
};
struct VarArg {  // arg of DEFINE_VAR and SPECIAL: a name and the inclusive bounds of its value
  std::string name;
  int64_t min = 0, max = 0;
  friend bool operator==(const VarArg&, const VarArg&) = default;
};

// An arg: nothing, a constant (bool / int64 bit pattern / double), a name, an int list (axes, sizes),
// a reduce or variable description, or a structured object.
using Arg = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>, ReduceArg,
                         VarArg, std::shared_ptr<const ArgObject>>;
bool arg_equal(const Arg& a, const Arg& b);  // doubles by bits, objects by equals()
size_t arg_hash(const Arg& a);
std::string arg_str(const Arg& a);

// arg of UNIQUE: a fresh identity for each buffer, equal only to itself. The runtime hangs the buffer's
// memory on it (the payload), so that memory lives exactly as long as some graph refers to the buffer.
// The payload does not take part in equality or hashing; set_payload may be called from any thread.
class Identity final : public ArgObject {
 public:
  Identity();  // the next id of a process-wide counter
  int64_t id() const { return id_; }
  std::shared_ptr<void> payload() const;
  void set_payload(std::shared_ptr<void> p) const;

  size_t hash() const override { return std::hash<int64_t>{}(id_); }
  bool equals(const ArgObject& o) const override { return this == &o; }
  std::string str() const override { return std::to_string(id_); }

 private:
  int64_t id_;
  mutable std::shared_ptr<void> payload_;  // guarded by an internal mutex
};

class UOpNode;

class UOp {
 public:
  UOp() = default;  // the null handle: only for "no node" (e.g. a rule that does not fire)
  UOp(const UOp& o) noexcept;
  UOp(UOp&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  UOp& operator=(const UOp& o) noexcept;
  UOp& operator=(UOp&& o) noexcept;
  ~UOp();

  // --- construction (all interned) ---
  static UOp make(Op op, DType dtype, std::span<const UOp> src = {}, Arg arg = {});
  static UOp make(Op op, DType dtype, std::initializer_list<UOp> src, Arg arg = {});
  // A constant of dtype `dt`. Integers wrap to the dtype, floats round to it, bools become 0/1.
  static UOp const_(DType dt, double v);
  static UOp const_int(DType dt, int64_t v);
  static UOp const_bool(bool v) { return const_int(dtypes::bool_, v); }
  // A bounded integer variable (DEFINE_VAR), min <= value <= max.
  static UOp variable(const std::string& name, int64_t min, int64_t max, DType dt = dtypes::index);
  static UOp sink(std::span<const UOp> src);
  static UOp sink(std::initializer_list<UOp> src) {
    return sink(std::span<const UOp>(src.begin(), src.size()));
  }

  // --- fields ---
  Op op() const;
  DType dtype() const;
  std::span<const UOp> src() const;
  const UOp& src(size_t i) const;
  size_t num_src() const;
  const Arg& arg() const;
  template <class T>
  const T& arg_as() const {
    return std::get<T>(arg());
  }
  size_t hash() const;  // structural: stable across runs (does not depend on addresses)
  const UOpNode* get() const { return n_; }
  explicit operator bool() const { return n_ != nullptr; }
  friend bool operator==(const UOp& a, const UOp& b) { return a.n_ == b.n_; }

  // --- constants ---
  bool is_const() const { return n_ && op() == Op::Const; }
  double const_value() const;       // the constant as a double (CONST only)
  int64_t const_int_value() const;  // integer/bool constants exactly (bit pattern for uint64)
  UOp const_like(double v) const;   // a CONST of this node's dtype
  UOp const_like_int(int64_t v) const;

  // --- graph ---
  std::vector<UOp> toposort() const;  // every node reachable from this one, sources before users
  // This node with some fields replaced (interned like any node).
  UOp with_src(std::span<const UOp> src) const;
  UOp with_src(std::initializer_list<UOp> src) const;
  UOp with_dtype(DType dt) const;
  UOp with_arg(Arg arg) const;
  // Replace nodes (keys) by values everywhere below and including this node.
  UOp substitute(const std::vector<std::pair<UOp, UOp>>& map) const;

  // --- range analysis: bounds on the value (exact for |v| <= 2^53; dtype limits when unknown) ---
  double vmin() const;
  double vmax() const;

  // --- tensor-level graphs (DESIGN.md §2, "Tensor graph") ---
  // The shape of a tensor-level node, inferred from its sources and arg and cached on the node. Throws
  // ShapeError for kernel-level nodes, which have none.
  const Shape& shape() const;
  int64_t numel() const { return prod(shape()); }
  // A new buffer: BUFFER(DEVICE(device), UNIQUE) with arg = size in elements; every call is distinct.
  static UOp new_buffer(const std::string& device, DType dt, int64_t size);
  static UOp device_node(const std::string& device);  // DEVICE with arg = name
  // A scalar constant living on a device: CONST(DEVICE) of shape ().
  static UOp const_on(const std::string& device, DType dt, double v);
  static UOp const_int_on(const std::string& device, DType dt, int64_t v);
  // The device named by this node's DEVICE source (BUFFER, tensor-level CONST, COPY); "" when it has none.
  std::string device() const;
  // Identity of a BUFFER node (its UNIQUE's arg).
  const Identity& buffer_identity() const;
  // The name of the tensor-level op that first built this node ("relu", "matmul"), or nullptr. Not part of
  // the node's identity: the first tag set wins. Names must be string literals (they are never freed).
  // The scheduler reports the tags of the nodes it fuses as each kernel's metadata.
  const char* tag() const;
  const UOp& tagged(const char* name) const;  // sets the tag if unset; returns this

  // Movement ops. Arguments are checked (ShapeError naming the op and the values); an op that changes
  // nothing returns this node. Pad and shrink take one (begin, end) pair per axis.
  UOp reshape(const Shape& new_shape) const;
  UOp permute(const Shape& axes) const;  // axis a of the result is axis axes[a] of this node
  UOp expand(const Shape& new_shape) const;
  UOp pad(const Bounds& pads) const;       // (before, after) >= 0
  UOp shrink(const Bounds& bounds) const;  // [begin, end)
  UOp flip(const Shape& axes) const;
  // REDUCE_AXIS with op ADD, MUL or MAX over distinct axes; reduced axes keep size 1.
  UOp reduce(Op op, const Shape& axes) const;
  UOp contiguous() const;                        // CONTIGUOUS: realize here
  UOp detach() const;                            // DETACH: the same value, no gradient
  UOp copy_to(const std::string& device) const;  // COPY(x, DEVICE)
  UOp assign(const UOp& value) const;            // ASSIGN(target = this, value): in-place write

  // --- building ALU nodes (dtype from the sources; comparisons give bool) ---
  UOp alu(Op op) const;
  UOp alu(Op op, const UOp& b) const;
  UOp alu(Op op, const UOp& b, const UOp& c) const;
  UOp cast(DType dt) const;
  UOp bitcast(DType dt) const;
  UOp where(const UOp& t, const UOp& f) const { return alu(Op::Where, t, f); }
  UOp lt(const UOp& b) const { return alu(Op::CmpLT, b); }
  // x >= b as !(x < b): the one form of a lower bound, which codegen and simplify_given read.
  UOp ge(const UOp& b) const { return lt(b).ne(true); }
  UOp ne(const UOp& b) const { return alu(Op::CmpNE, b); }
  UOp max(const UOp& b) const { return alu(Op::Max, b); }
  UOp lt(double b) const { return lt(const_like(b)); }
  UOp ne(double b) const { return ne(const_like(b)); }
  UOp max(double b) const { return max(const_like(b)); }

  // --- printing ---
  // The tree, one node per line, with `xN:=` naming each subtree that is used more than once.
  std::string str() const;

  // Number of live interned nodes (for leak tests and benchmarks).
  static size_t table_size();

 private:
  explicit UOp(UOpNode* n) : n_(n) {}  // takes over one reference
  UOpNode* n_ = nullptr;
  friend class UOpNode;
  friend struct UOpTable;
};

std::ostream& operator<<(std::ostream& os, const UOp& u);

// Arithmetic sugar: u + 1, 2 * u, u / v ... (integer dtypes: `/` is IDIV, floats: FDIV).
UOp operator+(const UOp& a, const UOp& b);
UOp operator-(const UOp& a, const UOp& b);
UOp operator*(const UOp& a, const UOp& b);
UOp operator/(const UOp& a, const UOp& b);
UOp operator%(const UOp& a, const UOp& b);
UOp operator-(const UOp& a);
UOp operator&(const UOp& a, const UOp& b);
UOp operator|(const UOp& a, const UOp& b);
UOp operator^(const UOp& a, const UOp& b);
#define SLUICE_SCALAR_OPS(OP)                                                          \
  inline UOp operator OP(const UOp& a, double b) { return a OP a.const_like(b); }      \
  inline UOp operator OP(double a, const UOp& b) { return b.const_like(a) OP b; }      \
  inline UOp operator OP(const UOp& a, int b) { return a OP a.const_like_int(b); }     \
  inline UOp operator OP(int a, const UOp& b) { return b.const_like_int(a) OP b; }     \
  inline UOp operator OP(const UOp& a, int64_t b) { return a OP a.const_like_int(b); } \
  inline UOp operator OP(int64_t a, const UOp& b) { return b.const_like_int(a) OP b; }
SLUICE_SCALAR_OPS(+)
SLUICE_SCALAR_OPS(-)
SLUICE_SCALAR_OPS(*)
SLUICE_SCALAR_OPS(/)
SLUICE_SCALAR_OPS(%)
#undef SLUICE_SCALAR_OPS

// The node behind a handle. Only uop.cpp creates them.
class UOpNode {
 public:
  Op op;
  DType dtype;
  Arg arg;
  size_t hash;
  uint32_t nsrc;
  std::span<const UOp> src() const { return {reinterpret_cast<const UOp*>(this + 1), nsrc}; }

  mutable std::atomic<uint32_t> refs{1};
  // Range-analysis cache, filled on first use (any thread; the values are a pure function of the node).
  mutable std::atomic<uint8_t> range_ready{0};
  mutable std::atomic<double> vmin{0}, vmax{0};
  // Shape cache of tensor-level nodes, filled on first use (see UOp::shape).
  mutable std::atomic<const Shape*> shape{nullptr};
  mutable std::atomic<const char*> tag{nullptr};  // see UOp::tag

  ~UOpNode() { delete shape.load(std::memory_order_relaxed); }
};

inline UOp::UOp(const UOp& o) noexcept : n_(o.n_) {
  if (n_) n_->refs.fetch_add(1, std::memory_order_relaxed);
}
inline Op UOp::op() const { return n_->op; }
inline DType UOp::dtype() const { return n_->dtype; }
inline std::span<const UOp> UOp::src() const { return n_->src(); }
inline const UOp& UOp::src(size_t i) const { return n_->src()[i]; }
inline size_t UOp::num_src() const { return n_->nsrc; }
inline const Arg& UOp::arg() const { return n_->arg; }
inline size_t UOp::hash() const { return n_->hash; }

}  // namespace sluice

template <>
struct std::hash<sluice::UOp> {
  size_t operator()(const sluice::UOp& u) const noexcept { return u.get() ? u.hash() : 0; }
};
