#include "runtime/npy.h"

#include <unistd.h>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "base/error.h"

namespace sluice {
namespace {

// descr (without its byte-order mark) -> dtype.
struct Descr {
  const char* code;
  DType dtype;
};
const Descr kDescrs[] = {{"b1", dtypes::bool_},   {"i1", dtypes::int8},    {"u1", dtypes::uint8},
                         {"i2", dtypes::int16},   {"u2", dtypes::uint16},  {"i4", dtypes::int32},
                         {"u4", dtypes::uint32},  {"i8", dtypes::int64},   {"u8", dtypes::uint64},
                         {"f2", dtypes::float16}, {"f4", dtypes::float32}, {"f8", dtypes::float64}};

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SLUICE_CHECK_IN(ValueError, "npy", in) << path << ": cannot be opened";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string f = ss.str();
  return parse_npy(std::as_bytes(std::span(f)), path);
}

NpyArray parse_npy(std::span<const std::byte> bytes, const std::string& name) {
  const std::string_view f(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  SLUICE_CHECK_IN(ValueError, "npy", f.size() >= 10 && f.compare(0, 6, "\x93NUMPY") == 0)
      << name << ": not an .npy file (no \\x93NUMPY magic)";
  const int major = uint8_t(f[6]);
  SLUICE_CHECK_IN(ValueError, "npy", major >= 1 && major <= 3)
      << name << ": .npy format version " << major << " is not one of 1, 2, 3";
  size_t hlen = 0, start = 0;
  if (major == 1) {
    hlen = uint8_t(f[8]) | size_t(uint8_t(f[9])) << 8;
    start = 10;
  } else {
    SLUICE_CHECK_IN(ValueError, "npy", f.size() >= 12) << name << ": truncated header";
    for (int i = 0; i < 4; ++i) hlen |= size_t(uint8_t(f[8 + i])) << (8 * i);
    start = 12;
  }
  SLUICE_CHECK_IN(ValueError, "npy", start + hlen <= f.size()) << name << ": truncated header";
  const std::string h(f.substr(start, hlen));
  std::smatch m;
  static const std::regex descr_re(R"('descr'\s*:\s*'([<>|=])([a-z][0-9]+)')");
  static const std::regex order_re(R"('fortran_order'\s*:\s*(True|False))");
  static const std::regex shape_re(R"('shape'\s*:\s*\(([^)]*)\))");
  SLUICE_CHECK_IN(ValueError, "npy", std::regex_search(h, m, descr_re))
      << name << ": no 'descr' in the header";
  const std::string order = m[1], code = m[2];
  SLUICE_CHECK_IN(ValueError, "npy", order != ">" || code == "b1" || code[1] == '1')
      << name << ": big-endian data ('" << order << code << "') is not read; save it little-endian";
  const Descr* d = nullptr;
  for (const Descr& x : kDescrs)
    if (code == x.code) d = &x;
  SLUICE_CHECK_IN(ValueError, "npy", d) << name << ": dtype '" << code << "' is not one sluice has";
  SLUICE_CHECK_IN(ValueError, "npy", std::regex_search(h, m, order_re) && m[1] == "False")
      << name << ": Fortran-ordered arrays are not read; save a C-ordered array";
  SLUICE_CHECK_IN(ValueError, "npy", std::regex_search(h, m, shape_re))
      << name << ": no 'shape' in the header";
  NpyArray a;
  std::stringstream dims(m[1].str());
  for (std::string tok; std::getline(dims, tok, ',');) {
    tok.erase(0, tok.find_first_not_of(" "));
    if (tok.empty()) continue;
    try {
      a.shape.push_back(std::stoll(tok));
    } catch (const std::exception&) {
      SLUICE_FAIL(ValueError, "npy") << name << ": bad shape entry '" << tok << "'";
    }
  }
  // Bound the element count by the file's size before multiplying, so no header can overflow it.
  const size_t payload = f.size() - start - hlen;
  int64_t n = 1;
  for (int64_t dim : a.shape) {
    SLUICE_CHECK_IN(ValueError, "npy", dim >= 0)
        << name << ": negative dimension in shape " << tuple_str(a.shape);
    SLUICE_CHECK_IN(ValueError, "npy", dim == 0 || n <= int64_t(payload) / dim)
        << name << ": shape " << tuple_str(a.shape) << " needs more data than the file's " << payload
        << " bytes";
    n *= dim;
  }
  const size_t need = size_t(n) * size_t(d->dtype.itemsize());
  SLUICE_CHECK_IN(ValueError, "npy", payload == need)
      << name << ": shape " << tuple_str(a.shape) << " of " << code << " needs " << need
      << " bytes of data, the file has " << payload;
  a.data = std::make_shared<HostBuffer>();
  a.data->dtype = d->dtype;
  a.data->size = n;
  const auto* p = reinterpret_cast<const std::byte*>(f.data() + start + hlen);
  a.data->bytes.assign(p, p + need);
  return a;
}

void write_npy(const std::string& path, DType dtype, const Shape& shape,
               const std::vector<std::byte>& bytes) {
  const Descr* d = nullptr;
  for (const Descr& x : kDescrs)
    if (x.dtype == dtype) d = &x;
  SLUICE_CHECK_IN(ValueError, "npy", d) << path << ": " << dtype.name() << " has no .npy dtype";
  std::string dims;  // a Python tuple: (), (2,), (2, 3)
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string h = std::string("{'descr': '") + (std::string(d->code) == "b1" ? "|" : "<") + d->code +
                  "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {char(h.size() & 0xff), char(h.size() >> 8)};
    out.write(len, 2);
    out << h;
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    SLUICE_CHECK_IN(ValueError, "npy", out.good()) << tmp << ": write failed";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    SLUICE_FAIL(ValueError, "npy") << path << ": cannot be written: " << ec.message();
  }
}

}  // namespace sluice
