#include "core/ir/uop.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/error.h"

namespace sluice {

// ---------------------------------------------------------------- args

namespace {
size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }
uint64_t bits(double d) { return std::bit_cast<uint64_t>(d); }
}  // namespace

bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a)) return bits(*x) == bits(std::get<double>(b));
  if (auto* x = std::get_if<std::shared_ptr<const ArgObject>>(&a)) {
    auto& y = std::get<std::shared_ptr<const ArgObject>>(b);
    return *x == y || (*x && y && (*x)->equals(*y));
  }
  return a == b;
}

size_t arg_hash(const Arg& a) {
  struct V {
    size_t operator()(std::monostate) const { return 0; }
    size_t operator()(bool b) const { return b ? 3 : 5; }
    size_t operator()(int64_t i) const { return std::hash<int64_t>{}(i); }
    size_t operator()(double d) const { return std::hash<uint64_t>{}(bits(d)); }
    size_t operator()(const std::string& s) const { return std::hash<std::string>{}(s); }
    size_t operator()(const std::vector<int64_t>& v) const {
      size_t h = v.size();
      for (int64_t x : v) h = mix(h, std::hash<int64_t>{}(x));
      return h;
    }
    size_t operator()(const ReduceArg& r) const { return mix((*this)(r.axes), size_t(r.op)); }
    size_t operator()(const VarArg& v) const { return mix(mix((*this)(v.name), v.min), v.max); }
    size_t operator()(const std::shared_ptr<const ArgObject>& o) const { return o ? o->hash() : 7; }
  };
  return mix(a.index(), std::visit(V{}, a));
}

std::string arg_str(const Arg& a) {
  struct V {
    std::string ints(const std::vector<int64_t>& v) const {
      std::string s = "(";
      for (int64_t x : v) s += std::to_string(x) + ", ";
      if (v.size() > 1) s.resize(s.size() - 2);
      if (v.size() == 1) s.pop_back();
      return s + ")";
    }
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      if (std::isnan(d)) return "nan";
      if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
      std::ostringstream os;
      os.precision(17);
      os << d;
      std::string s = os.str();
      return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
    }
    std::string operator()(const std::string& s) const { return "'" + s + "'"; }
    std::string operator()(const std::vector<int64_t>& v) const { return ints(v); }
    std::string operator()(const ReduceArg& r) const {
      return "(Ops." + std::string(op_name(r.op)) + ", " + ints(r.axes) + ")";
    }
    std::string operator()(const VarArg& v) const {
      return "('" + v.name + "', " + std::to_string(v.min) + ", " + std::to_string(v.max) + ")";
    }
    std::string operator()(const std::shared_ptr<const ArgObject>& o) const { return o ? o->str() : "None"; }
  };
  return std::visit(V{}, a);
}

// ---------------------------------------------------------------- the intern table

namespace {
struct Key {  // a node-to-be, looked up without building it
  Op op;
  DType dtype;
  std::span<const UOp> src;
  Arg* arg;  // moved into the node when the key is inserted
  size_t hash;
};

size_t node_hash(Op op, DType dt, std::span<const UOp> src, const Arg& arg) {
  size_t h = mix(size_t(op) * 0x100000001b3ull, std::hash<DType>{}(dt));
  for (const UOp& s : src) h = mix(h, s.hash());
  h = mix(h, arg_hash(arg));
  // Finalizer (murmur3 fmix64): the table uses both the top bits (shard) and the low bits (slot).
  h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ull, h ^= h >> 33;
  return h;
}
}  // namespace

// Sharded by hash so threads building graphs rarely contend. Each shard is an open-addressing table
// (linear probing, backward-shift deletion): no allocation per entry and one cache line per probe, which
// is most of the cost of building and dropping nodes. Lookups take the shard lock and add a reference; the
// last reference is only ever dropped under the shard lock (see release), so a node found in the table is
// always alive.
struct UOpTable {
  static bool same(const UOpNode* n, const Key& k) {
    if (n->hash != k.hash || n->op != k.op || !(n->dtype == k.dtype) || n->nsrc != k.src.size()) return false;
    auto s = n->src();
    for (size_t i = 0; i < s.size(); i++)
      if (s[i].get() != k.src[i].get()) return false;
    return arg_equal(n->arg, *k.arg);
  }

  // A slot keeps the node's hash beside its pointer, so probing past other nodes touches only the slot
  // array, not the nodes themselves (which are scattered over the heap).
  struct Slot {
    size_t hash = 0;
    UOpNode* node = nullptr;
  };
  struct Shard {
    std::mutex mu;
    std::vector<Slot> slots = std::vector<Slot>(64);
    size_t count = 0;

    size_t mask() const { return slots.size() - 1; }
    size_t home(size_t hash) const { return (hash ^ (hash >> 32)) & mask(); }
    UOpNode* find(const Key& k) const {
      for (size_t i = home(k.hash);; i = (i + 1) & mask()) {
        const Slot& sl = slots[i];
        if (!sl.node || (sl.hash == k.hash && same(sl.node, k))) return sl.node;
      }
    }
    void place(UOpNode* n) {
      size_t i = home(n->hash);
      while (slots[i].node) i = (i + 1) & mask();
      slots[i] = {n->hash, n};
    }
    void insert(UOpNode* n) {
      if (2 * (count + 1) > slots.size()) {
        std::vector<Slot> old(slots.size() * 2);
        old.swap(slots);
        for (const Slot& sl : old)
          if (sl.node) place(sl.node);
      }
      place(n);
      count++;
    }
    void erase(const UOpNode* n) {
      size_t i = home(n->hash);
      while (slots[i].node != n) i = (i + 1) & mask();
      // Backward shift: pull later entries of the probe run into the hole unless that would move them
      // before their home slot.
      for (size_t j = (i + 1) & mask(); slots[j].node; j = (j + 1) & mask()) {
        size_t h = home(slots[j].hash);
        bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
        if (movable) {
          slots[i] = slots[j];
          i = j;
        }
      }
      slots[i] = Slot{};
      count--;
    }
  };
  static constexpr size_t kShards = 64;
  Shard shards[kShards];
  Shard& shard(size_t hash) { return shards[(hash >> 58) % kShards]; }

  static UOpTable& get() {
    static UOpTable* t = new UOpTable;  // never destroyed: handles in static objects may outlive main
    return *t;
  }

  static UOpNode* create(const Key& k) {
    void* mem = ::operator new(sizeof(UOpNode) + k.src.size() * sizeof(UOp));
    UOpNode* n = new (mem) UOpNode{k.op, k.dtype, std::move(*k.arg), k.hash, uint32_t(k.src.size())};
    UOp* s = reinterpret_cast<UOp*>(n + 1);
    for (size_t i = 0; i < k.src.size(); i++) new (s + i) UOp(k.src[i]);
    return n;
  }

  UOpNode* intern(const Key& k) {
    Shard& sh = shard(k.hash);
    std::lock_guard lock(sh.mu);
    if (UOpNode* n = sh.find(k)) {
      n->refs.fetch_add(1, std::memory_order_relaxed);
      return n;
    }
    UOpNode* n = create(k);
    sh.insert(n);
    return n;
  }

  // Drop one reference. The final one is dropped under the shard lock; freeing is iterative (sources are
  // pushed onto a work list) so long chains do not recurse. The work list is a local of the outermost
  // release on this thread; a release nested inside it (a node's arg may own UOps) only appends to it. No
  // thread_local object with a destructor: UOps held by static objects are released after those are gone.
  // A stack of nodes whose last reference is being dropped: a few entries inline (most frees release a
  // short chain), spilling to the heap only for wide or deep graphs.
  struct WorkList {
    UOpNode* inline_[32];
    size_t n = 0;
    std::vector<UOpNode*> spill;
    void push(UOpNode* p) {
      if (n < std::size(inline_))
        inline_[n++] = p;
      else
        spill.push_back(p);
    }
    bool empty() const { return n == 0 && spill.empty(); }
    UOpNode* pop() {
      if (!spill.empty()) {
        UOpNode* p = spill.back();
        spill.pop_back();
        return p;
      }
      return inline_[--n];
    }
  };

  void release(UOpNode* n) {
    if (drop_shared(n)) return;
    thread_local WorkList* active = nullptr;
    if (active) {
      active->push(n);
      return;
    }
    WorkList work;
    active = &work;
    free_last(n, work);
    while (!work.empty()) {
      UOpNode* m = work.pop();
      if (!drop_shared(m)) free_last(m, work);
    }
    active = nullptr;
  }
  // Drops a reference that is not the last one; false (nothing done) when it may be the last.
  static bool drop_shared(UOpNode* m) {
    uint32_t r = m->refs.load(std::memory_order_relaxed);
    while (r > 1)
      if (m->refs.compare_exchange_weak(r, r - 1, std::memory_order_acq_rel)) return true;
    return false;
  }
  void free_last(UOpNode* m, WorkList& work) {
    {
      Shard& sh = shard(m->hash);
      std::lock_guard lock(sh.mu);
      if (m->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;  // a lookup took a reference
      sh.erase(m);
    }
    UOp* s = reinterpret_cast<UOp*>(m + 1);
    for (uint32_t i = 0; i < m->nsrc; i++) {
      work.push(s[i].n_);
      s[i].n_ = nullptr;  // the reference moved to the work list
    }
    m->~UOpNode();
    ::operator delete(m);
  }

  size_t size() {
    size_t total = 0;
    for (Shard& sh : shards) {
      std::lock_guard lock(sh.mu);
      total += sh.count;
    }
    return total;
  }
};

UOp& UOp::operator=(const UOp& o) noexcept {
  if (o.n_) o.n_->refs.fetch_add(1, std::memory_order_relaxed);
  if (n_) UOpTable::get().release(n_);
  n_ = o.n_;
  return *this;
}
UOp& UOp::operator=(UOp&& o) noexcept {
  if (this != &o) {
    if (n_) UOpTable::get().release(n_);
    n_ = o.n_;
    o.n_ = nullptr;
  }
  return *this;
}
UOp::~UOp() {
  if (n_) UOpTable::get().release(n_);
}
size_t UOp::table_size() { return UOpTable::get().size(); }

UOp UOp::make(Op op, DType dtype, std::span<const UOp> src, Arg arg) {
  for (const UOp& s : src) SLUICE_ASSERT(s.n_ != nullptr);
  Key k{op, dtype, src, &arg, node_hash(op, dtype, src, arg)};
  return UOp(UOpTable::get().intern(k));
}
UOp UOp::make(Op op, DType dtype, std::initializer_list<UOp> src, Arg arg) {
  return make(op, dtype, std::span<const UOp>(src.begin(), src.size()), std::move(arg));
}

// ---------------------------------------------------------------- constants

UOp UOp::const_(DType dt, double v) {
  if (dt.is_float()) return make(Op::Const, dt, {}, round_float(dt.base(), v));
  if (dt.is_bool()) return make(Op::Const, dt, {}, bool(v != 0));
  SLUICE_CHECK_AS(DTypeError, dt.is_int()) << "cannot make a constant of dtype " << dt.name();
  SLUICE_CHECK_AS(ValueError, std::isfinite(v)) << "cannot make an integer constant from " << v;
  // C semantics of a float -> integer cast, then wrap-around to the dtype.
  int64_t i = dt.is_unsigned() && v >= 9223372036854775808.0 ? int64_t(uint64_t(v)) : int64_t(v);
  return make(Op::Const, dt, {}, wrap_int(dt.base(), i));
}
UOp UOp::const_int(DType dt, int64_t v) {
  if (dt.is_float())
    return make(Op::Const, dt, {},
                round_float(dt.base(), dt.is_unsigned() ? double(uint64_t(v)) : double(v)));
  if (dt.is_bool()) return make(Op::Const, dt, {}, bool(v != 0));
  SLUICE_CHECK_AS(DTypeError, dt.is_int()) << "cannot make a constant of dtype " << dt.name();
  return make(Op::Const, dt, {}, wrap_int(dt.base(), v));
}
double UOp::const_value() const {
  SLUICE_ASSERT(op() == Op::Const);
  const Arg& a = arg();
  if (auto* d = std::get_if<double>(&a)) return *d;
  if (auto* b = std::get_if<bool>(&a)) return *b;
  int64_t i = std::get<int64_t>(a);
  return dtype().scalar == Scalar::UInt64 ? double(uint64_t(i)) : double(i);
}
int64_t UOp::const_int_value() const {
  SLUICE_ASSERT(op() == Op::Const);
  const Arg& a = arg();
  if (auto* b = std::get_if<bool>(&a)) return *b;
  if (auto* d = std::get_if<double>(&a)) return int64_t(*d);
  return std::get<int64_t>(a);
}
UOp UOp::const_like(double v) const { return const_(dtype(), v); }
UOp UOp::const_like_int(int64_t v) const { return const_int(dtype(), v); }

UOp UOp::variable(const std::string& name, int64_t min, int64_t max, DType dt) {
  SLUICE_CHECK_AS(ValueError, min <= max)
      << "variable '" << name << "' has empty bounds [" << min << ", " << max << "]";
  SLUICE_CHECK_AS(DTypeError, dt.is_int())
      << "variable '" << name << "' must be an integer, not " << dt.name();
  return make(Op::DefineVar, dt, {}, VarArg{name, min, max});
}
UOp UOp::sink(std::span<const UOp> src) { return make(Op::Sink, dtypes::void_, src); }

// ---------------------------------------------------------------- graph

std::vector<UOp> UOp::toposort() const {
  std::vector<UOp> out;
  if (!n_) return out;
  std::unordered_set<const UOpNode*> seen;
  std::vector<std::pair<const UOp*, uint32_t>> stack{{this, 0}};  // node, next source to visit
  seen.insert(n_);
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->num_src()) {
      const UOp* s = &u->src(i++);
      if (seen.insert(s->get()).second) stack.push_back({s, 0});
    } else {
      out.push_back(*u);
      stack.pop_back();
    }
  }
  return out;
}

UOp UOp::with_src(std::span<const UOp> src) const { return make(op(), dtype(), src, arg()); }
UOp UOp::with_src(std::initializer_list<UOp> src) const { return make(op(), dtype(), src, arg()); }
UOp UOp::with_dtype(DType dt) const { return make(op(), dt, src(), arg()); }
UOp UOp::with_arg(Arg a) const { return make(op(), dtype(), src(), std::move(a)); }

UOp UOp::substitute(const std::vector<std::pair<UOp, UOp>>& map) const {
  std::unordered_map<const UOpNode*, UOp> done;
  for (auto& [k, v] : map) done[k.get()] = v;
  std::vector<UOp> srcs;
  for (const UOp& u : toposort()) {
    if (done.count(u.get())) continue;
    srcs.clear();
    bool changed = false;
    for (const UOp& s : u.src()) {
      const UOp& r = done.at(s.get());
      changed |= !(r == s);
      srcs.push_back(r);
    }
    done[u.get()] = changed ? u.with_src(srcs) : u;
  }
  return done.at(n_);
}

// ---------------------------------------------------------------- building ALU nodes

namespace {
void check_alu(Op op, std::span<const UOp> s) {
  auto base = [](const UOp& u) { return u.dtype().base(); };
  if (op_in(op, kBinary)) {
    // Shifts take any integer amount; everything else needs matching operands.
    SLUICE_CHECK_AS(DTypeError, op == Op::Shl || op == Op::Shr || s[0].dtype() == s[1].dtype())
        << "dtype mismatch: " << op_name(op) << " of " << s[0].dtype().name() << " and "
        << s[1].dtype().name();
  }
  DType d = base(s[0]);
  switch (op) {
    case Op::And:
    case Op::Or:
    case Op::Xor:
      SLUICE_CHECK_AS(DTypeError, d.is_int() || d.is_bool())
          << op_name(op) << " needs integers or bools, got " << d.name();
      break;
    case Op::Shl:
    case Op::Shr:
    case Op::IDiv:
    case Op::Mod:
      SLUICE_CHECK_AS(DTypeError, d.is_int() && base(s[1]).is_int())
          << op_name(op) << " needs integers, got " << d.name() << " and " << base(s[1]).name();
      break;
    case Op::FDiv:
    case Op::Exp2:
    case Op::Log2:
    case Op::Sin:
    case Op::Sqrt:
    case Op::Recip:
      SLUICE_CHECK_AS(DTypeError, d.is_float()) << op_name(op) << " needs a float, got " << d.name();
      break;
    case Op::Where:
      SLUICE_CHECK_AS(DTypeError, d.is_bool() && s[1].dtype() == s[2].dtype())
          << "WHERE needs a bool condition and matching branches, got " << d.name() << ", "
          << s[1].dtype().name() << ", " << s[2].dtype().name();
      break;
    case Op::MulAcc:
      SLUICE_CHECK_AS(DTypeError, s[0].dtype() == s[1].dtype() && s[1].dtype() == s[2].dtype())
          << "MULACC needs matching dtypes";
      break;
    default: break;
  }
}
UOp alu_node(Op op, std::initializer_list<UOp> src) {
  std::span<const UOp> s(src.begin(), src.size());
  SLUICE_CHECK_AS(ValueError, is_alu(op)) << op_name(op) << " is not an ALU op";
  check_alu(op, s);
  DType dt = op == Op::Where ? s[1].dtype() : s[0].dtype();
  if (is_comparison(op)) dt = dt.count > 1 ? dtypes::bool_.vec(dt.count) : dtypes::bool_;
  return UOp::make(op, dt, s);
}
}  // namespace

UOp UOp::alu(Op op) const { return alu_node(op, {*this}); }
UOp UOp::alu(Op op, const UOp& b) const { return alu_node(op, {*this, b}); }
UOp UOp::alu(Op op, const UOp& b, const UOp& c) const { return alu_node(op, {*this, b, c}); }
UOp UOp::cast(DType dt) const { return dtype() == dt ? *this : make(Op::Cast, dt, {*this}); }
UOp UOp::bitcast(DType dt) const {
  SLUICE_CHECK_AS(DTypeError, dt.itemsize() == dtype().itemsize())
      << "cannot bitcast " << dtype().name() << " to " << dt.name() << ": sizes differ";
  return make(Op::Bitcast, dt, {*this});
}

UOp operator+(const UOp& a, const UOp& b) { return a.alu(Op::Add, b); }
UOp operator-(const UOp& a, const UOp& b) { return a.alu(Op::Sub, b); }
UOp operator*(const UOp& a, const UOp& b) { return a.alu(Op::Mul, b); }
UOp operator/(const UOp& a, const UOp& b) { return a.alu(a.dtype().is_float() ? Op::FDiv : Op::IDiv, b); }
UOp operator%(const UOp& a, const UOp& b) { return a.alu(Op::Mod, b); }
UOp operator-(const UOp& a) { return a.alu(Op::Neg); }
UOp operator&(const UOp& a, const UOp& b) { return a.alu(Op::And, b); }
UOp operator|(const UOp& a, const UOp& b) { return a.alu(Op::Or, b); }
UOp operator^(const UOp& a, const UOp& b) { return a.alu(Op::Xor, b); }

// ---------------------------------------------------------------- printing

namespace {
std::string dtype_str(DType d) {
  if (d.is_ptr()) {
    std::string s = "dtypes." + d.deref().name() + ".ptr(";
    if (d.ptr_size >= 0) s += std::to_string(d.ptr_size);
    if (d.addr == AddrSpace::Local) s += std::string(d.ptr_size >= 0 ? ", " : "") + "local=True";
    return s + ")";
  }
  return "dtypes." + d.name();
}
}  // namespace

std::string UOp::str() const {
  if (!n_) return "UOp(null)";
  // Count uses inside this graph: a node used twice or more is printed once as `xN:=` and then by name.
  std::unordered_map<const UOpNode*, int> uses, names;
  for (const UOp& u : toposort())
    for (const UOp& s : u.src()) uses[s.get()]++;
  std::ostringstream os;
  struct Frame {
    const UOp* u;
    int depth;
    size_t next;
  };
  std::vector<Frame> stack{{this, 0, 0}};
  auto open = [&](const UOp& u, int depth) -> bool {  // prints the head; true when sources follow
    os << std::string(size_t(depth) * 2, ' ');
    auto named = names.find(u.get());
    if (named != names.end()) {
      os << "x" << named->second << ",\n";
      return false;
    }
    if (uses[u.get()] > 1) {
      int id = int(names.size()) + 1;
      names[u.get()] = id;
      os << "x" << id << ":=";
    }
    os << "UOp(Ops." << op_name(u.op()) << ", " << dtype_str(u.dtype()) << ", arg=" << arg_str(u.arg())
       << ", src=(";
    if (u.num_src() == 0) {
      os << "))" << (depth ? ",\n" : "");
      return false;
    }
    os << "\n";
    return true;
  };
  if (!open(*this, 0)) return os.str();
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.u->num_src()) {
      const UOp& s = f.u->src(f.next++);
      int d = f.depth + 1;
      if (open(s, d)) stack.push_back({&s, d, 0});
    } else {
      os << std::string(size_t(f.depth) * 2, ' ') << "))" << (f.depth ? ",\n" : "");
      stack.pop_back();
    }
  }
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const UOp& u) { return os << u.str(); }

}  // namespace sluice
