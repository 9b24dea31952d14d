#pragma once
// The CPU compiler: C source to a shared object with clang,
//   clang -O2 -shared -fPIC -march=native -x c <unit.c> -o <unit.so>
// cached on disk (hcq/compiler.h). compile_many puts all cache misses in one translation unit, one clang
// process. The cache key covers the clang binary (resolved path, size, modification time: an upgrade
// changes it), the flags and the host CPU (-march=native output differs between CPUs).
// clang is $SLUICE_CLANG if set, else `clang` on PATH; if there is none, compile throws CompileError.
#include <filesystem>
#include <memory>

#include "hcq/compiler.h"

namespace sluice::cpu {

std::unique_ptr<hcq::Compiler> make_compiler(std::filesystem::path cache_dir = hcq::default_cache_dir());

}  // namespace sluice::cpu
