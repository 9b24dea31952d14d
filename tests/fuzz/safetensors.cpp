// Fuzz target: safetensors headers (runtime/safetensors.h), the weights files users hand sluice. A header
// the parser accepts must keep its promise: every entry inside the data section, holding numel * itemsize
// bytes, the entries tiling the data section; a broken promise aborts (a finding), as a crash does. The
// accepted entries are then built into tensors on NULL, as safe_load builds them.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "runtime/buffer.h"
#include "runtime/safetensors.h"
#include "tests/fuzz/fuzz.h"

namespace sluice::fuzz {
namespace {

// A file of this header (padded to 8 bytes, as writers do) and `data` bytes of data section.
Bytes file(std::string header, size_t data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  Bytes b;
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(uint64_t(header.size()) >> (8 * i)));
  b.insert(b.end(), header.begin(), header.end());
  for (size_t i = 0; i < data; ++i) b.push_back(uint8_t(i * 37 + 11));
  return b;
}

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz safetensors: accepted a header in which %s\n", what.c_str());
  std::abort();
}

}  // namespace

std::vector<Bytes> seeds() {
  return {
      file(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", 24),
      file(R"({"__metadata__":{"format":"pt","k":"v"},)"
           R"("b":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
           R"("a":{"dtype":"F16","shape":[3,1],"data_offsets":[16,22]},)"
           R"("m":{"dtype":"BOOL","shape":[2],"data_offsets":[22,24]}})",
           24),
      file(R"({"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
           R"("e":{"dtype":"U8","shape":[0,4],"data_offsets":[8,8]},)"
           R"("h":{"dtype":"BF16","shape":[1],"data_offsets":[8,10]}})",
           10),
      file(R"({"x":{"dtype":"U64","shape":[1],"data_offsets":[0,8]},"y":{"dtype":"I32","shape":[1],)"
           R"("data_offsets":[8,12]},"z":{"dtype":"U32","shape":[1],"data_offsets":[12,16]},)"
           R"("p":{"dtype":"I16","shape":[1],"data_offsets":[16,18]},"q":{"dtype":"U16","shape":[1],)"
           R"("data_offsets":[18,20]},"r":{"dtype":"I8","shape":[1],"data_offsets":[20,21]}})",
           21),
      // Unknown fields (ignored), escapes and non-ASCII names.
      file(R"({"w\u00e9\n":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":{"n":[1,[2]]}}})", 4),
      file("{}", 0),
  };
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  return fuzz::reject_errors([&] {
    const std::span<const std::byte> f = std::as_bytes(std::span(data, size));
    const SafetensorsHeader h = parse_safetensors_header(f, "fuzz.safetensors");
    if (h.data_start > size) fuzz::broken("the data section starts past the file");
    const uint64_t data_size = size - h.data_start;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const auto& [name, e] : h.tensors) {
      if (e.begin > e.end || e.end > data_size) fuzz::broken(name + " lies outside the data section");
      uint64_t numel = 1;
      for (int64_t d : e.shape) {
        if (d < 0) fuzz::broken(name + " has a negative dimension");
        numel *= uint64_t(d);  // cannot wrap: the bytes below bound it
      }
      if (numel * uint64_t(e.dtype.itemsize()) != e.end - e.begin)
        fuzz::broken(name + " does not hold numel * itemsize bytes");
      ranges.emplace_back(e.begin, e.end);
    }
    std::sort(ranges.begin(), ranges.end());
    uint64_t at = 0;
    for (const auto& [b, e] : ranges) {
      if (b != at) fuzz::broken("the tensors leave a hole or overlap");
      at = e;
    }
    if (at != data_size) fuzz::broken("the tensors do not cover the data section");
    // As safe_load builds them, on a device that computes nothing.
    for (const auto& [name, e] : h.tensors) {
      auto host = std::make_shared<HostBuffer>();
      host->dtype = e.dtype;
      host->size = prod(e.shape);
      host->bytes.assign(f.data() + h.data_start + e.begin, f.data() + h.data_start + e.end);
      Tensor::from_host(std::move(host), e.shape, "NULL");
    }
  });
}
