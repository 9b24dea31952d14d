#include "renderers/cuda.h"

#include <string>

namespace sluice::render {
namespace {

Dialect cuda_dialect() {
  Dialect d;
  d.kernel_prefix = "extern \"C\" __global__ ";
  d.global_ids = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
  d.local_ids = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
  d.barrier = "__syncthreads();";
  d.shared_prefix = "__shared__ ";
  d.type_names = {{Scalar::Float16, "half"}, {Scalar::BFloat16, "__nv_bfloat16"}};
  d.native_half = d.native_bf16 = true;
  d.vector_ctor = "make_float4(";
  d.float_fn_suffix = "f";  // exp2f, log2f, sinf, sqrtf, truncf: CUDA's accurate float versions
  // NVRTC has no __builtin_inf: the literals are bit patterns.
  d.infinity = "__int_as_float(0x7f800000)";
  d.nan = "__int_as_float(0x7fffffff)";
  d.infinity64 = "__longlong_as_double(0x7ff0000000000000LL)";
  d.nan64 = "__longlong_as_double(0x7ff8000000000000LL)";
  d.bit_cast = "__builtin_bit_cast";
  d.helper_prefix = "static __device__ inline ";
  return d;
}

bool uses(const codegen::Kernel& k, Scalar s) {
  for (const codegen::KernelBuffer& b : k.bufs)
    if (b.dtype.scalar == s) return true;
  for (const UOp& u : k.uops)
    if (u.dtype().scalar == s) return true;
  return false;
}

class CudaRenderer final : public CStyleRenderer {
 public:
  CudaRenderer() : CStyleRenderer(cuda_dialect()) {}

 protected:
  std::string wrap(const codegen::Kernel& k, const std::string& body) const override {
    std::string s;
    if (uses(k, Scalar::Float16)) s += "#include <cuda_fp16.h>\n";
    if (uses(k, Scalar::BFloat16)) s += "#include <cuda_bf16.h>\n";
    const uint64_t threads = uint64_t(k.local_size[0]) * k.local_size[1] * k.local_size[2];
    s += dialect().kernel_prefix + "void __launch_bounds__(" + std::to_string(threads) + ") " + k.name + "(";
    return s + pointer_params(k) + ") {\n" + body + "}\n";
  }
};

}  // namespace

std::unique_ptr<CStyleRenderer> make_cuda_renderer() { return std::make_unique<CudaRenderer>(); }

}  // namespace sluice::render
