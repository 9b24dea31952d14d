#include "runtime/idx.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFn = "load_idx";

struct Type {
  uint8_t code;
  DType dtype;
};
const Type kTypes[] = {{0x08, dtypes::uint8}, {0x09, dtypes::int8},    {0x0B, dtypes::int16},
                       {0x0C, dtypes::int32}, {0x0D, dtypes::float32}, {0x0E, dtypes::float64}};
// In the format's own words (LeCun's page), which the message quotes.
const char* const kTypeList =
    "0x08 unsigned byte, 0x09 signed byte, 0x0B short, 0x0C int, 0x0D float, 0x0E double";

// Deflate codes a run of at most 258 bytes in at least 2 bits (length code 285 and one distance code, each
// 1 bit long), so no gzip file inflates to more than 1032 times its length: a bound on what a header may
// announce that holds before a byte is decompressed.
constexpr uint64_t kMaxRatio = 1032;
// How far past the announced size a gzip stream is decompressed to count its extra bytes for the message;
// beyond that it only says "more than".
constexpr uint64_t kMaxTrailingCount = uint64_t(1) << 20;

std::string hex(uint8_t b) {
  char s[8];
  std::snprintf(s, sizeof s, "0x%02X", b);
  return s;
}
std::string hex_pair(uint8_t a, uint8_t b) {
  char s[8];
  std::snprintf(s, sizeof s, "%02x %02x", a, b);
  return s;
}

// Where a file's bytes come from. Reads are positional so the first bytes can be looked at (is it gzip?)
// and then read again as part of the stream.
class Input {
 public:
  explicit Input(std::string name) : name_(std::move(name)) {}
  virtual ~Input() = default;
  const std::string& name() const { return name_; }
  // The length when reading began.
  virtual uint64_t size() const = 0;
  // Up to n bytes at `offset`; fewer only at the end (a file truncated meanwhile ends early).
  virtual size_t read_at(uint64_t offset, std::byte* dst, size_t n) = 0;

 private:
  std::string name_;
};

class SpanInput final : public Input {
 public:
  SpanInput(std::span<const std::byte> b, const std::string& name) : Input(name), b_(b) {}
  uint64_t size() const override { return b_.size(); }
  size_t read_at(uint64_t offset, std::byte* dst, size_t n) override {
    if (offset >= b_.size() || n == 0) return 0;
    n = std::min<uint64_t>(n, b_.size() - offset);
    std::memcpy(dst, b_.data() + offset, n);
    return n;
  }

 private:
  std::span<const std::byte> b_;
};

class FileInput final : public Input {
 public:
  explicit FileInput(const fs::path& path) : Input(path.string()) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    SLUICE_CHECK_IN(ValueError, kFn, fd_ >= 0) << name() << ": cannot be opened: " << std::strerror(errno);
    struct stat st = {};
    SLUICE_CHECK_IN(ValueError, kFn, ::fstat(fd_, &st) == 0)
        << name() << ": cannot be read: " << std::strerror(errno);
    SLUICE_CHECK_IN(ValueError, kFn, S_ISREG(st.st_mode)) << name() << ": not a regular file";
    size_ = uint64_t(st.st_size);
  }
  ~FileInput() override {
    if (fd_ >= 0) ::close(fd_);
  }
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;
  uint64_t size() const override { return size_; }
  size_t read_at(uint64_t offset, std::byte* dst, size_t n) override {
    size_t got = 0;
    while (got < n) {
      // One read(2) moves at most about 2 GiB on Linux; the loop covers larger buffers.
      const ssize_t r =
          ::pread(fd_, dst + got, std::min<size_t>(n - got, size_t(1) << 30), off_t(offset + got));
      if (r < 0 && errno == EINTR) continue;
      SLUICE_CHECK_IN(ValueError, kFn, r >= 0) << name() << ": cannot be read: " << std::strerror(errno);
      if (r == 0) break;
      got += size_t(r);
    }
    return got;
  }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The bytes of the IDX array, in order: the file itself, or what its gzip stream inflates to.
class Stream {
 public:
  virtual ~Stream() = default;
  // n bytes into dst; fewer only at the end of the data.
  virtual size_t read(std::byte* dst, size_t n) = 0;
  // No more than this many bytes can follow: exactly what a raw file holds, a bound for gzip.
  virtual uint64_t most_left() const = 0;
  // Whether most_left() is exact; then a size that differs from it is rejected before anything is read.
  virtual bool exact() const = 0;
  // What messages call the data ("the file", "the decompressed data").
  virtual const char* what() const = 0;
  // Appended to a message about data that ended early: why it did, or "".
  virtual std::string ended_early() const { return ""; }
  // What a larger announced size than most_left() is (exact() is false), for the message.
  virtual std::string bound() const { return ""; }
};

class RawStream final : public Stream {
 public:
  explicit RawStream(Input& in) : in_(in) {}
  size_t read(std::byte* dst, size_t n) override {
    const size_t got = in_.read_at(at_, dst, n);
    at_ += got;
    return got;
  }
  uint64_t most_left() const override { return in_.size() - std::min(at_, in_.size()); }
  bool exact() const override { return true; }
  const char* what() const override { return "the file"; }

 private:
  Input& in_;
  uint64_t at_ = 0;
};

bool is_gzip(Input& in) {
  std::byte m[2] = {};
  return in.read_at(0, m, 2) == 2 && m[0] == std::byte{0x1f} && m[1] == std::byte{0x8b};
}

class GzipStream final : public Stream {
 public:
  // The compressed bytes pass through a chunk of at most 256 KiB, so a large file is never held whole.
  explicit GzipStream(Input& in) : in_(in), chunk_(size_t(std::clamp<uint64_t>(in.size(), 1, 1 << 18))) {
    // 16 + MAX_WBITS: a gzip wrapper (header, CRC-32 and length checked), not zlib's or raw deflate.
    const int r = inflateInit2(&z_, 16 + MAX_WBITS);
    SLUICE_CHECK_IN(ValueError, kFn, r == Z_OK)
        << in_.name() << ": zlib cannot start inflating: " << zError(r);
  }
  ~GzipStream() override { inflateEnd(&z_); }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  size_t read(std::byte* dst, size_t n) override {
    size_t produced = 0;
    while (produced < n && !finished_) {
      if (member_ended_) next_member();
      if (finished_) break;
      refill();
      z_.next_out = reinterpret_cast<Bytef*>(dst + produced);
      z_.avail_out = uInt(std::min<size_t>(n - produced, UINT_MAX));
      const uInt out_before = z_.avail_out;
      const int r = inflate(&z_, Z_NO_FLUSH);
      produced += out_before - z_.avail_out;
      out_ += out_before - z_.avail_out;
      if (r == Z_STREAM_END) {
        member_ended_ = true;
      } else if (r == Z_BUF_ERROR && z_.avail_in == 0 && input_done_) {
        // No input left and the member is not over: the file was cut short.
        truncated_ = true;
        finished_ = true;
      } else {
        SLUICE_CHECK_IN(ValueError, kFn, r != Z_MEM_ERROR) << in_.name() << ": zlib ran out of memory";
        SLUICE_CHECK_IN(ValueError, kFn, r == Z_OK)
            << in_.name() << ": corrupt gzip stream: " << (z_.msg ? z_.msg : zError(r)) << " (at byte "
            << consumed() << " of " << in_.size() << ", after " << out_ << " decompressed bytes)";
      }
    }
    return produced;
  }
  uint64_t most_left() const override {
    const uint64_t cap = in_.size() > UINT64_MAX / kMaxRatio ? UINT64_MAX : in_.size() * kMaxRatio;
    return cap - std::min(cap, out_);
  }
  bool exact() const override { return false; }
  const char* what() const override { return "the decompressed data"; }
  std::string ended_early() const override { return truncated_ ? " (the gzip stream is truncated)" : ""; }
  std::string bound() const override {
    return "more than the " + std::to_string(in_.size()) +
           "-byte gzip file can hold (deflate expands at most " + std::to_string(kMaxRatio) + ":1)";
  }
  bool truncated() const { return truncated_; }

 private:
  uint64_t consumed() const { return in_at_ - z_.avail_in; }

  void refill() {
    if (z_.avail_in > 0 || input_done_) return;
    const size_t got = in_at_ < in_.size() ? in_.read_at(in_at_, chunk_.data(), chunk_.size()) : 0;
    in_at_ += got;
    if (got == 0) input_done_ = true;
    z_.next_in = reinterpret_cast<Bytef*>(chunk_.data());
    z_.avail_in = uInt(got);
  }

  // After a member's trailer: the end of the file, or another member (gzip(1) reads concatenated members
  // as one stream). Anything else is an error rather than ignored, so a file with garbage appended is not
  // read as if it were whole.
  void next_member() {
    const uint64_t at = consumed();
    std::byte m[2] = {};
    const size_t got = in_.read_at(at, m, 2);
    if (got == 0) {
      finished_ = true;
      return;
    }
    SLUICE_CHECK_IN(ValueError, kFn, got == 2 && m[0] == std::byte{0x1f} && m[1] == std::byte{0x8b})
        << in_.name() << ": " << in_.size() - at << " bytes after the gzip stream's end (at byte " << at
        << ") are not another gzip member";
    inflateReset(&z_);
    member_ended_ = false;
  }

  Input& in_;
  z_stream z_ = {};
  std::vector<std::byte> chunk_;
  uint64_t in_at_ = 0;  // bytes of the file handed to zlib so far
  uint64_t out_ = 0;    // bytes inflated so far
  bool input_done_ = false, member_ended_ = false, finished_ = false, truncated_ = false;
};

// The big-endian elements of `b` in native order.
template <class U>
void swap_each(std::vector<std::byte>& b, U (*bswap)(U)) {
  for (size_t i = 0; i + sizeof(U) <= b.size(); i += sizeof(U)) {
    U v;
    std::memcpy(&v, b.data() + i, sizeof v);
    v = bswap(v);
    std::memcpy(b.data() + i, &v, sizeof v);
  }
}
void to_native(std::vector<std::byte>& b, int itemsize) {
  if constexpr (std::endian::native == std::endian::big) return;
  if (itemsize == 2) swap_each<uint16_t>(b, [](uint16_t v) { return __builtin_bswap16(v); });
  if (itemsize == 4) swap_each<uint32_t>(b, [](uint32_t v) { return __builtin_bswap32(v); });
  if (itemsize == 8) swap_each<uint64_t>(b, [](uint64_t v) { return __builtin_bswap64(v); });
}

IdxArray parse(Stream& s, const std::string& name) {
  uint8_t magic[4] = {};
  const size_t got_magic = s.read(reinterpret_cast<std::byte*>(magic), 4);
  SLUICE_CHECK_IN(ValueError, kFn, got_magic == 4)
      << name << ": " << s.what() << " is " << got_magic << " bytes, shorter than the 4-byte IDX magic"
      << s.ended_early();
  SLUICE_CHECK_IN(ValueError, kFn, magic[0] == 0 && magic[1] == 0)
      << name << ": not an IDX file: " << s.what() << " starts with " << hex_pair(magic[0], magic[1])
      << ", not 00 00" << (s.exact() ? " (nor gzip's 1f 8b)" : "");
  const Type* type = nullptr;
  for (const Type& t : kTypes)
    if (t.code == magic[2]) type = &t;
  SLUICE_CHECK_IN(ValueError, kFn, type)
      << name << ": unknown element type " << hex(magic[2]) << " (IDX has " << kTypeList << ")";
  const int ndims = magic[3];
  SLUICE_CHECK_IN(ValueError, kFn, ndims >= 1 && ndims <= kIdxMaxDims)
      << name << ": " << ndims << " dimensions; sluice reads IDX arrays of 1 to " << kIdxMaxDims;

  const size_t header = 4 + 4 * size_t(ndims);
  uint8_t sizes[4 * kIdxMaxDims];
  const size_t got_sizes = s.read(reinterpret_cast<std::byte*>(sizes), 4 * size_t(ndims));
  SLUICE_CHECK_IN(ValueError, kFn, got_sizes == 4 * size_t(ndims))
      << name << ": " << s.what() << " is " << 4 + got_sizes << " bytes, shorter than the " << header
      << "-byte header of " << ndims << " dimensions" << s.ended_early();
  IdxArray a;
  for (int i = 0; i < ndims; ++i) {
    const uint8_t* p = sizes + 4 * i;
    a.shape.push_back(int64_t(uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]));
  }
  const DType dtype = type->dtype;
  // Multiplied with an overflow check, so no shape wraps around to a small size that then matches the data.
  // A size of 0 counts as 1 here: (0, 2^32-1, 2^32-1, 2^32-1) holds no bytes, but its strides would overflow
  // int64 in every view of it.
  uint64_t span = uint64_t(dtype.itemsize());
  bool overflow = false, empty = false;
  for (int64_t d : a.shape) {
    overflow |= __builtin_mul_overflow(span, uint64_t(std::max<int64_t>(d, 1)), &span);
    empty |= d == 0;
  }
  const std::string desc = "shape " + tuple_str(a.shape) + " of " + std::string(dtype.name());
  const char* nonzero = empty ? " (its nonzero sizes)" : "";
  SLUICE_CHECK_IN(ValueError, kFn, !overflow) << name << ": " << desc << nonzero << " is over 2^64 bytes";
  SLUICE_CHECK_IN(ValueError, kFn, span <= kIdxMaxBytes)
      << name << ": " << desc << nonzero << " is " << span << " bytes, over the limit of " << kIdxMaxBytes;
  const uint64_t need = empty ? 0 : span;
  const std::string needs = name + ": " + desc + " needs " + std::to_string(need) +
                            " bytes of data after the " + std::to_string(header) + "-byte header, ";
  // Checked before allocating: a header cannot make us allocate more than the input can fill.
  if (s.exact()) {
    SLUICE_CHECK_IN(ValueError, kFn, s.most_left() == need) << needs << s.what() << " has " << s.most_left();
  } else {
    SLUICE_CHECK_IN(ValueError, kFn, need <= s.most_left()) << needs << s.bound();
  }

  a.data = std::make_shared<HostBuffer>();
  a.data->dtype = dtype;
  a.data->size = int64_t(need / uint64_t(dtype.itemsize()));
  a.data->bytes.resize(need);
  const size_t got = s.read(a.data->bytes.data(), need);
  SLUICE_CHECK_IN(ValueError, kFn, got == need) << needs << s.what() << " has " << got << s.ended_early();
  if (!s.exact()) {
    // The stream must end here, and end cleanly (a gzip trailer cut off after the data is still a cut file).
    std::byte scratch[4096];
    uint64_t extra = 0;
    for (size_t k; extra <= kMaxTrailingCount && (k = s.read(scratch, sizeof scratch)) > 0;) extra += k;
    SLUICE_CHECK_IN(ValueError, kFn, extra == 0)
        << needs << s.what() << " has "
        << (extra > kMaxTrailingCount ? "more than " + std::to_string(need + kMaxTrailingCount)
                                      : std::to_string(need + extra));
    SLUICE_CHECK_IN(ValueError, kFn, s.ended_early().empty())
        << name << ": the gzip stream is truncated after the " << need << " bytes of data";
  }
  to_native(a.data->bytes, dtype.itemsize());
  return a;
}

IdxArray parse_input(Input& in) {
  if (is_gzip(in)) {
    GzipStream s(in);
    return parse(s, in.name());
  }
  RawStream s(in);
  return parse(s, in.name());
}

}  // namespace

IdxArray parse_idx(std::span<const std::byte> bytes, const std::string& name) {
  SpanInput in(bytes, name);
  return parse_input(in);
}

IdxArray read_idx(const fs::path& path) {
  FileInput in(path);
  return parse_input(in);
}

Tensor load_idx(const fs::path& path, const std::string& device) {
  IdxArray a = read_idx(path);
  return Tensor::from_host(std::move(a.data), a.shape, device);
}

}  // namespace sluice
