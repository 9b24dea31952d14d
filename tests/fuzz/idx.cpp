// Fuzz target: IDX files (runtime/idx.h), raw and gzip-compressed, the MNIST-style data sets users train
// on. An accepted input must be exactly the file its array writes back (the header of its type and shape,
// its elements big-endian); an accepted gzip input must inflate to that file, here with zlib in one pass
// per member, apart from the reader's streaming. A mismatch aborts (a finding), as a crash does. The array
// is then built into a tensor on NULL, as load_idx builds it.
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <utility>

#include "runtime/idx.h"
#include "tests/fuzz/fuzz.h"

namespace sluice::fuzz {
namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz idx: accepted an input that %s\n", what);
  std::abort();
}

void put32(Bytes& b, uint32_t v) {
  for (int i = 3; i >= 0; --i) b.push_back(uint8_t(v >> (8 * i)));
}

// An IDX file of this type and shape, its elements `itemsize` bytes each, of varied bytes.
Bytes idx(uint8_t type, std::initializer_list<uint32_t> sizes, size_t itemsize) {
  Bytes b = {0, 0, type, uint8_t(sizes.size())};
  size_t n = 1;
  for (uint32_t d : sizes) {
    put32(b, d);
    n *= d;
  }
  for (size_t i = 0; i < n * itemsize; ++i) b.push_back(uint8_t(i * 37 + 11));
  return b;
}

Bytes gzip(const Bytes& raw) {
  z_stream z = {};
  deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&z, uLong(raw.size())));
  z.next_in = const_cast<Bytef*>(raw.data());
  z.avail_in = uInt(raw.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The file `a` was read from: its header, then its elements back in big-endian order.
Bytes encode(const IdxArray& a) {
  const DType dt = a.data->dtype;
  const std::pair<uint8_t, DType> kTypes[] = {{0x08, dtypes::uint8},   {0x09, dtypes::int8},
                                              {0x0B, dtypes::int16},   {0x0C, dtypes::int32},
                                              {0x0D, dtypes::float32}, {0x0E, dtypes::float64}};
  uint8_t type = 0;
  for (const auto& [code, dtype] : kTypes)
    if (dtype == dt) type = code;
  if (type == 0) broken("is of a dtype IDX lacks");
  Bytes b = {0, 0, type, uint8_t(a.shape.size())};
  for (int64_t d : a.shape) put32(b, uint32_t(d));
  const size_t itemsize = size_t(dt.itemsize());
  const std::vector<std::byte>& e = a.data->bytes;
  for (size_t i = 0; i + itemsize <= e.size(); i += itemsize)
    for (size_t k = itemsize; k-- > 0;) b.push_back(uint8_t(e[i + k]));
  return b;
}

// Every member of a gzip input inflated into `out`; false where zlib rejects one.
bool inflate_all(const uint8_t* data, size_t size, Bytes& out) {
  size_t at = 0;
  while (at < size) {
    z_stream z = {};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return false;
    z.next_in = const_cast<Bytef*>(data + at);
    z.avail_in = uInt(size - at);
    int r = Z_OK;
    while (r == Z_OK) {
      uint8_t buf[65536];
      z.next_out = buf;
      z.avail_out = sizeof buf;
      r = inflate(&z, Z_NO_FLUSH);
      out.insert(out.end(), buf, buf + (sizeof buf - z.avail_out));
    }
    at += z.total_in;
    inflateEnd(&z);
    if (r != Z_STREAM_END) return false;
  }
  return true;
}

}  // namespace

std::vector<Bytes> seeds() {
  const std::vector<Bytes> raw = {
      idx(0x08, {3, 4, 4}, 1), idx(0x09, {5}, 1),          idx(0x0B, {2, 3}, 2), idx(0x0C, {4, 1}, 4),
      idx(0x0D, {2, 2}, 4),    idx(0x0E, {1, 1, 1, 2}, 8), idx(0x08, {7}, 1),  // a labels file
      idx(0x0D, {0, 3}, 4),
  };
  std::vector<Bytes> all = raw;
  for (const Bytes& b : raw) all.push_back(gzip(b));
  // Two gzip members, split inside the header.
  Bytes two = gzip(Bytes(raw[2].begin(), raw[2].begin() + 6));
  const Bytes rest = gzip(Bytes(raw[2].begin() + 6, raw[2].end()));
  two.insert(two.end(), rest.begin(), rest.end());
  all.push_back(two);
  return all;
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  return fuzz::reject_errors([&] {
    const IdxArray a = parse_idx(std::as_bytes(std::span(data, size)), "fuzz.idx");
    if (a.shape.empty() || a.shape.size() > size_t(kIdxMaxDims)) fuzz::broken("has 0 or too many dimensions");
    if (a.data->size != prod(a.shape) ||
        a.data->bytes.size() != uint64_t(a.data->size) * uint64_t(a.data->dtype.itemsize()))
      fuzz::broken("holds another number of elements than its shape");
    const fuzz::Bytes file = fuzz::encode(a);
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
      fuzz::Bytes inflated;
      if (!fuzz::inflate_all(data, size, inflated)) fuzz::broken("zlib cannot inflate");
      if (inflated != file) fuzz::broken("inflates to another file than its array writes");
    } else if (file != fuzz::Bytes(data, data + size)) {
      fuzz::broken("is another file than its array writes");
    }
    Tensor::from_host(a.data, a.shape, "NULL");
  });
}
