// IDX files (runtime/idx.h) on the CPU device: every element type raw and gzipped (written here, the gzip
// ones by zlib's gzip writer), empty and many-dimensional shapes, concatenated gzip members, Debian's
// Fashion-MNIST files when dataset-fashion-mnist is installed, and a table of malformed files with their
// messages.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/idx.h"
#include "runtime/realize.h"
#include "runtime/tensor.h"
#include "tests/ops/test_devices.h"
#include "tests/scratch_dir.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

using testing_files::bytes_of;

class Idx : public testing_files::ScratchDirTest {};

void write_file(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary).write(s.data(), std::streamsize(s.size()));
}
std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
// `s` compressed by zlib's gzip writer (gzopen/gzwrite), as gzip(1) would write it.
std::string gzipped(const fs::path& scratch, const std::string& s) {
  gzFile f = gzopen(scratch.c_str(), "wb9");
  EXPECT_NE(f, nullptr);
  if (!s.empty()) { EXPECT_EQ(gzwrite(f, s.data(), unsigned(s.size())), int(s.size())); }
  EXPECT_EQ(gzclose(f), Z_OK);
  std::string out = read_file(scratch);
  fs::remove(scratch);
  return out;
}

std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }
// An IDX header: type byte and sizes.
std::string header(uint8_t type, const std::vector<uint32_t>& sizes) {
  std::string h = {'\0', '\0', char(type), char(sizes.size())};
  for (uint32_t d : sizes) h += be32(d);
  return h;
}
// The elements big-endian, written from each value's bits (not by reversing bytes, the reader's way).
template <class T>
std::string big_endian(const std::vector<T>& values) {
  std::string out;
  for (const T& v : values) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    for (int i = int(sizeof v) - 1; i >= 0; --i) out += char(bits >> (8 * i));
  }
  return out;
}
template <class T>
std::vector<std::byte> native(const std::vector<T>& values) {
  std::vector<std::byte> b(values.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// One array: the file's bytes and what it must read back as.
struct Case {
  const char* what;
  std::string file;
  DType dtype;
  Shape shape;
  std::vector<std::byte> bytes;
};
template <class T>
Case make_case(const char* what, uint8_t type, DType dtype, const std::vector<uint32_t>& sizes,
               const std::vector<T>& values) {
  return {what, header(type, sizes) + big_endian(values), dtype, Shape(sizes.begin(), sizes.end()),
          native(values)};
}

std::vector<Case> every_type() {
  const float f_inf = std::numeric_limits<float>::infinity();
  const double d_nan = std::numeric_limits<double>::quiet_NaN();
  return {
      make_case<uint8_t>("0x08 uint8", 0x08, dtypes::uint8, {2, 3}, {0, 1, 127, 128, 254, 255}),
      make_case<int8_t>("0x09 int8", 0x09, dtypes::int8, {3, 2}, {-128, -1, 0, 1, 127, -7}),
      make_case<int16_t>("0x0B int16", 0x0B, dtypes::int16, {1, 2, 3}, {-32768, -2, 0, 258, 32767, 1000}),
      make_case<int32_t>("0x0C int32", 0x0C, dtypes::int32, {6},
                         {std::numeric_limits<int32_t>::min(), -1, 0, 0x01020304,
                          std::numeric_limits<int32_t>::max(), -123456}),
      make_case<float>("0x0D float32", 0x0D, dtypes::float32, {2, 1, 3},
                       {-0.0f, 1.5f, -3.25e-38f, 3.4e38f, -f_inf, 1e-45f}),
      make_case<double>("0x0E float64", 0x0E, dtypes::float64, {3, 2},
                        {-0.0, 1.0 / 3.0, -1e-308, 1.7e308, d_nan, 4.9e-324}),
      make_case<uint8_t>("5 dimensions", 0x08, dtypes::uint8, {2, 1, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
      make_case<int16_t>("one element", 0x0B, dtypes::int16, {1}, {-300}),
      make_case<int32_t>("an empty dimension", 0x0C, dtypes::int32, {3, 0}, {}),
      make_case<float>("empty first dimension", 0x0D, dtypes::float32, {0, 28, 28}, {}),
  };
}

void expect_reads_back(const Case& c, const fs::path& p) {
  const Tensor t = load_idx(p, "CPU");
  EXPECT_EQ(t.dtype(), c.dtype);
  EXPECT_EQ(t.shape(), c.shape);
  EXPECT_EQ(bytes_of(t), c.bytes);
}

TEST_F(Idx, ReadsEveryElementTypeRaw) {
  for (const Case& c : every_type()) {
    SCOPED_TRACE(c.what);
    write_file(dir_ / "a.idx", c.file);
    expect_reads_back(c, dir_ / "a.idx");
  }
}

TEST_F(Idx, ReadsEveryElementTypeGzipped) {
  for (const Case& c : every_type()) {
    SCOPED_TRACE(c.what);
    write_file(dir_ / "a.idx.gz", gzipped(dir_ / "scratch.gz", c.file));
    expect_reads_back(c, dir_ / "a.idx.gz");
  }
}

TEST_F(Idx, ValuesComeBackAsNumbers) {
  // The same through the typed path, so a byte order that round-trips the bytes but not the values shows.
  write_file(dir_ / "i.idx", header(0x0C, {2, 2}) + big_endian<int32_t>({-2, 70000, 3, -1 << 30}));
  EXPECT_EQ(load_idx(dir_ / "i.idx", "CPU").to_vector<int32_t>(),
            (std::vector<int32_t>{-2, 70000, 3, -1 << 30}));
  write_file(dir_ / "f.idx.gz",
             gzipped(dir_ / "s.gz", header(0x0D, {3}) + big_endian<float>({0.5f, -2.f, 1e6f})));
  EXPECT_EQ(load_idx(dir_ / "f.idx.gz", "CPU").to_vector<float>(), (std::vector<float>{0.5f, -2.f, 1e6f}));
}

TEST_F(Idx, ReadsConcatenatedGzipMembersAsOneStream) {
  // `cat a.gz b.gz` is a valid gzip file (gzip -d reads it whole); the split falls inside the header.
  const std::vector<int16_t> v = {1, -2, 3, -4, 5, -6};
  const std::string file = header(0x0B, {3, 2}) + big_endian(v);
  write_file(dir_ / "m.gz", gzipped(dir_ / "s.gz", file.substr(0, 6)) + gzipped(dir_ / "s.gz", "") +
                                gzipped(dir_ / "s.gz", file.substr(6)));
  Tensor t = load_idx(dir_ / "m.gz", "CPU");
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.to_vector<int16_t>(), v);
}

TEST_F(Idx, ParsesBytesAsItReadsFiles) {
  const std::string file = header(0x09, {4}) + big_endian<int8_t>({-1, 2, -3, 4});
  const IdxArray a = parse_idx(std::as_bytes(std::span(file)), "mem");
  EXPECT_EQ(a.shape, (Shape{4}));
  EXPECT_EQ(a.data->dtype, dtypes::int8);
  EXPECT_EQ(a.data->size, 4);
  EXPECT_EQ(a.data->bytes, native<int8_t>({-1, 2, -3, 4}));
}

// One malformed file: its bytes and the parts of the message that name what is wrong.
struct BadFile {
  const char* what;
  std::string bytes;
  std::vector<std::string> message;
};

TEST_F(Idx, RejectsMalformedFilesNamingTheProblem) {
  const fs::path scratch = dir_ / "scratch.gz";
  const std::string u8x600 = header(0x08, {20, 30}) + std::string(600, '\x07');
  const std::string gz = gzipped(scratch, u8x600);
  // Incompressible data, so cutting the file in half cuts the data, not just the trailer.
  std::string noise;
  for (uint32_t i = 0, x = 1; i < 4000; ++i) noise += char((x = x * 1103515245 + 12345) >> 16);
  const std::string noise_gz = gzipped(scratch, header(0x08, {4000}) + noise);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 1;  // the trailer: CRC-32, then the length, little-endian
  std::string bad_method = gz;
  bad_method[2] = 7;  // gzip's compression method: 8 is deflate
  std::string dims33 = header(0x08, std::vector<uint32_t>(33, 1)) + "x";
  const BadFile cases[] = {
      {"empty file", "", {"the file is 0 bytes, shorter than the 4-byte IDX magic"}},
      {"3 bytes", std::string("\0\0\x08", 3), {"the file is 3 bytes, shorter than the 4-byte IDX magic"}},
      {"a zip file",
       "PK\x03\x04 etc",
       {"not an IDX file: the file starts with 50 4b, not 00 00 (nor gzip's 1f 8b)"}},
      {"one gzip byte", "\x1f", {"the file is 1 bytes, shorter than the 4-byte IDX magic"}},
      {"unknown type",
       header(0x0A, {2}) + "ab",
       {"unknown element type 0x0A (IDX has 0x08 unsigned byte, 0x09 signed byte, 0x0B short, 0x0C int, "
        "0x0D float, 0x0E double)"}},
      {"0 dimensions", header(0x08, {}) + "x", {"0 dimensions; sluice reads IDX arrays of 1 to 32"}},
      {"33 dimensions", dims33, {"33 dimensions; sluice reads IDX arrays of 1 to 32"}},
      {"255 dimensions", std::string("\0\0\x08\xff", 4), {"255 dimensions"}},
      {"header cut short",
       header(0x08, {2, 3, 4}).substr(0, 12),
       {"the file is 12 bytes, shorter than the 16-byte header of 3 dimensions"}},
      {"size overflows",
       header(0x0C, {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}),
       {"shape (4294967295, 4294967295, 4294967295, 4294967295) of int is over 2^64 bytes"}},
      {"size over the limit",
       header(0x0E, {65536, 65536, 8}),
       {"shape (65536, 65536, 8) of double is 274877906944 bytes, over the limit of 17179869184"}},
      {"an empty shape of huge strides",
       header(0x08, {0, 0xffffffff, 0xffffffff, 0xffffffff}),
       {"shape (0, 4294967295, 4294967295, 4294967295) of uchar (its nonzero sizes) is over 2^64 bytes"}},
      {"data cut short",
       header(0x0B, {2, 3}) + std::string(10, '\0'),
       {"shape (2, 3) of short needs 12 bytes of data after the 12-byte header, the file has 10"}},
      {"trailing bytes",
       header(0x0B, {2, 3}) + std::string(14, '\0'),
       {"shape (2, 3) of short needs 12 bytes of data after the 12-byte header, the file has 14"}},
      {"data for an empty shape",
       header(0x08, {3, 0}) + "z",
       {"shape (3, 0) of uchar needs 0 bytes of data after the 12-byte header, the file has 1"}},
      {"header announcing 100 MB",
       header(0x08, {100000, 1000}),
       {"needs 100000000 bytes of data after the 12-byte header, the file has 0"}},
      {"gzip: magic only",
       "\x1f\x8b",
       {"the decompressed data is 0 bytes, shorter than the 4-byte IDX magic (the gzip stream is "
        "truncated)"}},
      {"gzip: not IDX inside",
       gzipped(scratch, "PK\x03\x04 etc"),
       {"not an IDX file: the decompressed data starts with 50 4b, not 00 00"}},
      {"gzip: cut in the data",
       noise_gz.substr(0, noise_gz.size() / 2),
       {"shape (4000,) of uchar needs 4000 bytes of data after the 8-byte header, the decompressed data has ",
        " (the gzip stream is truncated)"}},
      {"gzip: trailer cut off",
       gz.substr(0, gz.size() - 4),
       {"the gzip stream is truncated after the 600 bytes of data"}},
      {"gzip: data short, stream whole",
       gzipped(scratch, u8x600.substr(0, u8x600.size() - 10)),
       {"shape (20, 30) of uchar needs 600 bytes of data after the 12-byte header, the decompressed data has "
        "590"}},
      {"gzip: trailing data",
       gzipped(scratch, u8x600 + "12345"),
       {"needs 600 bytes of data after the 12-byte header, the decompressed data has 605"}},
      {"gzip: far too much data",
       gzipped(scratch, u8x600 + std::string(3 << 20, 'x')),
       {"needs 600 bytes of data after the 12-byte header, the decompressed data has more than 1049176"}},
      {"gzip: a header the file cannot fill",
       gzipped(scratch, header(0x08, {100000, 1000})),
       {"shape (100000, 1000) of uchar needs 100000000 bytes of data after the 12-byte header, more than "
        "the ",
        "-byte gzip file can hold (deflate expands at most 1032:1)"}},
      {"gzip: bad CRC", bad_crc, {"corrupt gzip stream: incorrect data check (at byte "}},
      {"gzip: unknown method", bad_method, {"corrupt gzip stream: unknown compression method"}},
      {"gzip: garbage appended",
       gz + "xyz",
       {"3 bytes after the gzip stream's end (at byte " + std::to_string(gz.size()) +
        ") are not another gzip member"}},
      {"gzip: a second member cut short", gz + gz.substr(0, 5), {"the gzip stream is truncated"}},
  };
  for (const BadFile& c : cases) {
    SCOPED_TRACE(c.what);
    const fs::path p = dir_ / "bad.idx";
    write_file(p, c.bytes);
    std::string msg;
    try {
      load_idx(p, "CPU");
    } catch (const ValueError& e) { msg = e.what(); }
    EXPECT_EQ(msg.rfind("[load_idx] " + p.string() + ": ", 0), 0u) << msg;
    for (const std::string& part : c.message) EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST_F(Idx, MissingFileAndFolderAreValueErrors) {
  std::string msg;
  try {
    load_idx(dir_ / "absent.idx", "CPU");
  } catch (const ValueError& e) { msg = e.what(); }
  EXPECT_NE(msg.find("absent.idx: cannot be opened: No such file or directory"), std::string::npos) << msg;
  msg.clear();
  try {
    load_idx(dir_, "CPU");
  } catch (const ValueError& e) { msg = e.what(); }
  EXPECT_NE(msg.find(": not a regular file"), std::string::npos) << msg;
}

// Debian's dataset-fashion-mnist (a documented package path, not one of this project's machines).
const fs::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

// The facts below were read from the package's files (0.0~git20200523.55506a9-1) with Python's gzip module,
// independently of load_idx: the shapes, the first labels, the count of each class, and byte sums of the
// images (the training set's first image sums to 76247).
class FashionMnist : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kFashionMnist / "train-images-idx3-ubyte.gz"))
      GTEST_SKIP() << "Fashion-MNIST is absent: install Debian's dataset-fashion-mnist ("
                   << kFashionMnist.string() << ")";
    if (std::string why = testing_devices::absent("CPU"); !why.empty()) GTEST_SKIP() << "CPU: " << why;
  }
};

uint64_t sum(const std::vector<std::byte>& b, size_t begin = 0, size_t end = SIZE_MAX) {
  uint64_t s = 0;
  for (size_t i = begin; i < std::min(end, b.size()); ++i) s += uint8_t(b[i]);
  return s;
}
std::array<int, 10> class_counts(const std::vector<std::byte>& labels) {
  std::array<int, 10> n = {};
  for (std::byte l : labels) {
    EXPECT_LT(uint8_t(l), 10);
    if (uint8_t(l) < 10) ++n[uint8_t(l)];
  }
  return n;
}

TEST_F(FashionMnist, TrainingSetIs60000ImagesOf28x28WithBalancedLabels) {
  // The 47 MB of images are read once, here.
  const Tensor x = load_idx(kFashionMnist / "train-images-idx3-ubyte.gz", "CPU");
  EXPECT_EQ(x.dtype(), dtypes::uint8);
  EXPECT_EQ(x.shape(), (Shape{60000, 28, 28}));
  const std::vector<std::byte> px = bytes_of(x);
  ASSERT_EQ(px.size(), 60000u * 28 * 28);
  EXPECT_EQ(sum(px, 0, 784), 76247u);
  EXPECT_EQ(sum(px), 3431114169u);

  const Tensor y = load_idx(kFashionMnist / "train-labels-idx1-ubyte.gz", "CPU");
  EXPECT_EQ(y.dtype(), dtypes::uint8);
  EXPECT_EQ(y.shape(), (Shape{60000}));
  const std::vector<std::byte> labels = bytes_of(y);
  ASSERT_EQ(labels.size(), 60000u);
  EXPECT_EQ(uint8_t(labels[0]), 9);  // an ankle boot
  EXPECT_EQ(native<uint8_t>({9, 0, 0, 3, 0, 2, 7, 2, 5, 5}),
            std::vector<std::byte>(labels.begin(), labels.begin() + 10));
  std::array<int, 10> each;
  each.fill(6000);
  EXPECT_EQ(class_counts(labels), each);
}

TEST_F(FashionMnist, TestSetIs10000ImagesOf28x28WithBalancedLabels) {
  const Tensor x = load_idx(kFashionMnist / "t10k-images-idx3-ubyte.gz", "CPU");
  EXPECT_EQ(x.dtype(), dtypes::uint8);
  EXPECT_EQ(x.shape(), (Shape{10000, 28, 28}));
  const std::vector<std::byte> px = bytes_of(x);
  EXPECT_EQ(sum(px, 0, 784), 33456u);
  EXPECT_EQ(sum(px), 573469082u);

  const Tensor y = load_idx(kFashionMnist / "t10k-labels-idx1-ubyte.gz", "CPU");
  EXPECT_EQ(y.shape(), (Shape{10000}));
  const std::vector<std::byte> labels = bytes_of(y);
  ASSERT_EQ(labels.size(), 10000u);
  EXPECT_EQ(uint8_t(labels[0]), 9);
  EXPECT_EQ(native<uint8_t>({9, 2, 1, 1, 6, 1, 4, 6, 5, 7}),
            std::vector<std::byte>(labels.begin(), labels.begin() + 10));
  std::array<int, 10> each;
  each.fill(1000);
  EXPECT_EQ(class_counts(labels), each);
}

}  // namespace
}  // namespace sluice
