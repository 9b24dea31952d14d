#pragma once
// The linear kernel: what codegen hands a renderer and what a runtime needs to launch it (DESIGN.md §2,
// "Codegen"). Produced by make_kernel (codegen.h) from one ScheduleItem AST.
//
// The uops are a flat list in execution order, block-structured by RANGE ... ENDRANGE pairs. Every value
// is a UOp whose sources come earlier in the list. The ops that appear:
//   DEFINE_GLOBAL  arg i: buffer i (dtype a pointer, ptr_size = elements)       declared once, outside
//   SPECIAL        arg VarArg{"gidxN", 0, size-1}: the work-group id along launch dimension N
//   CONST          a literal (renderers inline it)
//   RANGE(end)     arg int64 axis: a loop 0 <= ridx < end; closed by ENDRANGE(range)
//   INDEX(buf, idx[, valid])   the element buf[idx]; with valid, only where valid holds
//   LOAD(INDEX)    the element, or 0 where the INDEX's valid is false (never reads out of bounds)
//   STORE(INDEX, value)        writes the element (skipped where valid is false)
//   DEFINE_REG(identity, ranges...)  arg int64 id: an accumulator set to identity before its loops open
//   ASSIGN(acc, value)         acc = value inside the innermost loop; after the loops, the ASSIGN node
//                              stands for the accumulator's final value
//   ALU ops, CAST, BITCAST     as in the AST; integer ops wrap in their dtype (core/ir/alu.h)
//   SPECIAL        arg VarArg{"lidxN", 0, size-1}: the work-item id within its group along dimension N
//                  (LOCAL and GROUP opts; only where DeviceCaps::has_local)
//   DEFINE_LOCAL   arg int64 id; dtype a pointer in AddrSpace::Local with ptr_size elements: shared memory
//                  of the work-group (GROUP's partial results), declared once at the top level
//   BARRIER(stores...)         every work-item of the group waits until all reach it; its sources are the
//                  local STOREs it publishes. It sits at the top level (never inside a loop or branch)
//   LOAD(INDEX, BARRIER)       a load of shared memory ordered after that barrier
//   VECTORIZE(a, b, ...)       a vector of n scalars (dtype.count = n); GEP(v) arg int64 i: lane i of v
//   LOAD(INDEX) / STORE(INDEX, v), vector dtype (n = 2 or 4; CPU: to 16): n consecutive elements from idx,
//                  aligned, valid for all lanes (CPU: unaligned; vector ALU ops and DEFINE_REG: vectorize.h;
//                  a vector LOAD's INDEX may carry one valid for all lanes, 0 in every lane where false)
// Several RANGE nests may follow one another (GROUP: the partial sums, then the final reduction over the
// shared memory); nodes reading an accumulator's final value come after its nest closes.
// Index arithmetic is dtypes::index (int32), or int64 in a kernel whose buffers or index expressions may
// pass 2^30 (lower.h): SPECIAL, RANGE and the index expressions all take that dtype.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/uop.h"

namespace sluice::codegen {

// What codegen may assume about a device: capabilities, never APIs. Defaults describe the CPU device.
struct DeviceCaps {
  int global_dims = 1;  // launch dimensions available
  std::array<int64_t, 3> global_max = {0xffffffffLL, 0xffffffffLL, 0xffffffffLL};  // per dimension
  int64_t local_bytes = 0;        // shared memory per work-group (0: none; no LOCAL/GROUP opts)
  bool supports_float16 = false;  // half arithmetic (or storage at least) in the dialect
  // EXP2/LOG2/SIN builtins within a few ulp; false: codegen uses polynomials (transcendental.h)
  bool accurate_transcendentals = true;
  // Work-groups (opts.h): the CPU runs one work-item per group, so it has no local ids nor barriers.
  bool has_local = false;                        // local ids and barriers exist (LOCAL, GROUP need them)
  int64_t max_local_size = 1;                    // work-items per work-group, all dimensions together
  std::array<int64_t, 3> local_max = {1, 1, 1};  // work-items per work-group along each dimension
  int max_buffers = 1024;                        // buffers (DEFINE_GLOBALs) one kernel may take
  std::vector<int> vector_widths = {2, 4};       // float vector widths of LOAD/STORE (empty: none)
  int vector_registers = 32;  // registers of the widest width (a CPU register tile's accumulators use half)
  int compute_units = 8;      // threads or cores that share a launch's work-groups
  // Loop iterations a work-item may run, all its loops together (fit_loop_limit, opts.h, unrolls to fit):
  // llvmpipe (lavapipe) counts every loop's iterations against 65535 and then ends them without an error.
  int64_t max_loop = int64_t(1) << 62;
};

// An optimization action applied to a kernel (the reference design's OptOps; semantics in opts.h). The
// list is the kernel's record of them so BEAM results can be cached and replayed.
enum class OptOp : uint8_t { Upcast, Unroll, Local, Group, GroupTop, PadTo, NoLocals, TensorCore };
struct Opt {
  OptOp op;
  int64_t axis = 0;
  int64_t arg = 0;
  friend bool operator==(const Opt&, const Opt&) = default;
};

struct KernelBuffer {
  DType dtype;           // element dtype
  int64_t size = 0;      // elements
  bool written = false;  // stored by the kernel (the outputs)
  bool read = false;     // loaded by the kernel (an output written in place may be both)
};

struct Kernel {
  std::string name;                                 // "E_4_4", "r_64_128": a C identifier
  std::vector<KernelBuffer> bufs;                   // in DEFINE_GLOBAL order (ScheduleItem::bufs)
  std::vector<UOp> vars;                            // DEFINE_VAR scalar arguments in layout order (none yet)
  std::array<uint32_t, 3> global_size = {1, 1, 1};  // work-groups per launch dimension
  std::array<uint32_t, 3> local_size = {1, 1, 1};   // work-items per work-group
  int64_t local_bytes = 0;                          // shared memory the kernel declares
  std::vector<Opt> opts;                            // applied optimizations, in order
  Shape full_shape;                                 // the kernel's iteration shape (reduce input shape F)
  Shape output_shape;                               // F with the reduced axes 1
  std::vector<UOp> uops;                            // the linear program, see above

  uint64_t global_count() const { return uint64_t(global_size[0]) * global_size[1] * global_size[2]; }
  std::string str() const;  // one uop per line, for SLUICE_DEBUG=5 and test failures
};

}  // namespace sluice::codegen
