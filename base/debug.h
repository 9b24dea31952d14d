#pragma once
// SLUICE_DEBUG (DESIGN.md §5): what the library reports through its logger (base/log.h), at info level.
//   1  per realize: kernels, copies, compiler runs, device and wall time; per JIT replay the same
//   2  per kernel run (realize or replay): its number in the process, device, name, buffers, device memory
//      in use, time, cumulative time, GFLOP/s, GB/s and the tensor ops it came from
//   3  per kernel a device compiles for: its ScheduleItem's AST and the optimizations applied
//   4  each new kernel's generated source (and compile errors show it)
//   5  each new kernel's linearized uops
// Read from the environment once per process; set_debug_level overrides it. A level >= 1 lowers the log
// level to info, if higher, whichever way it is set. Thread-safe.
namespace sluice {
int debug_level();
void set_debug_level(int level);
}  // namespace sluice
