#pragma once
// A small SPIR-V module builder (DESIGN.md §3): result ids, deduplicated types and constants, decorations,
// capabilities and extensions (each declared once, and only when something asked for it), one entry point
// with its execution modes, functions made of blocks, and the binary words of the module.
//
// Instructions are appended to the section the SPIR-V logical layout puts them in, so callers may build in
// any order: a type or constant made while a function body is being written still lands before the
// functions. The caller is responsible for structured control flow (OpSelectionMerge / OpLoopMerge before
// the branch that opens a construct); spirv-val checks the rest.
//
// Integer types are declared with signedness 0 (one type per width): signed and unsigned arithmetic differ
// in the opcodes (OpSDiv / OpUDiv, OpSLessThan / OpULessThan), never in the types, so casts between
// int32 and uint32 need no instruction.
//
// Not thread-safe: one builder builds one module.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace sluice::spirv {

using Id = uint32_t;

// The enumerants this project uses, with the values of the SPIR-V specification (unified1); Glsl are
// GLSL.std.450 instruction numbers.
// clang-format off
enum class Op : uint16_t {
  Name = 5, Extension = 10, ExtInstImport = 11, ExtInst = 12, MemoryModel = 14, EntryPoint = 15,
  ExecutionMode = 16, Capability = 17, TypeVoid = 19, TypeBool = 20, TypeInt = 21, TypeFloat = 22,
  TypeVector = 23, TypeArray = 28, TypeRuntimeArray = 29, TypeStruct = 30, TypePointer = 32, TypeFunction = 33,
  ConstantTrue = 41, ConstantFalse = 42, Constant = 43, ConstantComposite = 44, Function = 54,
  FunctionEnd = 56, Variable = 59, Load = 61, Store = 62, AccessChain = 65, Decorate = 71, MemberDecorate = 72,
  CompositeConstruct = 80, CompositeExtract = 81, ConvertFToU = 109, ConvertFToS = 110, ConvertSToF = 111,
  ConvertUToF = 112, UConvert = 113, SConvert = 114, FConvert = 115, Bitcast = 124, SNegate = 126,
  FNegate = 127, IAdd = 128, FAdd = 129, ISub = 130, FSub = 131, IMul = 132, FMul = 133, UDiv = 134,
  SDiv = 135, FDiv = 136, UMod = 137, SRem = 138, IsNan = 156, LogicalEqual = 164, LogicalNotEqual = 165,
  LogicalOr = 166, LogicalAnd = 167, LogicalNot = 168, Select = 169, IEqual = 170, INotEqual = 171,
  UGreaterThanEqual = 174, ULessThan = 176, SLessThan = 177, FOrdEqual = 180, FOrdLessThan = 184,
  FUnordNotEqual = 183, ShiftRightLogical = 194, ShiftRightArithmetic = 195, ShiftLeftLogical = 196,
  BitwiseOr = 197, BitwiseXor = 198, BitwiseAnd = 199, ControlBarrier = 224, Phi = 245, LoopMerge = 246,
  SelectionMerge = 247, Label = 248, Branch = 249, BranchConditional = 250, Return = 253,
};
enum class Capability : uint32_t {
  Shader = 1, Float16 = 9, Float64 = 10, Int64 = 11, Int16 = 22, Int8 = 39, StorageBuffer16BitAccess = 4433,
  SignedZeroInfNanPreserve = 4466, StorageBuffer8BitAccess = 4448,
};
enum class Storage : uint32_t {
  Input = 1, Workgroup = 4, Function = 7, PushConstant = 9, StorageBuffer = 12,
};
enum class Decoration : uint32_t {
  Block = 2, ArrayStride = 6, BuiltIn = 11, NonWritable = 24, Binding = 33, DescriptorSet = 34, Offset = 35,
};
enum class BuiltIn : uint32_t {
  WorkgroupId = 26, LocalInvocationId = 27,
};
enum class ExecutionMode : uint32_t {
  LocalSize = 17, SignedZeroInfNanPreserve = 4461,
};
enum class Glsl : uint32_t {
  Trunc = 3, Sin = 13, Exp2 = 29, Log2 = 30, Sqrt = 31,
};
// clang-format on
inline constexpr uint32_t kScopeWorkgroup = 2;
inline constexpr uint32_t kSemanticsAcquireRelease = 0x8, kSemanticsWorkgroupMemory = 0x100;

class Builder {
 public:
  // version: 0x00010300 (1.3) ... 0x00010600 (1.6), the header's encoding.
  explicit Builder(uint32_t version = 0x00010500);

  uint32_t version() const { return version_; }
  Id fresh() { return next_++; }

  // --- module-level declarations, each emitted once ---
  void capability(Capability c);
  void extension(const std::string& name);
  Id glsl_std_450();  // OpExtInstImport "GLSL.std.450"
  void name(Id id, const std::string& n);
  void decorate(Id id, Decoration d, std::vector<uint32_t> literals = {});
  void member_decorate(Id struct_type, uint32_t member, Decoration d, std::vector<uint32_t> literals = {});

  // --- types: equal arguments give the same id (structs excepted: each call is a new type) ---
  Id type_void();
  Id type_bool();
  Id type_int(uint32_t width);    // Int64 is declared with a 64-bit type; 8/16 bits are the caller's choice
  Id type_float(uint32_t width);  // Float64 is declared with a 64-bit type; Float16 is the caller's
  Id type_vector(Id elem, uint32_t n);
  Id type_array(Id elem, uint32_t n);
  Id type_runtime_array(Id elem);
  Id type_struct(const std::vector<Id>& members);
  Id type_pointer(Storage s, Id pointee);
  Id type_function(Id ret, const std::vector<Id>& params = {});
  bool is_float(Id type) const;   // for constants of types made here
  uint32_t width(Id type) const;  // scalar width in bits (bool: 1)

  // --- constants, deduplicated by (type, value) ---
  Id constant_bool(bool v);
  // Integers as the low `width` bits of v (zero-extended: the types are signless), floats as their bits.
  Id constant_int(Id type, uint64_t v);
  Id constant_float(Id type, double v);  // rounded to the type's width (16, 32 or 64)
  Id constant_composite(Id type, const std::vector<Id>& parts);

  // --- global variables (not Function storage) ---
  Id variable(Id pointer_type, Storage s);

  // --- the entry point ---
  void entry_point(Id function, const std::string& n, const std::vector<Id>& interface);
  void execution_mode(Id function, ExecutionMode m, std::vector<uint32_t> literals);

  // --- functions: begin, blocks of instructions, end ---
  Id begin_function(Id return_type, Id function_type);
  void label(Id id);                   // starts a block
  Id local_variable(Id pointer_type);  // Function storage; placed at the top of the first block
  void inst(Op op, const std::vector<uint32_t>& operands);  // no result
  // A result: a new id, or `result` when the caller reserved one with fresh() (OpPhi's forward operands).
  Id value(Op op, Id type, const std::vector<uint32_t>& operands, Id result = 0);
  Id ext(Id type, Glsl fn, const std::vector<Id>& args);  // GLSL.std.450 instruction
  void end_function();

  // The module: header (magic, version, generator, bound, 0) then the sections.
  std::vector<uint32_t> words() const;

 private:
  using Words = std::vector<uint32_t>;
  static void put(Words& w, Op op, const std::vector<uint32_t>& operands);
  Id type(Op op, const std::vector<uint32_t>& operands);  // deduplicated type or constant
  static std::vector<uint32_t> string_words(const std::string& s);

  uint32_t version_;
  Id next_ = 1;
  std::set<uint32_t> caps_;
  std::vector<std::string> exts_;
  Id glsl_ = 0;
  Words ext_imports_, entry_, modes_, names_, decorations_, globals_, functions_;
  Words fn_vars_, fn_body_;  // the open function: its first block's variables, then everything else
  bool in_function_ = false, first_label_done_ = false;
  std::map<std::vector<uint32_t>, Id> dedup_;  // opcode and operands -> result id (types, constants)
  std::map<Id, std::pair<bool, uint32_t>> scalar_info_;  // type -> (is float, width)
  std::set<std::vector<uint32_t>> decorated_;            // decorations already emitted
};

// Little-endian bytes of the words (the form Renderer::render returns).
std::string to_bytes(const std::vector<uint32_t>& words);

}  // namespace sluice::spirv
