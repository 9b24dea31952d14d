#pragma once
// OpenCL programs: a binary of opencl::make_compiler built for the device (clCreateProgramWithBinary,
// clBuildProgram), one cl_kernel per Program.
//
// Kernel ABI (renderers/opencl.h): each buffer of the layout is two arguments, the cl_mem and the byte
// offset of the address into it (ulong); then the variables (int):
//   __kernel void <name>(__global T* data0_base, ulong data0_off, ..., int var0, ...)
// The kernel's pointer is (__global T*)((__global char*)data0_base + data0_off): an address inside a
// buffer needs no sub-buffer (whose offsets OpenCL restricts to CL_DEVICE_MEM_BASE_ADDR_ALIGN). A launch of
// hcq Dims global (work-groups) and local (work-items) is clEnqueueNDRangeKernel over global*local
// work-items in groups of local.
//
// Threading: a program's kernel object holds the last arguments set; only the device's compute queue
// sets them, under its submit lock (held by a submitting thread, or by the device's waiter thread while it
// enqueues work that waited on the host). OpenCL captures the arguments at enqueue, so a later change
// never reaches a command already enqueued.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/opencl/driver.h"
#include "hcq/compiler.h"
#include "hcq/program.h"

namespace sluice::opencl {

// The build log of `p` on the context's device ("" if the driver has none).
std::string build_log(const Context& c, cl_program p);

class Program final : public hcq::Program {
 public:
  Program(hcq::Device& dev, std::string name, hcq::KernelLayout layout, cl_kernel k);
  ~Program() override;

  cl_kernel kernel() const { return kernel_; }
  // Sets argument i unless it already holds `bits` (a cl_mem or an int): graph replays re-set nothing.
  void set_arg(uint32_t i, uint64_t bits, size_t size, const void* value) const;

 private:
  cl_kernel kernel_;
  mutable std::vector<uint64_t> args_;  // the bits last set per argument
  mutable std::vector<bool> set_;
};

// Builds binaries once per device: the programs built so far, by binary (a binary of compile_many holds
// several kernels). Released with the cache.
class ProgramCache {
 public:
  explicit ProgramCache(const Context& c) : c_(c) {}
  ~ProgramCache();
  // Throws hcq::Error `[load_program] ...` if the binary does not build or lacks kernel `name`.
  std::unique_ptr<hcq::Program> load(hcq::Device& dev, const std::string& name, const hcq::Binary& binary,
                                     hcq::KernelLayout layout);

 private:
  const Context& c_;
  std::mutex mu_;
  std::unordered_map<std::string, cl_program> built_;  // by binary bytes
};

}  // namespace sluice::opencl
