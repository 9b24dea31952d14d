#pragma once
// The HIP compiler: HIP source (renderers/hip.h) to an AMDGPU code object (ELF) for one architecture,
//   clang++ -x hip --offload-arch=<arch> --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3
// with no HIP or ROCm installation: kernels declare what they use themselves (renderers/hip.h). The
// output is what hipModuleLoadData takes. compile_many puts a batch in one translation unit (one process).
//
// clang is $SLUICE_HIP_CLANG if set, else the first of clang++-19, -18, -17, -16, -15, clang++ on PATH
// whose LLVM knows the arch (gfx942 needs LLVM >= 17, gfx11xx >= 16); the version is read from the name
// or the resolved path (llvm-NN), without running it. The cache key covers the resolved clang binary
// (path, size, modification time), the arch and the flags.
//
// Failure: CompileError `[compile] ...` naming the kernels of the unit with clang's diagnostics (and the
// whole source at SLUICE_DEBUG >= 4); no suitable clang: CompileError saying what was searched.
// Thread-safe.
#include <filesystem>
#include <memory>
#include <string>

#include "hcq/compiler.h"

namespace sluice::hip {

std::unique_ptr<hcq::Compiler> make_compiler(const std::string& arch,
                                             std::filesystem::path cache_dir = hcq::default_cache_dir());
// The clang that would compile for arch, or "" (with the reason in *why) when there is none.
std::filesystem::path find_clang(const std::string& arch, std::string* why = nullptr);

}  // namespace sluice::hip
