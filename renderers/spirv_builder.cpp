#include "renderers/spirv_builder.h"

#include <bit>
#include <cstring>

#include "base/error.h"
#include "core/ir/dtype.h"

namespace sluice::spirv {

Builder::Builder(uint32_t version) : version_(version) {
  SLUICE_CHECK_IN(Error, "spirv", version >= 0x00010300 && version <= 0x00010600 && (version & 0xff) == 0)
      << "unsupported SPIR-V version 0x" << std::hex << version << " (1.3 to 1.6)";
  capability(Capability::Shader);
}

void Builder::put(Words& w, Op op, const std::vector<uint32_t>& operands) {
  w.push_back(uint32_t(operands.size() + 1) << 16 | uint32_t(op));
  w.insert(w.end(), operands.begin(), operands.end());
}

std::vector<uint32_t> Builder::string_words(const std::string& s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0);  // always NUL-terminated, padded to a word
  std::memcpy(w.data(), s.data(), s.size());
  return w;
}

void Builder::capability(Capability c) { caps_.insert(uint32_t(c)); }

void Builder::extension(const std::string& n) {
  for (const std::string& e : exts_)
    if (e == n) return;
  exts_.push_back(n);
}

Id Builder::glsl_std_450() {
  if (!glsl_) {
    glsl_ = fresh();
    std::vector<uint32_t> ops{glsl_};
    for (uint32_t w : string_words("GLSL.std.450")) ops.push_back(w);
    put(ext_imports_, Op::ExtInstImport, ops);
  }
  return glsl_;
}

void Builder::name(Id id, const std::string& n) {
  std::vector<uint32_t> ops{id};
  for (uint32_t w : string_words(n)) ops.push_back(w);
  put(names_, Op::Name, ops);
}

void Builder::decorate(Id id, Decoration d, std::vector<uint32_t> literals) {
  std::vector<uint32_t> ops{id, uint32_t(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  std::vector<uint32_t> key = ops;
  key.insert(key.begin(), uint32_t(Op::Decorate));
  if (decorated_.insert(key).second) put(decorations_, Op::Decorate, ops);
}

void Builder::member_decorate(Id st, uint32_t member, Decoration d, std::vector<uint32_t> literals) {
  std::vector<uint32_t> ops{st, member, uint32_t(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  std::vector<uint32_t> key = ops;
  key.insert(key.begin(), uint32_t(Op::MemberDecorate));
  if (decorated_.insert(key).second) put(decorations_, Op::MemberDecorate, ops);
}

// Types have their result id first; constants have (result type, result id). The key leaves the result
// id out, so equal declarations share one id.
Id Builder::type(Op op, const std::vector<uint32_t>& operands) {
  std::vector<uint32_t> key = operands;
  key.insert(key.begin(), uint32_t(op));
  if (auto it = dedup_.find(key); it != dedup_.end()) return it->second;
  const Id id = fresh();
  const bool is_constant =
      op == Op::ConstantTrue || op == Op::ConstantFalse || op == Op::Constant || op == Op::ConstantComposite;
  std::vector<uint32_t> ops = operands;
  ops.insert(ops.begin() + (is_constant ? 1 : 0), id);
  put(globals_, op, ops);
  dedup_[key] = id;
  return id;
}

Id Builder::type_void() { return type(Op::TypeVoid, {}); }
Id Builder::type_bool() {
  const Id t = type(Op::TypeBool, {});
  scalar_info_[t] = {false, 1};
  return t;
}
Id Builder::type_int(uint32_t width) {
  SLUICE_CHECK_IN(Error, "spirv", width == 8 || width == 16 || width == 32 || width == 64)
      << "no " << width << "-bit integer type";
  if (width == 64) capability(Capability::Int64);
  const Id t = type(Op::TypeInt, {width, 0});
  scalar_info_[t] = {false, width};
  return t;
}
Id Builder::type_float(uint32_t width) {
  SLUICE_CHECK_IN(Error, "spirv", width == 16 || width == 32 || width == 64)
      << "no " << width << "-bit float type";
  if (width == 64) capability(Capability::Float64);
  const Id t = type(Op::TypeFloat, {width});
  scalar_info_[t] = {true, width};
  return t;
}
Id Builder::type_vector(Id elem, uint32_t n) {
  SLUICE_CHECK_IN(Error, "spirv", n >= 2 && n <= 4) << "no vector of " << n << " components (2 to 4)";
  return type(Op::TypeVector, {elem, n});
}
Id Builder::type_array(Id elem, uint32_t n) {
  return type(Op::TypeArray, {elem, constant_int(type_int(32), n)});
}
Id Builder::type_runtime_array(Id elem) { return type(Op::TypeRuntimeArray, {elem}); }
Id Builder::type_struct(const std::vector<Id>& members) {
  const Id id = fresh();
  std::vector<uint32_t> ops{id};
  ops.insert(ops.end(), members.begin(), members.end());
  put(globals_, Op::TypeStruct, ops);
  return id;
}
Id Builder::type_pointer(Storage s, Id pointee) { return type(Op::TypePointer, {uint32_t(s), pointee}); }
Id Builder::type_function(Id ret, const std::vector<Id>& params) {
  std::vector<uint32_t> ops{ret};
  ops.insert(ops.end(), params.begin(), params.end());
  return type(Op::TypeFunction, ops);
}

bool Builder::is_float(Id t) const {
  auto it = scalar_info_.find(t);
  SLUICE_ASSERT(it != scalar_info_.end());
  return it->second.first;
}
uint32_t Builder::width(Id t) const {
  auto it = scalar_info_.find(t);
  SLUICE_ASSERT(it != scalar_info_.end());
  return it->second.second;
}

Id Builder::constant_bool(bool v) { return type(v ? Op::ConstantTrue : Op::ConstantFalse, {type_bool()}); }

Id Builder::constant_int(Id t, uint64_t v) {
  const uint32_t w = width(t);
  if (w == 64) return type(Op::Constant, {t, uint32_t(v), uint32_t(v >> 32)});
  if (w < 32) v &= (uint64_t(1) << w) - 1;  // narrow literals are zero-extended for signless types
  return type(Op::Constant, {t, uint32_t(v)});
}

Id Builder::constant_float(Id t, double v) {
  switch (width(t)) {
    case 16: return type(Op::Constant, {t, float_to_half_bits(float(v))});
    case 32: return type(Op::Constant, {t, std::bit_cast<uint32_t>(float(v))});
    default: {
      const uint64_t b = std::bit_cast<uint64_t>(v);
      return type(Op::Constant, {t, uint32_t(b), uint32_t(b >> 32)});
    }
  }
}

Id Builder::constant_composite(Id t, const std::vector<Id>& parts) {
  std::vector<uint32_t> ops{t};
  ops.insert(ops.end(), parts.begin(), parts.end());
  return type(Op::ConstantComposite, ops);
}

Id Builder::variable(Id pointer_type, Storage s) {
  const Id id = fresh();
  put(globals_, Op::Variable, {pointer_type, id, uint32_t(s)});
  return id;
}

void Builder::entry_point(Id function, const std::string& n, const std::vector<Id>& interface) {
  std::vector<uint32_t> ops{5 /* GLCompute */, function};
  for (uint32_t w : string_words(n)) ops.push_back(w);
  ops.insert(ops.end(), interface.begin(), interface.end());
  put(entry_, Op::EntryPoint, ops);
}

void Builder::execution_mode(Id function, ExecutionMode m, std::vector<uint32_t> literals) {
  std::vector<uint32_t> ops{function, uint32_t(m)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  put(modes_, Op::ExecutionMode, ops);
}

Id Builder::begin_function(Id return_type, Id function_type) {
  SLUICE_ASSERT(!in_function_);
  const Id id = fresh();
  put(functions_, Op::Function, {return_type, id, 0 /* FunctionControl None */, function_type});
  in_function_ = true, first_label_done_ = false;
  return id;
}

void Builder::label(Id id) {
  SLUICE_ASSERT(in_function_);
  if (!first_label_done_) {  // the first block's label goes before its variables
    put(functions_, Op::Label, {id});
    first_label_done_ = true;
    return;
  }
  put(fn_body_, Op::Label, {id});
}

Id Builder::local_variable(Id pointer_type) {
  const Id id = fresh();
  put(fn_vars_, Op::Variable, {pointer_type, id, uint32_t(Storage::Function)});
  return id;
}

void Builder::inst(Op op, const std::vector<uint32_t>& operands) { put(fn_body_, op, operands); }

Id Builder::value(Op op, Id t, const std::vector<uint32_t>& operands, Id result) {
  const Id id = result ? result : fresh();
  std::vector<uint32_t> ops{t, id};
  ops.insert(ops.end(), operands.begin(), operands.end());
  put(fn_body_, op, ops);
  return id;
}

Id Builder::ext(Id t, Glsl fn, const std::vector<Id>& args) {
  std::vector<uint32_t> ops{glsl_std_450(), uint32_t(fn)};
  ops.insert(ops.end(), args.begin(), args.end());
  return value(Op::ExtInst, t, ops);
}

void Builder::end_function() {
  SLUICE_ASSERT(in_function_ && first_label_done_);
  functions_.insert(functions_.end(), fn_vars_.begin(), fn_vars_.end());
  functions_.insert(functions_.end(), fn_body_.begin(), fn_body_.end());
  put(functions_, Op::FunctionEnd, {});
  fn_vars_.clear(), fn_body_.clear();
  in_function_ = false;
}

std::vector<uint32_t> Builder::words() const {
  SLUICE_ASSERT(!in_function_);
  Words w = {0x07230203, version_, 0 /* generator */, next_, 0};
  for (uint32_t c : caps_) put(w, Op::Capability, {c});
  for (const std::string& e : exts_) put(w, Op::Extension, string_words(e));
  w.insert(w.end(), ext_imports_.begin(), ext_imports_.end());
  put(w, Op::MemoryModel, {0 /* Logical */, 1 /* GLSL450 */});
  for (const Words* s : {&entry_, &modes_, &names_, &decorations_, &globals_, &functions_})
    w.insert(w.end(), s->begin(), s->end());
  return w;
}

std::string to_bytes(const std::vector<uint32_t>& words) {
  std::string s(words.size() * 4, '\0');
  for (size_t i = 0; i < words.size(); ++i)
    for (int b = 0; b < 4; ++b) s[4 * i + size_t(b)] = char(words[i] >> (8 * b) & 0xff);
  return s;
}

}  // namespace sluice::spirv
