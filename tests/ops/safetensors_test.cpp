// safetensors files (runtime/safetensors.h) on the CPU device: round trips of every dtype and of empty and
// scalar shapes, metadata, the layout safe_save writes, a file written by another program
// (scripts/safetensors_fixture.py), a table of malformed files and their messages, and a failed save that
// leaves the old file in place.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/realize.h"
#include "runtime/safetensors.h"
#include "runtime/tensor.h"
#include "tests/ops/test_devices.h"
#include "tests/scratch_dir.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

using testing_files::bytes_of;

class Safetensors : public testing_files::ScratchDirTest {};

// A tensor over these exact bytes.
Tensor from_raw(DType dtype, const Shape& shape, std::vector<std::byte> bytes) {
  auto host = std::make_shared<HostBuffer>();
  host->dtype = dtype;
  host->size = prod(shape);
  host->bytes = std::move(bytes);
  return Tensor::from_host(std::move(host), shape, "CPU");
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_file(const fs::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary).write(s.data(), std::streamsize(s.size()));
}
// A file of this header text (unpadded) and data section.
std::string file_of(const std::string& header, const std::string& data = "") {
  std::string f(8, '\0');
  for (int i = 0; i < 8; ++i) f[size_t(i)] = char(uint64_t(header.size()) >> (8 * i));
  return f + header + data;
}

const DType kDTypes[] = {dtypes::bool_,   dtypes::uint8,    dtypes::int8,  dtypes::int16,  dtypes::uint16,
                         dtypes::float16, dtypes::bfloat16, dtypes::int32, dtypes::uint32, dtypes::float32,
                         dtypes::float64, dtypes::int64,    dtypes::uint64};

TEST_F(Safetensors, RoundTripsEveryDtypeAndShape) {
  // Bytes that differ at every position, so a swapped or shifted tensor shows; bools hold 0/1.
  std::map<std::string, Tensor> saved;
  for (DType dt : kDTypes)
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{2, 3, 4}}) {
      std::vector<std::byte> b(size_t(prod(shape) * dt.itemsize()));
      for (size_t i = 0; i < b.size(); ++i) b[i] = std::byte(dt == dtypes::bool_ ? i % 3 == 0 : i * 7 + 3);
      saved.emplace(dt.name() + "/" + tuple_str(shape), from_raw(dt, shape, b));
    }
  safe_save(saved, dir_ / "all.safetensors");
  std::map<std::string, Tensor> loaded = safe_load(dir_ / "all.safetensors", "CPU");
  ASSERT_EQ(loaded.size(), saved.size());
  for (auto& [name, want] : saved) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(loaded.count(name));
    Tensor& got = loaded.at(name);
    EXPECT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.device(), "CPU");
    EXPECT_EQ(bytes_of(got), bytes_of(want));
  }
}

TEST_F(Safetensors, SavesComputedTensors) {
  Tensor a = Tensor::from({1.f, 2.f, 3.f, 4.f}, {2, 2}, "CPU");
  safe_save({{"doubled", a * 2}, {"column", a.transpose(0, 1).contiguous()}}, dir_ / "c.safetensors");
  std::map<std::string, Tensor> l = safe_load(dir_ / "c.safetensors", "CPU");
  EXPECT_EQ(l.at("doubled").to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(l.at("column").to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
}

TEST_F(Safetensors, MetadataRoundTrips) {
  const std::map<std::string, std::string> meta = {
      {"format", "pt"}, {"quote\"and\\slash", "line\nbreak"}, {"unicode", "\xc3\xa9t\xc3\xa9"}, {"", ""}};
  safe_save({{"x", Tensor::from({1, 2}, {2}, "CPU")}}, dir_ / "m.safetensors", meta);
  EXPECT_EQ(safe_load_metadata(dir_ / "m.safetensors"), meta);
  safe_save({{"x", Tensor::from({1, 2}, {2}, "CPU")}}, dir_ / "none.safetensors");
  EXPECT_TRUE(safe_load_metadata(dir_ / "none.safetensors").empty());
}

TEST_F(Safetensors, WritesTheReferenceLayout) {
  // "__metadata__" first, keys sorted, compact JSON padded with spaces to a multiple of 8, data ordered by
  // itemsize (the int64 before the float32 though "a" sorts first) so each tensor is aligned.
  safe_save({{"a", Tensor::from({1.f}, {1}, "CPU")}, {"b", Tensor::from({int64_t(2)}, {1}, "CPU")}},
            dir_ / "l.safetensors", {{"k", "v"}});
  const std::string h = R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                        R"("b":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})";
  const std::string padded = h + std::string((8 - h.size() % 8) % 8, ' ');
  std::string data(12, '\0');
  const int64_t two = 2;
  const float one = 1.f;
  std::memcpy(data.data(), &two, 8);
  std::memcpy(data.data() + 8, &one, 4);
  EXPECT_EQ(read_file(dir_ / "l.safetensors"), file_of(padded, data));
}

TEST_F(Safetensors, ReadsAFileWrittenByPython) {
  // Values from scripts/safetensors_fixture.py, which wrote the file without sluice.
  const fs::path p = fs::path(SLUICE_SOURCE_DIR) / "tests/data/safetensors_fixture.safetensors";
  std::map<std::string, Tensor> t = safe_load(p, "CPU");
  EXPECT_EQ(t.size(), 14u);
  EXPECT_EQ(t.at("weight").shape(), (Shape{2, 3}));
  EXPECT_EQ(t.at("weight").to_vector<float>(), (std::vector<float>{0.5f, -1.25f, 3.f, 100.f, -0.f, 7.75f}));
  EXPECT_EQ(t.at("bias").dtype(), dtypes::float16);
  EXPECT_EQ(t.at("bias").to_vector<float>(), (std::vector<float>{1.f, -2.5f, 65504.f}));
  EXPECT_EQ(t.at("bf").dtype(), dtypes::bfloat16);
  EXPECT_EQ(t.at("bf").to_vector<float>(), (std::vector<float>{1.f, -3.5f, 0.15625f, 256.f}));
  EXPECT_EQ(t.at("scalar").shape(), Shape{});
  EXPECT_EQ(t.at("scalar").item<double>(), 3.141592653589793);
  EXPECT_EQ(t.at("ids").to_vector<int64_t>(), (std::vector<int64_t>{0, -1, int64_t(1) << 40, INT64_MIN}));
  EXPECT_EQ(t.at("big").to_vector<uint64_t>(), (std::vector<uint64_t>{UINT64_MAX, 12345678901234u}));
  EXPECT_EQ(t.at("i32").to_vector<int32_t>(), (std::vector<int32_t>{1, -2, INT32_MAX, INT32_MIN}));
  EXPECT_EQ(t.at("u32").shape(), (Shape{1, 2}));
  EXPECT_EQ(t.at("u32").to_vector<uint32_t>(), (std::vector<uint32_t>{UINT32_MAX, 7}));
  EXPECT_EQ(t.at("i16").to_vector<int16_t>(), (std::vector<int16_t>{-32768, 5}));
  EXPECT_EQ(t.at("u16").to_vector<uint16_t>(), (std::vector<uint16_t>{65535, 1}));
  EXPECT_EQ(t.at("i8").to_vector<int8_t>(), (std::vector<int8_t>{-128, 127, 0}));
  EXPECT_EQ(t.at("counts").to_vector<uint8_t>(), (std::vector<uint8_t>{0, 255, 7, 128}));
  EXPECT_EQ(t.at("mask").to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(t.at("empty").shape(), (Shape{0, 2}));
  EXPECT_EQ(t.at("empty").dtype(), dtypes::int32);
  EXPECT_EQ(safe_load_metadata(p), (std::map<std::string, std::string>{
                                       {"format", "pt"}, {"writer", "scripts/safetensors_fixture.py"}}));
}

TEST_F(Safetensors, ReadsNonzeroBoolBytesAsTrue) {
  write_file(dir_ / "b.safetensors", file_of(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                                             std::string("\x00\x02\xff", 3)));
  EXPECT_EQ(bytes_of(safe_load(dir_ / "b.safetensors", "CPU").at("m")),
            (std::vector<std::byte>{std::byte{0}, std::byte{1}, std::byte{1}}));
}

// One malformed file: its bytes and a part of the message that names what is wrong.
struct BadFile {
  const char* what;
  std::string bytes;
  const char* message;
};

std::string entry(const char* name, const char* dtype, const char* shape, const char* offsets) {
  return std::string("\"") + name + "\":{\"dtype\":" + dtype + ",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

TEST_F(Safetensors, RejectsMalformedFilesNamingTheProblem) {
  const std::string f32x2 = entry("a", "\"F32\"", "[2]", "[0,8]");
  const std::string d8(8, '\x01');
  std::string huge_len(8, '\0');
  huge_len[7] = '\x7f';
  std::string just_over = file_of("{}");
  just_over[0] = '\x03';  // claims 3 header bytes, the file has 2
  const BadFile cases[] = {
      {"empty file", "", "0 bytes, shorter than the 8-byte header length"},
      {"7 bytes", std::string("\x02\0\0\0\0\0\0", 7), "7 bytes, shorter than the 8-byte header length"},
      {"header past the end", just_over, "header length 3 runs past the end of the 10-byte file"},
      {"absurd header length", huge_len + "{}", "header length 9151314442816847872 is over the limit"},
      {"header over 100 MB", file_of("{}").replace(0, 8, std::string("\x01\xe1\xf5\x05\0\0\0\0", 8)),
       "header length 100000001 is over the limit of 100000000 bytes"},
      {"not JSON", file_of("{\"a\":"), "header is not valid JSON"},
      {"trailing garbage", file_of("{} x"), "header is not valid JSON"},
      {"not UTF-8", file_of("{\"\xff\":1}"), "header is not valid JSON"},
      {"array header", file_of("[1,2]"), "header is [1,2], not a JSON object"},
      {"entry not an object", file_of("{\"a\":5}", d8), "tensor \"a\": entry is 5, not an object"},
      {"no dtype", file_of(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", d8),
       "tensor \"a\" has no \"dtype\""},
      {"no shape", file_of(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", d8),
       "tensor \"a\" has no \"shape\""},
      {"no offsets", file_of(R"({"a":{"dtype":"F32","shape":[2]}})", d8),
       "tensor \"a\" has no \"data_offsets\""},
      {"dtype not a string", file_of("{" + entry("a", "4", "[2]", "[0,8]") + "}", d8),
       "dtype 4 is not a string"},
      {"unknown dtype", file_of("{" + entry("a", "\"F8_E4M3\"", "[8]", "[0,8]") + "}", d8),
       "unknown dtype \"F8_E4M3\" (sluice reads BOOL, U8"},
      {"lower-case dtype", file_of("{" + entry("a", "\"f32\"", "[2]", "[0,8]") + "}", d8),
       "unknown dtype \"f32\""},
      {"shape not a list", file_of("{" + entry("a", "\"F32\"", "2", "[0,8]") + "}", d8),
       "shape 2 is not a list"},
      {"fractional shape", file_of("{" + entry("a", "\"F32\"", "[2.0]", "[0,8]") + "}", d8),
       "shape [2.0] holds 2.0, not an integer"},
      {"string in shape", file_of("{" + entry("a", "\"F32\"", "[\"2\"]", "[0,8]") + "}", d8),
       "not an integer"},
      {"negative shape", file_of("{" + entry("a", "\"F32\"", "[-2,-1]", "[0,8]") + "}", d8),
       "shape [-2,-1] has a negative dimension"},
      {"overflowing shape",
       file_of("{" + entry("a", "\"F32\"", "[4294967296,4294967296,4]", "[0,8]") + "}", d8),
       "shape [4294967296,4294967296,4] has more than 2^63 elements"},
      {"shape past uint64", file_of("{" + entry("a", "\"F32\"", "[18446744073709551616]", "[0,8]") + "}", d8),
       "not an integer"},
      {"itemsize overflow", file_of("{" + entry("a", "\"F64\"", "[4611686018427387904]", "[0,8]") + "}", d8),
       "needs over 2^64 bytes, data_offsets [0, 8] hold 8"},
      {"offsets not a pair", file_of("{" + entry("a", "\"F32\"", "[2]", "[0,8,8]") + "}", d8),
       "data_offsets [0,8,8] is not a pair of non-negative integers"},
      {"negative offset", file_of("{" + entry("a", "\"F32\"", "[0]", "[-1,-1]") + "}"),
       "data_offsets [-1,-1] is not a pair"},
      {"offsets reversed", file_of("{" + entry("a", "\"F32\"", "[0]", "[8,0]") + "}", d8),
       "data_offsets [8, 0] begin after they end"},
      {"offsets past the data", file_of("{" + entry("a", "\"F32\"", "[2]", "[0,8]") + "}", "1234"),
       "data_offsets [0, 8] end past the data section's 4 bytes"},
      {"huge offsets",
       file_of("{" + entry("a", "\"F32\"", "[0]", "[18446744073709551615,18446744073709551615]") + "}"),
       "end past the data section's 0 bytes"},
      {"size mismatch", file_of("{" + entry("a", "\"F32\"", "[3]", "[0,8]") + "}", d8),
       "shape [3] of F32 needs 12 bytes, data_offsets [0, 8] hold 8"},
      {"overlap", file_of("{" + f32x2 + "," + entry("b", "\"F32\"", "[1]", "[4,8]") + "}", d8),
       "tensor \"b\" at [4, 8) overlaps tensor \"a\", which ends at 8"},
      {"same bytes twice", file_of("{" + f32x2 + "," + entry("b", "\"F32\"", "[2]", "[0,8]") + "}", d8),
       "overlaps tensor \"a\""},
      {"hole between",
       file_of("{" + entry("a", "\"F32\"", "[1]", "[0,4]") + "," + entry("b", "\"U8\"", "[2]", "[6,8]") + "}",
               d8),
       "the data section has a hole at [4, 6) before tensor \"b\""},
      {"hole at the start", file_of("{" + entry("a", "\"F32\"", "[1]", "[4,8]") + "}", d8),
       "hole at [0, 4) before tensor \"a\""},
      {"trailing bytes", file_of("{" + f32x2 + "}", d8 + "xx"),
       "the data section has 10 bytes, the tensors cover only [0, 8)"},
      {"data without tensors", file_of("{}", "x"),
       "the data section has 1 bytes, the tensors cover only [0, 0)"},
      {"duplicate name", file_of("{" + f32x2 + "," + f32x2 + "}", d8),
       "header repeats the tensor name \"a\""},
      {"duplicate field",
       file_of(R"({"a":{"dtype":"F32","dtype":"I32","shape":[2],"data_offsets":[0,8]}})", d8),
       "header repeats the key \"dtype\""},
      {"metadata not an object", file_of(R"({"__metadata__":[1]})"), "__metadata__ is [1], not an object"},
      {"metadata not strings", file_of(R"({"__metadata__":{"epoch":3}})"),
       "__metadata__ \"epoch\" is 3, not a string"},
      {"deep nesting", file_of("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}"),
       "header nests deeper than 64 levels"},
  };
  for (const BadFile& c : cases) {
    SCOPED_TRACE(c.what);
    const fs::path p = dir_ / "bad.safetensors";
    write_file(p, c.bytes);
    std::string msg;
    try {
      safe_load(p, "CPU");
    } catch (const ValueError& e) { msg = e.what(); }
    EXPECT_EQ(msg.rfind("[safe_load] " + p.string() + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    // The metadata reader checks the same header, under its own name.
    std::string meta_msg;
    try {
      safe_load_metadata(p);
    } catch (const ValueError& e) { meta_msg = e.what(); }
    EXPECT_EQ(meta_msg.rfind("[safe_load_metadata] " + p.string() + ": ", 0), 0u) << meta_msg;
  }
}

TEST_F(Safetensors, MissingFileAndFolderAreValueErrors) {
  EXPECT_THROW(safe_load(dir_ / "absent.safetensors", "CPU"), ValueError);
  EXPECT_THROW(safe_load(dir_, "CPU"), ValueError);
}

TEST_F(Safetensors, FailedSaveLeavesTheOldFileIntact) {
  const fs::path p = dir_ / "w.safetensors";
  safe_save({{"w", Tensor::from({1.f, 2.f}, {2}, "CPU")}}, p);
  const std::string before = read_file(p);
  // An empty() tensor has no contents to read: the save fails after the header and the first tensor are
  // written to the temporary file.
  std::map<std::string, Tensor> bad = {{"a", Tensor::from({int64_t(5)}, {1}, "CPU")},
                                       {"b", Tensor::empty({4}, dtypes::float32, "CPU")}};
  EXPECT_THROW(safe_save(bad, p), Error);
  EXPECT_EQ(read_file(p), before);
  EXPECT_EQ(safe_load(p, "CPU").at("w").to_vector<float>(), (std::vector<float>{1, 2}));
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.exists();
  EXPECT_EQ(files, 1) << "the temporary file was left behind";
}

TEST_F(Safetensors, RejectsTensorsTheFormatCannotHold) {
  const fs::path p = dir_ / "x.safetensors";
  std::string msg;
  try {
    safe_save({{"__metadata__", Tensor::from({1.f}, {1}, "CPU")}}, p);
  } catch (const ValueError& e) { msg = e.what(); }
  EXPECT_NE(msg.find("[safe_save] "), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot be named \"__metadata__\""), std::string::npos) << msg;
  msg.clear();
  try {
    safe_save({{std::string("\xff"), Tensor::from({1.f}, {1}, "CPU")}}, p);
  } catch (const ValueError& e) { msg = e.what(); }
  EXPECT_NE(msg.find("is not valid UTF-8"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(p));
}

}  // namespace
}  // namespace sluice
