#pragma once
// Every op of the IR, declared once. The list generates `enum class Op`, the printed names and the op
// groups; everything keyed by op (rules, renderers, the evaluator) switches over this enum.
#include <cstdint>
#include <string_view>

namespace sluice {

// Group flags of an op.
enum OpGroup : uint16_t {
  kUnary = 1 << 0,        // ALU with one source
  kBinary = 1 << 1,       // ALU with two sources
  kTernary = 1 << 2,      // ALU with three sources
  kCommutative = 1 << 3,  // binary op whose sources may be swapped
  kMovement = 1 << 4,     // a view of its source (shape only)
  kBuffer = 1 << 5,       // names or moves memory
  kReduce = 1 << 6,       // reduces over axes or ranges
  kKernel = 1 << 7,       // only appears inside a kernel AST or a linear kernel
  kAlu = kUnary | kBinary | kTernary,
};

//  X(enumerator, printed name, groups)
#define SLUICE_OPS(X)                           \
  /* graph structure */                         \
  X(Sink, "SINK", 0)                            \
  X(Noop, "NOOP", 0)                            \
  X(Unique, "UNIQUE", 0)                        \
  X(Device, "DEVICE", 0)                        \
  X(Kernel, "KERNEL", 0)                        \
  X(Custom, "CUSTOM", 0)                        \
  /* tensor level: memory and realize points */ \
  X(Buffer, "BUFFER", kBuffer)                  \
  X(BufferView, "BUFFER_VIEW", kBuffer)         \
  X(Copy, "COPY", kBuffer)                      \
  X(Assign, "ASSIGN", kBuffer)                  \
  X(Contiguous, "CONTIGUOUS", 0)                \
  X(Detach, "DETACH", 0)                        \
  X(View, "VIEW", 0)                            \
  /* movement: views of their source */         \
  X(Reshape, "RESHAPE", kMovement)              \
  X(Permute, "PERMUTE", kMovement)              \
  X(Expand, "EXPAND", kMovement)                \
  X(Pad, "PAD", kMovement)                      \
  X(Shrink, "SHRINK", kMovement)                \
  X(Flip, "FLIP", kMovement)                    \
  /* reductions */                              \
  X(ReduceAxis, "REDUCE_AXIS", kReduce)         \
  X(Reduce, "REDUCE", kReduce | kKernel)        \
  /* kernel level */                            \
  X(DefineGlobal, "DEFINE_GLOBAL", kKernel)     \
  X(DefineLocal, "DEFINE_LOCAL", kKernel)       \
  X(DefineReg, "DEFINE_REG", kKernel)           \
  X(DefineVar, "DEFINE_VAR", 0)                 \
  X(Bind, "BIND", 0)                            \
  X(Special, "SPECIAL", kKernel)                \
  X(Range, "RANGE", kKernel)                    \
  X(EndRange, "ENDRANGE", kKernel)              \
  X(If, "IF", kKernel)                          \
  X(EndIf, "ENDIF", kKernel)                    \
  X(Barrier, "BARRIER", kKernel)                \
  X(Valid, "VALID", 0)                          \
  X(Index, "INDEX", kKernel)                    \
  X(Load, "LOAD", 0)                            \
  X(Store, "STORE", 0)                          \
  X(Const, "CONST", 0)                          \
  X(VConst, "VCONST", 0)                        \
  X(Vectorize, "VECTORIZE", 0)                  \
  X(Gep, "GEP", 0)                              \
  X(Cast, "CAST", 0)                            \
  X(Bitcast, "BITCAST", 0)                      \
  X(Wmma, "WMMA", kKernel)                      \
  /* unary ALU */                               \
  X(Exp2, "EXP2", kUnary)                       \
  X(Log2, "LOG2", kUnary)                       \
  X(Sin, "SIN", kUnary)                         \
  X(Sqrt, "SQRT", kUnary)                       \
  X(Recip, "RECIP", kUnary)                     \
  X(Neg, "NEG", kUnary)                         \
  X(Trunc, "TRUNC", kUnary)                     \
  /* binary ALU */                              \
  X(Add, "ADD", kBinary | kCommutative)         \
  X(Sub, "SUB", kBinary)                        \
  X(Mul, "MUL", kBinary | kCommutative)         \
  X(FDiv, "FDIV", kBinary)                      \
  X(IDiv, "IDIV", kBinary) /* C: toward 0 */    \
  X(Mod, "MOD", kBinary)   /* C: sign of a */   \
  X(Max, "MAX", kBinary | kCommutative)         \
  X(CmpLT, "CMPLT", kBinary)                    \
  X(CmpNE, "CMPNE", kBinary | kCommutative)     \
  X(And, "AND", kBinary | kCommutative)         \
  X(Or, "OR", kBinary | kCommutative)           \
  X(Xor, "XOR", kBinary | kCommutative)         \
  X(Shl, "SHL", kBinary)                        \
  X(Shr, "SHR", kBinary)                        \
  /* ternary ALU */                             \
  X(Where, "WHERE", kTernary)                   \
  X(MulAcc, "MULACC", kTernary)

enum class Op : uint8_t {
#define SLUICE_X(e, n, g) e,
  SLUICE_OPS(SLUICE_X)
#undef SLUICE_X
};
inline constexpr int kNumOps = int(Op::MulAcc) + 1;

namespace detail {
inline constexpr std::string_view kOpNames[] = {
#define SLUICE_X(e, n, g) n,
    SLUICE_OPS(SLUICE_X)
#undef SLUICE_X
};
inline constexpr uint16_t kOpGroups[] = {
#define SLUICE_X(e, n, g) uint16_t(g),
    SLUICE_OPS(SLUICE_X)
#undef SLUICE_X
};
}  // namespace detail

constexpr std::string_view op_name(Op op) { return detail::kOpNames[int(op)]; }
constexpr bool op_in(Op op, uint16_t groups) { return (detail::kOpGroups[int(op)] & groups) != 0; }
constexpr bool is_alu(Op op) { return op_in(op, kAlu); }
constexpr bool is_commutative(Op op) { return op_in(op, kCommutative); }
constexpr bool is_movement(Op op) { return op_in(op, kMovement); }
// Comparisons produce bool whatever their sources are.
constexpr bool is_comparison(Op op) { return op == Op::CmpLT || op == Op::CmpNE; }

}  // namespace sluice
