#pragma once
// IDX files: the format of MNIST, Fashion-MNIST, EMNIST and their kin, usually gzip-compressed (Debian's
// dataset-fashion-mnist installs /usr/share/datasets/fashion-mnist/{train,t10k}-{images-idx3,labels-idx1}-
// ubyte.gz). Layout, all big-endian: bytes 0-1 zero; byte 2 the element type (0x08 uint8, 0x09 int8,
// 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64); byte 3 the number of dimensions D; D uint32 sizes;
// then the elements, row-major.
//
// A file is read raw or, when it starts with gzip's magic bytes 1f 8b, through zlib (concatenated gzip
// members are one stream, as gzip(1) reads them). The elements are decompressed or read straight into one
// buffer of the size the header announces, allocated only once that size is checked against the data the
// input can hold (a raw file's exact length; for gzip, deflate's largest expansion, 1032:1).
//
// Failures are ValueError "[load_idx] FILE: ..." naming what is wrong and the values: a file that cannot
// be opened or read, a file that is neither gzip nor IDX (bytes 0-1 not zero), an unknown element type, 0
// or more than kIdxMaxDims dimensions, a shape whose size overflows or exceeds kIdxMaxBytes, data shorter
// or longer than the shape needs (a truncated .gz, trailing bytes), a corrupt gzip stream (zlib's message)
// or bytes after it that are not another gzip member. No input crashes, hangs or loads wrong values
// (tests/fuzz/idx.cpp).
//
// Threading: the calls share no state; several may run at once on different files.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "runtime/buffer.h"
#include "runtime/tensor.h"

namespace sluice {

// No published IDX file has more than 4 dimensions; numpy's old limit bounds the header we read.
constexpr int kIdxMaxDims = 32;
// 16 GiB of elements: some hundred times MNIST's 47 MB, below what a file could make us allocate by mistake
// on a workstation.
constexpr uint64_t kIdxMaxBytes = uint64_t(1) << 34;

struct IdxArray {
  Shape shape;                       // the header's sizes, 1 to kIdxMaxDims of them
  std::shared_ptr<HostBuffer> data;  // dtype and elements, converted to native byte order
};

// The array in a file's bytes (raw or gzip). `name` labels messages, which name load_idx in brackets.
IdxArray parse_idx(std::span<const std::byte> bytes, const std::string& name);

// The array of the file at `path`, on the host. The file is read with read(2), not mapped, so a file
// truncated while it is read is a ValueError rather than a SIGBUS.
IdxArray read_idx(const std::filesystem::path& path);
// The same as a tensor on `device`, of the file's dtype and shape.
Tensor load_idx(const std::filesystem::path& path, const std::string& device = default_device());

}  // namespace sluice
