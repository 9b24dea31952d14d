// PP-OCRv4 end to end (models/ocr, #14): an image rendered with known text reads back line for line on
// every device, each stage's tensors (det probability map, cls and rec softmax) are within 1e-3 of ONNX
// Runtime's on the same inputs, and bad image files are clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>

#include "base/error.h"
#include "models/ocr/pipeline.h"
#include "runtime/device.h"
#include "runtime/npy.h"
#include "tests/models/text_image.h"

namespace sluice::ocr {
namespace {

namespace fs = std::filesystem;

fs::path data_dir() {
  const char* env = std::getenv("SLUICE_DATA");
  return env && *env ? fs::path(env) : fs::path(SLUICE_SOURCE_DIR) / "data";
}
fs::path model_dir() { return data_dir() / "ocr-models" / "assets"; }
bool have_models() { return fs::exists(model_dir() / "ch_PP-OCRv4_rec_infer.onnx"); }
#define SKIP_WITHOUT_MODELS()                                               \
  if (!have_models())                                                       \
  GTEST_SKIP() << "the PP-OCRv4 models are not in " << model_dir().string() \
               << " (run scripts/fetch-models.sh)"

// The rendered sample and the text of each line; nullopt when a font is missing (`why` says which).
const std::optional<std::pair<Image, std::vector<std::string>>>& sample(std::string* why) {
  static std::string missing;
  static const std::optional<std::pair<Image, std::vector<std::string>>> s = [] {
    std::vector<test::TextLine> lines = test::sample_lines(&missing);
    if (lines.empty()) return std::optional<std::pair<Image, std::vector<std::string>>>();
    std::vector<std::string> text;
    for (const test::TextLine& l : lines) text.push_back(l.text);
    return std::optional(std::pair(test::render_text(lines), text));
  }();
  *why = "fonts missing: " + missing + " (Debian fonts-dejavu-core, fonts-wqy-zenhei)";
  return s;
}
#define SKIP_WITHOUT_SAMPLE(var)   \
  std::string why_;                \
  const auto& var = sample(&why_); \
  if (!var) GTEST_SKIP() << why_

// One pipeline per device, loaded once: the models compile on first use. Lines go to cls and rec two at a
// time: batches are exercised, and each submission on lavapipe (~0.4 GFLOP/s here) stays well inside the
// readback wait's fixed 30 s (#21); one batch of all four lines took 16 to 31 s there, by the load.
Pipeline& pipeline(const std::string& device) {
  static std::map<std::string, std::unique_ptr<Pipeline>> cache;
  auto& p = cache[device];
  if (!p) {
    Options o;
    o.device = device;
    o.rec_batch = 2;
    p = std::make_unique<Pipeline>(Pipeline::load(model_dir().string(), o));
  }
  return *p;
}

std::string find_node() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');)
    for (const char* name : {"node", "nodejs"})
      if (!d.empty() && access((fs::path(d) / name).c_str(), X_OK) == 0) return (fs::path(d) / name).string();
  return "";
}

// Why ONNX Runtime cannot run here, or "".
std::string ort_absent() {
  if (find_node().empty()) return "node is not installed (Debian: nodejs)";
  if (!fs::exists(data_dir() / "node_modules" / "onnxruntime-node"))
    return "ONNX Runtime is not in " + (data_dir() / "node_modules").string() +
           " (run scripts/fetch-models.sh)";
  return "";
}

struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("sluice_ocr_" + name + "_" + std::to_string(getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

// The one output of model `file` (its input named `input`) for `in`, computed by ONNX Runtime
// (tests/models/ort_run.js); remembered, since devices that agree give it the same inputs.
const std::vector<float>& ort_run(const std::string& file, const std::string& input, const Batch& in) {
  static TempDir tmp("ort");
  static std::map<std::tuple<std::string, Shape, std::vector<float>>, std::vector<float>> done;
  if (auto it = done.find({file, in.shape, in.data}); it != done.end()) return it->second;
  const fs::path dir = tmp.path / std::to_string(done.size());
  fs::create_directories(dir / "out");
  std::vector<std::byte> bytes(in.data.size() * sizeof(float));
  std::memcpy(bytes.data(), in.data.data(), bytes.size());
  write_npy((dir / "in.npy").string(), dtypes::float32, in.shape, bytes);
  const std::string cmd = find_node() + " " +
                          (fs::path(SLUICE_SOURCE_DIR) / "tests/models/ort_run.js").string() + " " +
                          (model_dir() / file).string() + " " + (dir / "out").string() + " " + input + "=" +
                          (dir / "in.npy").string() + " 2>&1";
  std::string log;
  FILE* p = popen(cmd.c_str(), "r");
  SLUICE_CHECK_IN(ValueError, "ort_run", p) << cmd << ": cannot start";
  char buf[512];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) log.append(buf, n);
  SLUICE_CHECK_IN(ValueError, "ort_run", pclose(p) == 0) << cmd << " failed:\n" << log;
  std::vector<fs::path> outs;
  for (const auto& e : fs::directory_iterator(dir / "out")) outs.push_back(e.path());
  SLUICE_CHECK_IN(ValueError, "ort_run", outs.size() == 1)
      << file << ": expected one output, got " << outs.size();
  NpyArray a = read_npy(outs[0].string());
  std::vector<float> out(size_t(a.data->size));
  std::memcpy(out.data(), a.data->bytes.data(), out.size() * sizeof(float));
  return done[{file, in.shape, in.data}] = std::move(out);
}

constexpr const char* kDet = "ch_PP-OCRv4_det_infer.onnx";
constexpr const char* kCls = "ch_ppocr_mobile_v2.0_cls_infer.onnx";
constexpr const char* kRec = "ch_PP-OCRv4_rec_infer.onnx";

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k) worst = std::max(worst, double(std::abs(a[k] - b[k])));
  return worst;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "  '" + x + "'\n";
  return s;
}

// ONNX Runtime's det and rec with the pipeline's host side (resizing, boxes, crops, decoding): the host
// side reads every line on its own, whatever the devices do.
TEST(OcrReference, OnnxRuntimeReadsEveryLine) {
  SKIP_WITHOUT_MODELS();
  SKIP_WITHOUT_SAMPLE(s);
  if (std::string why = ort_absent(); !why.empty()) GTEST_SKIP() << why;
  const Image& im = s->first;
  Pipeline& p = pipeline("CPU");  // its host side only: nothing runs on the device
  const Batch det_in = p.det_input(im);
  const std::vector<float>& map = ort_run(kDet, p.det().inputs().at(0).name, det_in);
  std::vector<Image> crops;
  for (const Box& b : boxes_from_map(map, int(det_in.shape[3]), int(det_in.shape[2]), im.width, im.height))
    crops.push_back(crop_quad(im, b.quad));
  const Batch rec_in = p.rec_input(crops);
  const std::vector<float>& rec = ort_run(kRec, p.rec().inputs().at(0).name, rec_in);
  const size_t classes = p.characters().size(), steps = rec.size() / classes / crops.size();
  std::vector<std::string> got;
  for (size_t k = 0; k < crops.size(); ++k)
    got.push_back(p.decode(rec.data() + k * steps * classes, int64_t(steps)).first);
  EXPECT_EQ(got, s->second) << "read:\n" << joined(got) << "expected:\n" << joined(s->second);
}

class Ocr : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      open_device(GetParam());
    } catch (const std::exception& e) { GTEST_SKIP() << GetParam() << " is absent: " << e.what(); }
  }
};

// One test per device: on a slow device one run of the pipeline is most of the test's cost.
TEST_P(Ocr, EveryLineReadsBackAndEachStageMatchesOnnxRuntime) {
  SKIP_WITHOUT_MODELS();
  SKIP_WITHOUT_SAMPLE(s);
  Pipeline& p = pipeline(GetParam());
  Times times;
  Trace t;
  const std::vector<Line> lines = p.run(s->first, &times, &t);
  std::vector<std::string> got;
  for (const Line& l : lines) got.push_back(l.text);
  EXPECT_EQ(got, s->second) << "read:\n" << joined(got) << "expected:\n" << joined(s->second);
  for (const Line& l : lines) EXPECT_FALSE(l.turned) << "'" << l.text << "' was turned upside down";
  std::printf(
      "%s, first run (building and compiling included): det %.0f ms, boxes %.1f ms, cls %.0f ms, "
      "rec %.0f ms, total %.0f ms\n",
      GetParam().c_str(), times.det_ms, times.boxes_ms, times.cls_ms, times.rec_ms, times.total_ms);

  if (std::string why = ort_absent(); !why.empty()) GTEST_SKIP() << "stages not compared: " << why;
  const double det = max_abs_diff(t.det_map, ort_run(kDet, p.det().inputs().at(0).name, t.det_in));
  double cls = 0, rec = 0;
  ASSERT_FALSE(t.rec_in.empty()) << "no lines found";
  for (size_t b = 0; b < t.cls_in.size(); ++b)
    cls =
        std::max(cls, max_abs_diff(t.cls_probs[b], ort_run(kCls, p.cls().inputs().at(0).name, t.cls_in[b])));
  for (size_t b = 0; b < t.rec_in.size(); ++b)
    rec =
        std::max(rec, max_abs_diff(t.rec_probs[b], ort_run(kRec, p.rec().inputs().at(0).name, t.rec_in[b])));
  std::printf("%s: max |sluice - ONNX Runtime|: det map %.3g, cls softmax %.3g, rec softmax %.3g\n",
              GetParam().c_str(), det, cls, rec);
  EXPECT_LE(det, 1e-3);
  EXPECT_LE(cls, 1e-3);
  EXPECT_LE(rec, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Devices, Ocr, testing::Values("CPU", "VULKAN", "CL"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

// Bad image files: each a ValueError naming the file and what is wrong with it.
class OcrBadImage : public testing::Test {
 protected:
  fs::path file(const std::string& name, const std::string& bytes) {
    const fs::path p = tmp_.path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // The message read_image throws for `p` ("" if it throws nothing).
  static std::string error(const fs::path& p) {
    try {
      read_image(p.string());
    } catch (const ValueError& e) { return e.what(); }
    return "";
  }
  TempDir tmp_{"bad_image"};
};

TEST_F(OcrBadImage, NotAnImage) {
  const fs::path p = file("notes.png", "these are not the pixels you are looking for\n");
  EXPECT_NE(error(p).find(p.string() + ": not a PNG or JPEG image (45 bytes"), std::string::npos) << error(p);
}

TEST_F(OcrBadImage, EmptyFile) {
  const fs::path p = file("empty.png", "");
  EXPECT_NE(error(p).find(p.string() + ": the file is empty (0 bytes)"), std::string::npos) << error(p);
}

TEST_F(OcrBadImage, OnePixel) {
  const fs::path p = tmp_.path / "dot.png";
  test::write_png(Image{1, 1, {0, 0, 0}}, p.string());
  EXPECT_NE(error(p).find(p.string() + ": the image is 1x1 pixels; text needs at least 8 pixels a side"),
            std::string::npos)
      << error(p);
}

uint32_t crc32(const std::string& bytes) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

// A PNG whose header says 20000x20000 (1.2 GB of pixels): refused from the header, before decoding.
TEST_F(OcrBadImage, HugeImageIsRefusedBeforeDecoding) {
  auto be32 = [](uint32_t v) { return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; };
  const std::string ihdr = "IHDR" + be32(20000) + be32(20000) + std::string{8, 2, 0, 0, 0};  // 8-bit RGB
  const std::string png = "\x89PNG\r\n\x1a\n" + be32(13) + ihdr + be32(crc32(ihdr));
  const fs::path p = file("huge.png", png);
  EXPECT_NE(error(p).find(p.string() + ": the image is 20000x20000 pixels; images up to 16384 pixels a side"),
            std::string::npos)
      << error(p);
}

TEST(OcrModels, MissingModelsSayHowToFetchThem) {
  try {
    Pipeline::load("no/such/dir");
    FAIL() << "loaded models from no/such/dir";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/ppocr_keys_v1.txt is missing (scripts/fetch-models.sh"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice::ocr
