#pragma once
// The CUDA compiler: CUDA C (renderers/cuda.h) to a module for one exact architecture, with NVRTC loaded
// at run time (dlopen; no CUDA toolkit needed to build).
//   arch "sm_90"      -> CUBIN (nvrtcGetCUBIN): what cuModuleLoadData takes with no JIT
//   arch "compute_90" -> PTX text, NUL-terminated (also with ptx = true for an sm_ arch)
//   an arch this NVRTC does not know (a GPU newer than the toolkit: nvrtcGetSupportedArchs) -> PTX for
//                        the newest arch it knows below it, which the driver compiles for the GPU when
//                        cuModuleLoadData loads it (a driver at least as new as NVRTC is needed for that
//                        PTX); an arch older than every one it knows -> CompileError saying so
// Flags: --gpu-architecture=<arch> -default-device -I<toolkit include> (for cuda_fp16.h / cuda_bf16.h,
// which this NVRTC does not carry built in). The cache key (hcq/compiler.h) covers NVRTC's version, the
// arch, the output kind and the flags.
//
// NVRTC: libnvrtc.so, .so.13 or .so.12, searched in $CUDA_PATH/lib64, /usr/local/cuda/lib64, then the
// loader's default path. The toolkit's include directory: $CUDA_PATH/include, /usr/local/cuda/include,
// or ../include next to the library that loaded.
//
// Failure: CompileError `[compile] ...` naming the kernels of the unit and NVRTC's log (with the whole
// source at SLUICE_DEBUG >= 4); when NVRTC cannot be loaded, CompileError with nvrtc_absent_reason().
// Thread-safe (NVRTC programs are per call).
#include <filesystem>
#include <memory>
#include <string>

#include "hcq/compiler.h"

namespace sluice::cuda {

std::unique_ptr<hcq::Compiler> make_compiler(const std::string& arch,
                                             std::filesystem::path cache_dir = hcq::default_cache_dir(),
                                             bool ptx = false);
// Why NVRTC cannot be used here ("" when it loads), for tests and absent devices.
std::string nvrtc_absent_reason();
// The directory NVRTC was loaded from ("" when absent): tools of the same toolkit (ptxas) sit in ../bin.
std::filesystem::path nvrtc_dir();

}  // namespace sluice::cuda
