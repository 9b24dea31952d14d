#pragma once
// NumPy's .npy files (format versions 1 to 3): what `sluice run` reads inputs from and writes outputs to.
// Little-endian and native-order dtypes of sluice's types (bool, int8..uint64, float16, float32,
// float64), C order. Failures: ValueError "[npy] FILE: ..." naming what is wrong (not an .npy file, a
// big-endian or Fortran-ordered array, a dtype sluice lacks, a size that does not match the shape).
#include <memory>
#include <string>

#include "runtime/buffer.h"
#include "runtime/tensor.h"

namespace sluice::cli {

struct NpyArray {
  Shape shape;
  std::shared_ptr<HostBuffer> data;
};

NpyArray read_npy(const std::string& path);
// Writes atomically: a temporary file next to `path`, then a rename.
void write_npy(const std::string& path, DType dtype, const Shape& shape, const std::vector<std::byte>& bytes);

}  // namespace sluice::cli
