#pragma once
// CUDA and HIP programs: a module loaded from the compiler's binary (CUBIN, PTX text, or an AMD code
// object) with cuModuleLoadData (hipModuleLoadData), and the kernel looked up by name.
//
// Kernel ABI (renderers/cuda.h, renderers/hip.h): `name(T0* data0, ..., int var0, ...)`, the buffers'
// device addresses in layout order, then the int variables; the launch is `global` blocks of `local`
// threads. KernelParams (driver.h) packs the arguments for cuLaunchKernel.
//
// Ownership: the program owns its module and unloads it when destroyed (hcq/program.h: after every
// command that runs it). Failure: hcq::Error `[load_program] CUDA: cuModuleLoadData: ...`.
#include <memory>
#include <string>

#include "backends/cuda/driver.h"
#include "hcq/compiler.h"
#include "hcq/program.h"

namespace sluice::cuda {

std::unique_ptr<hcq::Program> load_program(hcq::Device& dev, const Driver& drv, CUcontext ctx,
                                           const std::string& name, const hcq::Binary& binary,
                                           hcq::KernelLayout layout);
// The function of a program that load_program returned.
CUfunction function(const hcq::Program& p);

}  // namespace sluice::cuda
