#pragma once
// CPU programs: C source compiled to a relocatable object (backends/cpu/compiler.h) and loaded by our own
// ELF loader (backends/cpu/elf.h), no linker and no dlopen.
//
// Kernel ABI — what a renderer emits for the CPU, one function per kernel:
//
//   void <name>(void* const* bufs, const int* vars, const unsigned* launch, int core_id, int n_cores);
//
//   bufs    the kernel's buffers, in layout order (host pointers; cast to the element type)
//   vars    its integer variables, in layout order
//   launch  launch[0..2] the global size in work-groups (x, y, z), launch[3..5] the local size
//   core_id, n_cores
//           the device calls the function once for each core_id 0 .. n_cores-1, on up to pool-size
//           threads at once. Together the calls must cover the whole grid, each work-group exactly once;
//           splitting the flattened grid into n_cores contiguous ranges is the intended scheme:
//             unsigned long n = (unsigned long)launch[0] * launch[1] * launch[2];
//             for (unsigned long g = n * core_id / n_cores; g < n * (core_id + 1) / n_cores; ++g) ...
//           n_cores is at most the number of work-groups. It may exceed the pool: a core's share runs
//           as several calls, so that the device sees the kernel progress (queue.h), on that core's
//           thread or, where that thread is late, on another; a kernel may not assume the calls run at
//           the same time, nor on which thread.
//
// A kernel must return (a kernel that never returns is a hang: device.h) and must not call back into
// sluice. It may use the C standard library and libm.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "hcq/compiler.h"
#include "hcq/program.h"

namespace sluice::cpu {

using KernelFn = void (*)(void* const* bufs, const int* vars, const unsigned* launch, int core_id,
                          int n_cores);

// Loads function `name` from an object produced by cpu::make_compiler (each call maps its own copy of the
// object). Throws hcq::Error `[load_program] ...` with the loader's message if the binary does not load
// (bad object, unsupported relocation, undefined symbol) or lacks the symbol.
std::unique_ptr<hcq::Program> load_program(hcq::Device& dev, const std::string& name,
                                           const hcq::Binary& binary, hcq::KernelLayout layout);

// For the command processor: the entry point of a program that load_program returned, and a handle that
// keeps its code mapped (an abandoned hung kernel may still be running its code).
KernelFn kernel_entry(const hcq::Program& p);
// The CPU time per work-group of the program's last run, all cores together (infinity before its first):
// the command processor runs a launch that this predicts cheap whole on its own thread (queue.cpp).
std::atomic<double>& group_cost_ns(const hcq::Program& p);
std::shared_ptr<void> library(const hcq::Program& p);

}  // namespace sluice::cpu
