#pragma once
// NumPy's .npy files (format versions 1 to 3): how `sluice run` and the model tests exchange arrays with
// numpy and ONNX Runtime. Little-endian and native-order dtypes of sluice's types (bool, int8..uint64,
// float16, float32, float64), C order. Failures: ValueError "[npy] FILE: ..." naming what is wrong (not an
// .npy file, a big-endian or Fortran-ordered array, a dtype sluice lacks, a size that does not match the
// shape).
#include <memory>
#include <span>
#include <string>

#include "runtime/buffer.h"
#include "runtime/tensor.h"

namespace sluice {

struct NpyArray {
  Shape shape;
  std::shared_ptr<HostBuffer> data;
};

NpyArray read_npy(const std::string& path);
// The same from the bytes of a file; `name` labels messages.
NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& name);
// Writes atomically: a temporary file next to `path`, then a rename.
void write_npy(const std::string& path, DType dtype, const Shape& shape, const std::vector<std::byte>& bytes);

}  // namespace sluice
