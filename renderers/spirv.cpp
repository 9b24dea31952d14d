#include "renderers/spirv.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "core/ir/uop.h"
#include "renderers/spirv_builder.h"

namespace sluice::render {
namespace {

using spirv::Builder;
using spirv::Capability;
using spirv::Glsl;
using spirv::Id;
using spirv::Storage;
using SOp = spirv::Op;

struct Memory {  // a DEFINE_GLOBAL or DEFINE_LOCAL
  Id var = 0;
  DType elem;  // the element's value dtype
  Storage storage;
};

struct Loop {  // an open RANGE: the counter's phi, its increment, and the construct's blocks
  Id counter, next, header, cont, merge;
};

class Emitter {
 public:
  Emitter(const SpirvOptions& o, const codegen::Kernel& k) : o_(o), k_(k), b_(o.version) {}
  std::string run();

 private:
  // --- types ---
  Id scalar(DType dt) {
    const int bits = 8 * dt.itemsize();
    auto need = [&](bool has, const char* feature) {
      SLUICE_CHECK_IN(DTypeError, "render", has)
          << dt.name() << " needs the device feature " << feature << " (SpirvOptions), which it lacks";
    };
    switch (dt.scalar) {
      case Scalar::Bool: return b_.type_bool();
      case Scalar::Int8:
      case Scalar::UInt8: need(o_.int8, "shaderInt8"), b_.capability(Capability::Int8); break;
      case Scalar::Int16:
      case Scalar::UInt16: need(o_.int16, "shaderInt16"), b_.capability(Capability::Int16); break;
      case Scalar::Int64:
      case Scalar::UInt64: need(o_.int64, "shaderInt64"); break;
      case Scalar::Float16: need(o_.float16, "shaderFloat16"), b_.capability(Capability::Float16); break;
      case Scalar::Float64: need(o_.float64, "shaderFloat64"); break;
      case Scalar::Int32:
      case Scalar::UInt32:
      case Scalar::Float32: break;
      default: SLUICE_FAIL(DTypeError, "render") << dt.name() << " has no SPIR-V type for Vulkan";
    }
    if (dt.is_float()) float_widths_.insert(bits);
    return dt.is_float() ? b_.type_float(uint32_t(bits)) : b_.type_int(uint32_t(bits));
  }
  Id type(DType dt) {  // a value's type: scalar or vector
    const Id s = scalar(dt.base());
    if (dt.count == 1) return s;
    SLUICE_CHECK_IN(DTypeError, "render", dt.count <= 4) << dt.name() << ": SPIR-V vectors have 2 to 4 lanes";
    return b_.type_vector(s, dt.count);
  }
  // A buffer element's type in memory: bool is a uint8 0/1; 8- and 16-bit elements need storage access.
  Id stored(DType dt) {
    if (dt.itemsize() == 1) {
      SLUICE_CHECK_IN(DTypeError, "render", o_.storage8)
          << dt.name() << " buffers need storageBuffer8BitAccess (SpirvOptions), which the device lacks";
      b_.capability(Capability::StorageBuffer8BitAccess);
      if (b_.version() < 0x00010500) b_.extension("SPV_KHR_8bit_storage");
      if (dt.is_bool()) return b_.type_int(8);
    } else if (dt.itemsize() == 2) {
      SLUICE_CHECK_IN(DTypeError, "render", o_.storage16)
          << dt.name() << " buffers need storageBuffer16BitAccess (SpirvOptions), which the device lacks";
      b_.capability(Capability::StorageBuffer16BitAccess);
    }
    return scalar(dt);
  }

  // --- constants (vectors splat the scalar) ---
  Id splat(DType dt, Id s) {
    if (dt.count == 1) return s;
    return b_.constant_composite(type(dt), std::vector<Id>(dt.count, s));
  }
  Id const_int(DType dt, int64_t v) {
    if (dt.is_bool()) return splat(dt, b_.constant_bool(v != 0));
    if (dt.is_float()) return const_float(dt, double(v));
    return splat(dt, b_.constant_int(scalar(dt.base()), uint64_t(v)));
  }
  Id const_float(DType dt, double v) {
    if (!dt.is_float()) return const_int(dt, int64_t(v));
    return splat(dt, b_.constant_float(scalar(dt.base()), v));
  }
  Id constant(const UOp& c) {
    const DType dt = c.dtype();
    return dt.is_float() ? const_float(dt, c.const_value()) : const_int(dt, c.const_int_value());
  }

  // --- values ---
  Id val(const UOp& u) {
    if (u.op() == Op::Const) return constant(u);
    if (auto it = acc_.find(u.get()); it != acc_.end())  // an accumulator: its current value
      return b_.value(SOp::Load, type(u.dtype()), {it->second});
    auto it = ids_.find(u.get());
    SLUICE_CHECK_IN(Error, "render", it != ids_.end())
        << "kernel " << k_.name << ": " << op_name(u.op()) << " is used before it is defined";
    return it->second;
  }
  Id op(SOp o, DType dt, std::vector<uint32_t> args) { return b_.value(o, type(dt), args); }

  void block(Id l) { b_.label(l), cur_ = l; }
  void branch(Id to) { b_.inst(SOp::Branch, {to}); }

  // Runs body only where cond holds (a structured if); returns the block body ended in.
  template <class F>
  Id guarded(Id cond, F body) {
    const Id t = b_.fresh(), m = b_.fresh();
    b_.inst(SOp::SelectionMerge, {m, 0});
    b_.inst(SOp::BranchConditional, {cond, t, m});
    block(t);
    body();
    const Id end = cur_;
    branch(m);
    block(m);
    return end;
  }

  Id element(const Memory& m, Id idx) {
    const Id elem = m.storage == Storage::StorageBuffer ? stored(m.elem) : type(m.elem);
    const Id ptr = b_.type_pointer(m.storage, elem);
    if (m.storage == Storage::StorageBuffer)
      return b_.value(SOp::AccessChain, ptr, {m.var, const_int(dtypes::int32, 0), idx});
    return b_.value(SOp::AccessChain, ptr, {m.var, idx});
  }
  Id offset(Id idx, DType idt, int j) { return j ? op(SOp::IAdd, idt, {idx, const_int(idt, j)}) : idx; }

  Id load_raw(const Memory& m, Id idx, DType idt, DType dt) {
    std::vector<Id> lanes;
    for (int j = 0; j < dt.count; ++j) {
      const Id p = element(m, offset(idx, idt, j));
      const bool packed_bool = m.elem.is_bool() && m.storage == Storage::StorageBuffer;
      Id v = b_.value(SOp::Load, packed_bool ? stored(m.elem) : type(m.elem), {p});
      if (packed_bool) {  // uint8 -> uint32 needs only the storage capability; then != 0
        v = b_.value(SOp::UConvert, b_.type_int(32), {v});
        v = op(SOp::INotEqual, dtypes::bool_, {v, const_int(dtypes::uint32, 0)});
      }
      lanes.push_back(v);
    }
    if (dt.count == 1) return lanes[0];
    return b_.value(SOp::CompositeConstruct, type(dt), {lanes.begin(), lanes.end()});
  }
  void store_raw(const Memory& m, Id idx, DType idt, DType dt, Id v) {
    for (int j = 0; j < dt.count; ++j) {
      Id x = dt.count == 1 ? v : b_.value(SOp::CompositeExtract, type(dt.base()), {v, uint32_t(j)});
      if (m.elem.is_bool() && m.storage == Storage::StorageBuffer) {
        x = op(SOp::Select, dtypes::uint32, {x, const_int(dtypes::uint32, 1), const_int(dtypes::uint32, 0)});
        x = b_.value(SOp::UConvert, stored(m.elem), {x});
      }
      b_.inst(SOp::Store, {element(m, offset(idx, idt, j)), x});
    }
  }

  void load(const UOp& u);
  void store(const UOp& u);
  Id alu(const UOp& u);
  Id int_div(const UOp& u, Id a, Id bv);
  Id fdiv(Id x, Id y, DType t);
  Id shift(const UOp& u, Id a, Id bv);
  Id cast(Id x, DType from, DType to);
  Id bitcast(Id x, DType from, DType to);
  void prologue();

  const SpirvOptions& o_;
  const codegen::Kernel& k_;
  Builder b_;
  Id cur_ = 0;
  std::unordered_map<const UOpNode*, Id> ids_;
  std::unordered_map<const UOpNode*, Id> acc_;  // DEFINE_REG and ASSIGN nodes -> Function variable
  std::unordered_map<const UOpNode*, Memory> mem_;
  std::vector<Memory> bufs_;
  std::vector<Id> interface_, inputs_;  // global variables the entry point uses; the Input ones
  std::vector<Loop> loops_;
  Id push_ = 0;
  std::set<int> float_widths_;  // float widths of the values the kernel computes with
};

void Emitter::load(const UOp& u) {
  const UOp& ix = u.src(0);
  const Memory& m = mem_.at(ix.src(0).get());
  const DType dt = u.dtype(), idt = ix.src(1).dtype();
  if (ix.num_src() < 3) {
    ids_[u.get()] = load_raw(m, val(ix.src(1)), idt, dt);
    return;
  }
  const UOp& valid = ix.src(2);
  if (valid.is_const()) {
    ids_[u.get()] = valid.const_int_value() ? load_raw(m, val(ix.src(1)), idt, dt) : const_int(dt, 0);
    return;
  }
  // Where the index is invalid nothing is read: a branch around the load, and 0 from the other edge.
  const Id cond = val(valid), idx = val(ix.src(1)), pre = cur_;
  Id v = 0;
  const Id end = guarded(cond, [&] { v = load_raw(m, idx, idt, dt); });
  ids_[u.get()] = b_.value(SOp::Phi, type(dt), {v, end, const_int(dt, 0), pre});
}

void Emitter::store(const UOp& u) {
  const UOp& ix = u.src(0);
  const Memory& m = mem_.at(ix.src(0).get());
  const DType dt = u.src(1).dtype(), idt = ix.src(1).dtype();
  const Id idx = val(ix.src(1)), v = val(u.src(1));
  if (ix.num_src() < 3 || (ix.src(2).is_const() && ix.src(2).const_int_value()))
    return store_raw(m, idx, idt, dt, v);
  if (ix.src(2).is_const()) return;  // never valid
  guarded(val(ix.src(2)), [&] { store_raw(m, idx, idt, dt, v); });
}

bool const_in(const UOp& u, int64_t lo, int64_t hi) {
  return u.is_const() && u.const_int_value() >= lo && u.const_int_value() <= hi;
}

// x/0 and x%0 give 0; signed MIN/-1 gives MIN (0 - x wraps), MIN%-1 gives 0. The division itself runs on
// a divisor that is never 0 or -1, because SPIR-V leaves those undefined.
Id Emitter::int_div(const UOp& u, Id a, Id d) {
  const DType dt = u.dtype();
  const bool sgn = !dt.is_unsigned();
  const bool idiv = u.op() == Op::IDiv;
  const SOp o = idiv ? (sgn ? SOp::SDiv : SOp::UDiv) : (sgn ? SOp::SRem : SOp::UMod);
  const UOp& den = u.src(1);
  if (den.is_const() && den.const_int_value() != 0 && !(sgn && den.const_int_value() == -1))
    return op(o, dt, {a, d});
  const Id zero = const_int(dt, 0), one = const_int(dt, 1);
  const Id is0 = op(SOp::IEqual, DType{Scalar::Bool, dt.count}, {d, zero});
  Id bad = is0, ism1 = 0;
  if (sgn) {
    ism1 = op(SOp::IEqual, DType{Scalar::Bool, dt.count}, {d, const_int(dt, -1)});
    bad = op(SOp::LogicalOr, DType{Scalar::Bool, dt.count}, {is0, ism1});
  }
  const Id safe = op(SOp::Select, dt, {bad, one, d});
  Id r = op(o, dt, {a, safe});
  if (sgn) r = op(SOp::Select, dt, {ism1, idiv ? op(SOp::SNegate, dt, {a}) : zero, r});
  return op(SOp::Select, dt, {is0, zero, r});
}

// Shifts by a negative amount or >= the width give 0; the shift itself uses the amount masked to the
// width, so no undefined shift is ever executed.
Id Emitter::shift(const UOp& u, Id a, Id s) {
  const DType dt = u.dtype();
  const int bits = 8 * dt.itemsize();
  const SOp o = u.op() == Op::Shl  ? SOp::ShiftLeftLogical
                : dt.is_unsigned() ? SOp::ShiftRightLogical
                                   : SOp::ShiftRightArithmetic;
  if (const_in(u.src(1), 0, bits - 1)) return op(o, dt, {a, s});
  const Id masked = op(SOp::BitwiseAnd, dt, {s, const_int(dt, bits - 1)});
  const Id out = op(SOp::UGreaterThanEqual, DType{Scalar::Bool, dt.count}, {s, const_int(dt, bits)});
  return op(SOp::Select, dt, {out, const_int(dt, 0), op(o, dt, {a, masked})});
}

Id Emitter::alu(const UOp& u) {
  const DType dt = u.op() == Op::Where ? u.src(1).dtype() : u.src(0).dtype(), rt = u.dtype();
  const DType bl{Scalar::Bool, dt.count};
  std::vector<Id> s;
  for (const UOp& x : u.src()) s.push_back(val(x));
  auto fail = [&]() -> Id {
    SLUICE_FAIL(Error, "render") << "no SPIR-V for " << op_name(u.op()) << " on " << dt.name() << " (kernel "
                                 << k_.name << ")";
    return 0;
  };
  if (u.op() == Op::Where) return op(SOp::Select, rt, {s[0], s[1], s[2]});
  if (dt.is_bool()) {  // bool arithmetic is OR / AND (core/ir/alu.h)
    switch (u.op()) {
      case Op::Add:
      case Op::Or:
      case Op::Max: return op(SOp::LogicalOr, rt, {s[0], s[1]});
      case Op::Mul:
      case Op::And: return op(SOp::LogicalAnd, rt, {s[0], s[1]});
      case Op::Sub:
      case Op::Xor:
      case Op::CmpNE: return op(SOp::LogicalNotEqual, rt, {s[0], s[1]});
      case Op::CmpLT: return op(SOp::LogicalAnd, rt, {op(SOp::LogicalNot, bl, {s[0]}), s[1]});  // !a & b
      case Op::Neg: return s[0];
      default: return fail();
    }
  }
  if (dt.is_float()) {
    const bool f64 = dt.scalar == Scalar::Float64, f16 = dt.itemsize() == 2;
    // float16 ops that are not exact in half compute in float32 and round back once.
    auto via32 = [&](auto f) {
      if (!f16) return f(s, dt);
      const DType f32{Scalar::Float32, dt.count};
      std::vector<Id> w;
      for (Id x : s) w.push_back(b_.value(SOp::FConvert, type(f32), {x}));
      return b_.value(SOp::FConvert, type(dt), {f(w, f32)});
    };
    auto glsl = [&](Glsl fn) {
      SLUICE_CHECK_IN(Error, "render", !f64 || fn == Glsl::Sqrt || fn == Glsl::Trunc)
          << op_name(u.op()) << " on float64 has no GLSL.std.450 instruction for Vulkan (kernel " << k_.name
          << "): build the kernel with DeviceCaps::accurate_transcendentals = false";
      if (fn == Glsl::Trunc) return b_.ext(type(dt), fn, {s[0]});  // exact in every width
      return via32([&](const std::vector<Id>& w, DType t) { return b_.ext(type(t), fn, {w[0]}); });
    };
    switch (u.op()) {
      case Op::Add: return op(SOp::FAdd, rt, {s[0], s[1]});
      case Op::Sub: return op(SOp::FSub, rt, {s[0], s[1]});
      case Op::Mul: return op(SOp::FMul, rt, {s[0], s[1]});
      case Op::MulAcc: return op(SOp::FAdd, rt, {op(SOp::FMul, rt, {s[0], s[1]}), s[2]});
      case Op::Neg: return op(SOp::FNegate, rt, {s[0]});
      case Op::FDiv: return via32([&](const std::vector<Id>& w, DType t) { return fdiv(w[0], w[1], t); });
      case Op::Recip:
        return via32([&](const std::vector<Id>& w, DType t) { return fdiv(const_float(t, 1), w[0], t); });
      case Op::Exp2: return glsl(Glsl::Exp2);
      case Op::Log2: return glsl(Glsl::Log2);
      case Op::Sin: return glsl(Glsl::Sin);
      case Op::Sqrt: return glsl(Glsl::Sqrt);
      case Op::Trunc: return glsl(Glsl::Trunc);
      case Op::CmpLT: return op(SOp::FOrdLessThan, rt, {s[0], s[1]});    // false with NaN, as C's <
      case Op::CmpNE: return op(SOp::FUnordNotEqual, rt, {s[0], s[1]});  // true with NaN, as C's !=
      case Op::Max: {
        const Id m = op(SOp::Select, rt, {op(SOp::FOrdLessThan, bl, {s[0], s[1]}), s[1], s[0]});
        const Id nan = op(SOp::LogicalOr, bl, {op(SOp::IsNan, bl, {s[0]}), op(SOp::IsNan, bl, {s[1]})});
        return op(SOp::Select, rt, {nan, const_float(rt, NAN), m});
      }
      default: return fail();
    }
  }
  const bool sgn = !dt.is_unsigned();
  switch (u.op()) {  // integers: SPIR-V integer arithmetic wraps in the width
    case Op::Add: return op(SOp::IAdd, rt, {s[0], s[1]});
    case Op::Sub: return op(SOp::ISub, rt, {s[0], s[1]});
    case Op::Mul: return op(SOp::IMul, rt, {s[0], s[1]});
    case Op::MulAcc: return op(SOp::IAdd, rt, {op(SOp::IMul, rt, {s[0], s[1]}), s[2]});
    case Op::Neg: return op(SOp::SNegate, rt, {s[0]});
    case Op::IDiv:
    case Op::Mod: return int_div(u, s[0], s[1]);
    case Op::Max:
      return op(SOp::Select, rt, {op(sgn ? SOp::SLessThan : SOp::ULessThan, bl, {s[0], s[1]}), s[1], s[0]});
    case Op::CmpLT: return op(sgn ? SOp::SLessThan : SOp::ULessThan, rt, {s[0], s[1]});
    case Op::CmpNE: return op(SOp::INotEqual, rt, {s[0], s[1]});
    case Op::And: return op(SOp::BitwiseAnd, rt, {s[0], s[1]});
    case Op::Or: return op(SOp::BitwiseOr, rt, {s[0], s[1]});
    case Op::Xor: return op(SOp::BitwiseXor, rt, {s[0], s[1]});
    case Op::Shl:
    case Op::Shr: return shift(u, s[0], s[1]);
    default: return fail();
  }
}

// x / y with IEEE results for y = +-0 (+-inf by the signs, NaN for 0/0 and NaN/0): Vulkan bounds OpFDiv's
// error only for 2^-126 <= |y| <= 2^126, and lavapipe's reciprocal gives NaN for x/0.
Id Emitter::fdiv(Id x, Id y, DType t) {
  const Id q = op(SOp::FDiv, t, {x, y});
  const int bits = 8 * t.itemsize();
  if (bits == 64 && !o_.int64) return q;  // the sign needs a 64-bit integer
  const DType it{bits == 64 ? Scalar::UInt64 : Scalar::UInt32, t.count}, bl{Scalar::Bool, t.count};
  const uint64_t sign = uint64_t(1) << (bits - 1), inf = bits == 64 ? 0x7ff0000000000000ull : 0x7f800000ull;
  const Id bx = op(SOp::Bitcast, it, {x}), by = op(SOp::Bitcast, it, {y});
  const Id s = op(SOp::BitwiseAnd, it, {op(SOp::BitwiseXor, it, {bx, by}), const_int(it, int64_t(sign))});
  const Id signed_inf = op(SOp::Bitcast, t, {op(SOp::BitwiseOr, it, {s, const_int(it, int64_t(inf))})});
  const Id x_nan =
      op(SOp::LogicalOr, bl, {op(SOp::FOrdEqual, bl, {x, const_float(t, 0)}), op(SOp::IsNan, bl, {x})});
  const Id by_zero = op(SOp::Select, t, {x_nan, const_float(t, NAN), signed_inf});
  return op(SOp::Select, t, {op(SOp::FOrdEqual, bl, {y, const_float(t, 0)}), by_zero, q});
}

// C casts (core/ir/alu.h exec_cast): float -> int truncates, -> bool tests != 0 (NaN is true).
Id Emitter::cast(Id x, DType from, DType to) {
  if (from.base() == to.base()) return x;
  const DType bl{Scalar::Bool, to.count};
  if (to.is_bool())
    return from.is_float() ? op(SOp::FUnordNotEqual, bl, {x, const_float(from, 0)})
                           : op(SOp::INotEqual, bl, {x, const_int(from, 0)});
  if (from.is_bool()) return op(SOp::Select, to, {x, const_int(to, 1), const_int(to, 0)});
  if (to.is_float()) {
    if (from.is_float()) return op(SOp::FConvert, to, {x});
    return op(from.is_unsigned() ? SOp::ConvertUToF : SOp::ConvertSToF, to, {x});
  }
  if (from.is_float()) return op(to.is_unsigned() ? SOp::ConvertFToU : SOp::ConvertFToS, to, {x});
  if (from.itemsize() == to.itemsize()) return x;  // signless types: int32 and uint32 are one type
  // Narrowing truncates either way; widening extends by the source's signedness.
  return op(from.itemsize() > to.itemsize() || from.is_unsigned() ? SOp::UConvert : SOp::SConvert, to, {x});
}

Id Emitter::bitcast(Id x, DType from, DType to) {
  SLUICE_CHECK_IN(Error, "render", from.itemsize() == to.itemsize() && !from.is_bool() && !to.is_bool())
      << "cannot bitcast " << from.name() << " to " << to.name();
  if (type(from) == type(to)) return x;
  return op(SOp::Bitcast, to, {x});
}

// Buffers, push constants and builtins: the module-level interface of the ABI (spirv.h).
void Emitter::prologue() {
  for (size_t i = 0; i < k_.bufs.size(); ++i) {
    const DType dt = k_.bufs[i].dtype.base();
    const Id elem = stored(dt), arr = b_.type_runtime_array(elem);
    b_.decorate(arr, spirv::Decoration::ArrayStride, {uint32_t(dt.itemsize())});
    const Id st = b_.type_struct({arr});
    b_.decorate(st, spirv::Decoration::Block);
    b_.member_decorate(st, 0, spirv::Decoration::Offset, {0});
    const Id var = b_.variable(b_.type_pointer(Storage::StorageBuffer, st), Storage::StorageBuffer);
    b_.decorate(var, spirv::Decoration::DescriptorSet, {0});
    b_.decorate(var, spirv::Decoration::Binding, {uint32_t(i)});
    if (!k_.bufs[i].written) b_.decorate(var, spirv::Decoration::NonWritable);
    b_.name(var, "data" + std::to_string(i));
    bufs_.push_back({var, dt, Storage::StorageBuffer});
    interface_.push_back(var);
  }
  if (!k_.vars.empty()) {
    std::vector<Id> members(k_.vars.size(), b_.type_int(32));
    const Id st = b_.type_struct(members);
    b_.decorate(st, spirv::Decoration::Block);
    for (size_t i = 0; i < members.size(); ++i) {
      SLUICE_CHECK_IN(DTypeError, "render", k_.vars[i].dtype().itemsize() == 4)
          << "variable " << k_.vars[i].arg_as<VarArg>().name << " is " << k_.vars[i].dtype().name()
          << "; push constants hold 32-bit integers";
      b_.member_decorate(st, uint32_t(i), spirv::Decoration::Offset, {uint32_t(4 * i)});
    }
    push_ = b_.variable(b_.type_pointer(Storage::PushConstant, st), Storage::PushConstant);
    b_.name(push_, "vars");
    interface_.push_back(push_);
  }
}

std::string Emitter::run() {
  SLUICE_CHECK_IN(Error, "render", k_.local_size[0] > 0 && k_.local_size[1] > 0 && k_.local_size[2] > 0)
      << "kernel " << k_.name << " has an empty local size";
  prologue();
  const Id fn = b_.begin_function(b_.type_void(), b_.type_function(b_.type_void()));
  b_.name(fn, k_.name);
  block(b_.fresh());

  // Work-group and local ids, and variables, are read once at the top: the first block dominates all.
  std::unordered_map<std::string, Id> builtin;
  auto builtin_id = [&](spirv::BuiltIn which, int dim) {
    const std::string key = std::to_string(int(which));
    const Id v3 = b_.type_vector(b_.type_int(32), 3);
    if (!builtin.count(key)) {
      const Id var = b_.variable(b_.type_pointer(Storage::Input, v3), Storage::Input);
      b_.decorate(var, spirv::Decoration::BuiltIn, {uint32_t(which)});
      interface_.push_back(var);
      inputs_.push_back(var);
      builtin[key] = b_.value(SOp::Load, v3, {var});
    }
    return b_.value(SOp::CompositeExtract, b_.type_int(32), {builtin[key], uint32_t(dim)});
  };
  for (const UOp& root : k_.uops)
    for (const UOp& u : root.toposort()) {
      if (ids_.count(u.get())) continue;
      if (u.op() == Op::Special) {
        const std::string& n = u.arg_as<VarArg>().name;  // "gidxN" / "lidxN"
        SLUICE_CHECK_IN(Error, "render",
                        n.size() == 5 && n[4] >= '0' && n[4] <= '2' &&
                            (n.rfind("gidx", 0) == 0 || n.rfind("lidx", 0) == 0))
            << "unknown SPECIAL " << n;
        SLUICE_CHECK_IN(DTypeError, "render", u.dtype() == dtypes::int32 || u.dtype() == dtypes::int64)
            << n << " must be int32 or int64, not " << u.dtype().name();
        const Id id = builtin_id(
            n[0] == 'g' ? spirv::BuiltIn::WorkgroupId : spirv::BuiltIn::LocalInvocationId, n[4] - '0');
        // The ids are unsigned 32-bit: a 64-bit index kernel (codegen/lower.h) zero-extends them.
        ids_[u.get()] = u.dtype() == dtypes::int32 ? id : cast(id, dtypes::uint32, u.dtype());
      } else if (u.op() == Op::DefineVar) {
        size_t i = 0;
        while (i < k_.vars.size() && !(k_.vars[i] == u)) ++i;
        SLUICE_CHECK_IN(Error, "render", i < k_.vars.size())
            << "variable " << u.arg_as<VarArg>().name << " is not among kernel " << k_.name << "'s vars";
        const Id p = b_.value(SOp::AccessChain, b_.type_pointer(Storage::PushConstant, b_.type_int(32)),
                              {push_, const_int(dtypes::int32, int64_t(i))});
        ids_[u.get()] = b_.value(SOp::Load, type(u.dtype()), {p});
      }
    }

  for (const UOp& u : k_.uops) {
    switch (u.op()) {
      case Op::DefineGlobal: {
        const int64_t i = u.arg_as<int64_t>();
        SLUICE_CHECK_IN(Error, "render", i >= 0 && size_t(i) < bufs_.size())
            << "DEFINE_GLOBAL " << i << " of a kernel with " << bufs_.size() << " buffers";
        mem_[u.get()] = bufs_[size_t(i)];
        break;
      }
      case Op::DefineLocal: {
        const DType el = u.dtype().deref();
        SLUICE_CHECK_IN(Error, "render", u.dtype().ptr_size > 0) << "DEFINE_LOCAL without a size";
        const Id arr = b_.type_array(type(el), uint32_t(u.dtype().ptr_size));
        const Id var = b_.variable(b_.type_pointer(Storage::Workgroup, arr), Storage::Workgroup);
        interface_.push_back(var);
        mem_[u.get()] = {var, el, Storage::Workgroup};
        break;
      }
      case Op::Special:
      case Op::DefineVar:
      case Op::Const:
      case Op::Index: break;  // read by their users
      case Op::Range: {
        const DType it = u.dtype();
        const Id end = val(u.src(0)), pre = cur_;
        const Loop l{b_.fresh(), b_.fresh(), b_.fresh(), b_.fresh(), b_.fresh()};
        const Id body = b_.fresh();
        branch(l.header);
        block(l.header);
        b_.value(SOp::Phi, type(it), {const_int(it, 0), pre, l.next, l.cont}, l.counter);
        const Id cond = op(SOp::SLessThan, dtypes::bool_, {l.counter, end});
        b_.inst(SOp::LoopMerge, {l.merge, l.cont, 0});
        b_.inst(SOp::BranchConditional, {cond, body, l.merge});
        block(body);
        ids_[u.get()] = l.counter;
        loops_.push_back(l);
        break;
      }
      case Op::EndRange: {
        SLUICE_CHECK_IN(Error, "render", !loops_.empty()) << "ENDRANGE without a RANGE in " << k_.name;
        const Loop l = loops_.back();
        loops_.pop_back();
        branch(l.cont);
        block(l.cont);
        const DType it = u.src(0).dtype();
        b_.value(SOp::IAdd, type(it), {l.counter, const_int(it, 1)}, l.next);
        branch(l.header);
        block(l.merge);
        break;
      }
      case Op::Load: load(u); break;
      case Op::Store: store(u); break;
      case Op::DefineReg: {
        const Id var = b_.local_variable(b_.type_pointer(Storage::Function, type(u.dtype())));
        b_.inst(SOp::Store, {var, val(u.src(0))});
        acc_[u.get()] = var;
        break;
      }
      case Op::Assign: {
        const Id var = acc_.at(u.src(0).get());
        b_.inst(SOp::Store, {var, val(u.src(1))});
        acc_[u.get()] = var;
        break;
      }
      case Op::Cast: ids_[u.get()] = cast(val(u.src(0)), u.src(0).dtype(), u.dtype()); break;
      case Op::Bitcast: ids_[u.get()] = bitcast(val(u.src(0)), u.src(0).dtype(), u.dtype()); break;
      case Op::Vectorize: {
        std::vector<uint32_t> parts;
        for (const UOp& x : u.src()) parts.push_back(val(x));
        ids_[u.get()] = b_.value(SOp::CompositeConstruct, type(u.dtype()), parts);
        break;
      }
      case Op::Gep:
        ids_[u.get()] =
            b_.value(SOp::CompositeExtract, type(u.dtype()), {val(u.src(0)), uint32_t(u.arg_as<int64_t>())});
        break;
      case Op::Barrier:
        b_.inst(SOp::ControlBarrier, {const_int(dtypes::uint32, spirv::kScopeWorkgroup),
                                      const_int(dtypes::uint32, spirv::kScopeWorkgroup),
                                      const_int(dtypes::uint32, spirv::kSemanticsAcquireRelease |
                                                                    spirv::kSemanticsWorkgroupMemory)});
        break;
      default:
        SLUICE_CHECK_IN(Error, "render", is_alu(u.op()))
            << "cannot render " << op_name(u.op()) << " as SPIR-V (kernel " << k_.name << ")";
        ids_[u.get()] = alu(u);
    }
  }
  SLUICE_CHECK_IN(Error, "render", loops_.empty()) << "kernel " << k_.name << " leaves a RANGE open";
  b_.inst(SOp::Return, {});
  b_.end_function();

  // Below SPIR-V 1.4 the interface lists only Input/Output variables.
  std::vector<Id> iface;
  for (Id v : interface_)
    if (b_.version() >= 0x00010400 || std::find(inputs_.begin(), inputs_.end(), v) != inputs_.end())
      iface.push_back(v);
  b_.entry_point(fn, k_.name, iface);
  b_.execution_mode(fn, spirv::ExecutionMode::LocalSize,
                    {k_.local_size[0], k_.local_size[1], k_.local_size[2]});
  for (int w : float_widths_) {  // IEEE infinities and NaNs (MAX, x/0), where the device can keep them
    if (!(w == 16 ? o_.inf_nan_preserve16 : w == 32 ? o_.inf_nan_preserve32 : o_.inf_nan_preserve64))
      continue;
    b_.capability(Capability::SignedZeroInfNanPreserve);
    if (b_.version() < 0x00010400) b_.extension("SPV_KHR_float_controls");
    b_.execution_mode(fn, spirv::ExecutionMode::SignedZeroInfNanPreserve, {uint32_t(w)});
  }
  return spirv::to_bytes(b_.words());
}

class SpirvRenderer final : public Renderer {
 public:
  explicit SpirvRenderer(SpirvOptions o) : o_(o) {}
  std::string render(const codegen::Kernel& k) const override { return Emitter(o_, k).run(); }

 private:
  SpirvOptions o_;
};

}  // namespace

std::unique_ptr<Renderer> make_spirv_renderer(const SpirvOptions& options) {
  return std::make_unique<SpirvRenderer>(options);
}

}  // namespace sluice::render
