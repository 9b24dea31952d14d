#pragma once
// The CPU compiler: C source to a relocatable object with clang,
//   clang -O2 -c -fPIC -march=native -fno-math-errno -x c <unit.c> -o <unit.o>
// which backends/cpu/program.h loads with our own ELF loader (no link step, no dlopen). Cached on disk
// (hcq/compiler.h). compile_many splits a batch that is big enough into up to one unit per core (each
// unit must carry more compile work than starting clang costs), compiled by concurrent clang processes;
// a small batch stays one unit, one process. The cache key covers the clang binary (resolved path, size,
// modification time: an upgrade changes it), the flags and the host CPU (-march=native output differs
// between CPUs).
// clang is $SLUICE_CLANG if set, else `clang` on PATH; if there is none, compile throws CompileError.
#include <filesystem>
#include <memory>

#include "hcq/compiler.h"

namespace sluice::cpu {

// The clang kernels are compiled with: $SLUICE_CLANG if set, else `clang` on PATH; empty when PATH has none.
std::filesystem::path find_clang();

std::unique_ptr<hcq::Compiler> make_compiler(std::filesystem::path cache_dir = hcq::default_cache_dir());

}  // namespace sluice::cpu
