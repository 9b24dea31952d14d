#pragma once
// The OpenCL compiler: OpenCL C source to the driver's program binary (clBuildProgram, then
// CL_PROGRAM_BINARIES), cached on disk (hcq/compiler.h) under the key of the device name, vendor, driver
// and platform version and the source. compile_many builds every miss as one program. A build failure
// throws CompileError `[compile] <device>: clBuildProgram failed for kernel(s) 'a', 'b': <build log>`.
#include <filesystem>
#include <memory>

#include "hcq/compiler.h"

namespace sluice::opencl {

struct Context;  // driver.h (this header needs no OpenCL headers: tests include it in every build)

std::unique_ptr<hcq::Compiler> make_compiler(std::shared_ptr<const Context> c,
                                             std::filesystem::path cache_dir = hcq::default_cache_dir());
// A compiler over its own context on device `ordinal` (tests of the cache; no Device needed). Throws
// DeviceError where OpenCL is absent.
std::unique_ptr<hcq::Compiler> make_compiler(const std::filesystem::path& cache_dir, int ordinal = 0);

}  // namespace sluice::opencl
