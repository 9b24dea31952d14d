#include "backends/opencl/compiler.h"

#include <regex>

#include "backends/opencl/driver.h"
#include "backends/opencl/program.h"

namespace sluice::opencl {
namespace {

// The kernels a source defines, for build errors.
std::string kernel_names(std::span<const std::string_view> sources) {
  static const std::regex kernel(R"(__kernel\s+void\s+(\w+))");
  std::string out;
  for (std::string_view s : sources)
    for (std::cregex_iterator it(s.data(), s.data() + s.size(), kernel), end; it != end; ++it)
      out += (out.empty() ? "'" : ", '") + (*it)[1].str() + "'";
  return out.empty() ? "(no __kernel)" : out;
}

class Compiler final : public hcq::Compiler {
 public:
  Compiler(std::shared_ptr<const Context> c, std::filesystem::path dir)
      : hcq::Compiler("opencl", std::move(dir)), c_(std::move(c)) {}

 protected:
  std::string identity() const override {
    return c_->device_name + "\n" + c_->vendor + "\n" + c_->driver_version + "\n" + c_->platform_version;
  }

  std::string description() const override {
    return "the driver's OpenCL C compiler (" + c_->platform_version + ", driver " + c_->driver_version + ")";
  }

  hcq::Binary compile_unit(std::span<const std::string_view> sources) override {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (std::string_view s : sources) {
      ptrs.push_back(s.data());
      lens.push_back(s.size());
    }
    cl_int err = CL_SUCCESS;
    cl_program p =
        api().clCreateProgramWithSource(c_->ctx, cl_uint(ptrs.size()), ptrs.data(), lens.data(), &err);
    if (!p) fail("compile", "clCreateProgramWithSource", err);
    struct Release {
      cl_program p;
      ~Release() { api().clReleaseProgram(p); }
    } release{p};
    // -w: the kernels are generated, so a warning is noise to whoever runs them (PoCL's clang prints
    // "N warnings generated" on stderr for unused variables and the like); errors still fail the build.
    err = api().clBuildProgram(p, 1, &c_->device, "-w", nullptr, nullptr);
    if (err != CL_SUCCESS)
      SLUICE_FAIL(hcq::CompileError, "compile") << c_->device_name << ": clBuildProgram failed for kernel(s) "
                                                << kernel_names(sources) << ": " << error_name(err) << "\n"
                                                << build_log(*c_, p);
    size_t size = 0;
    SLUICE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "compile");
    hcq::Binary bin(size);
    unsigned char* data = bin.data();
    SLUICE_CL(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr), "compile");
    return bin;
  }

 private:
  std::shared_ptr<const Context> c_;
};

}  // namespace

std::string build_log(const Context& c, cl_program p) {
  size_t n = 0;
  if (api().clGetProgramBuildInfo(p, c.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS) return "";
  std::string log(n, '\0');
  api().clGetProgramBuildInfo(p, c.device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::unique_ptr<hcq::Compiler> make_compiler(std::shared_ptr<const Context> c,
                                             std::filesystem::path cache_dir) {
  return std::make_unique<Compiler>(std::move(c), std::move(cache_dir));
}

std::unique_ptr<hcq::Compiler> make_compiler(const std::filesystem::path& cache_dir, int ordinal) {
  return make_compiler(std::make_shared<const Context>(ordinal), cache_dir);
}

}  // namespace sluice::opencl
