#include "backends/opencl/program.h"

namespace sluice::opencl {

Program::Program(hcq::Device& dev, std::string name, hcq::KernelLayout layout, cl_kernel k)
    : hcq::Program(dev, std::move(name), layout),
      kernel_(k),
      args_(2 * layout.buffers + layout.vars),
      set_(2 * layout.buffers + layout.vars, false) {}

Program::~Program() { api().clReleaseKernel(kernel_); }

void Program::set_arg(uint32_t i, uint64_t bits, size_t size, const void* value) const {
  if (set_[i] && args_[i] == bits) return;
  SLUICE_CL(clSetKernelArg(kernel_, i, size, value), "exec");
  args_[i] = bits;
  set_[i] = true;
}

ProgramCache::~ProgramCache() {
  for (auto& [bin, p] : built_) api().clReleaseProgram(p);
}

std::unique_ptr<hcq::Program> ProgramCache::load(hcq::Device& dev, const std::string& name,
                                                 const hcq::Binary& binary, hcq::KernelLayout layout) {
  std::lock_guard lk(mu_);
  std::string key(binary.begin(), binary.end());
  auto it = built_.find(key);
  if (it == built_.end()) {
    const unsigned char* data = binary.data();
    const size_t size = binary.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program p = api().clCreateProgramWithBinary(c_.ctx, 1, &c_.device, &size, &data, &status, &err);
    if (!p) fail("load_program", "clCreateProgramWithBinary", err != CL_SUCCESS ? err : status);
    if ((err = api().clBuildProgram(p, 1, &c_.device, "", nullptr, nullptr)) != CL_SUCCESS) {
      std::string log = build_log(c_, p);
      api().clReleaseProgram(p);
      SLUICE_FAIL(hcq::Error, "load_program")
          << "kernel '" << name << "': clBuildProgram of its binary failed: " << error_name(err) << "\n"
          << log;
    }
    it = built_.emplace(std::move(key), p).first;
  }
  cl_int err = CL_SUCCESS;
  cl_kernel k = api().clCreateKernel(it->second, name.c_str(), &err);
  if (!k)
    SLUICE_FAIL(hcq::Error, "load_program")
        << "kernel '" << name << "' is not in the binary: clCreateKernel failed: " << error_name(err);
  return std::make_unique<Program>(dev, name, layout, k);
}

}  // namespace sluice::opencl
