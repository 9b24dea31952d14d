#pragma once
// The CPU compiler: C source to a relocatable object, as by
//   clang -O2 -c -fPIC -march=native -fno-math-errno -fno-unroll-loops -x c <unit.c> -o <unit.o>
// which backends/cpu/program.h loads with our own ELF loader (no link step, no dlopen). Cached on disk
// (hcq/compiler.h). The compile runs in this process with clang's library (backends/cpu/clang_library.h)
// when the build has it and $SLUICE_CLANG is unset, else as a clang process per unit. compile_many splits
// a batch that is big enough into up to one unit per core (each unit must carry more compile work than a
// process, or a compiler instance in process, costs to start), compiled at the same time; a small batch
// stays one unit. The cache key covers the compiler (the module, which holds clang, or the clang binary:
// resolved path, size, modification time, so an upgrade changes it), the flags and the host CPU
// (-march=native output differs between CPUs).
// The clang process is $SLUICE_CLANG if set, else `clang` on PATH; if there is none, compile throws
// CompileError.
#include <filesystem>
#include <memory>

#include "hcq/compiler.h"

namespace sluice::cpu {

// The clang kernels are compiled with: $SLUICE_CLANG if set, else `clang` on PATH; empty when PATH has none.
std::filesystem::path find_clang();

std::unique_ptr<hcq::Compiler> make_compiler(std::filesystem::path cache_dir = hcq::default_cache_dir());

}  // namespace sluice::cpu
