#include "models/ocr/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/reference.h"

namespace sluice::ocr {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr int kClsH = 48, kClsW = 192, kRecH = 48, kRecMinW = 320;

onnx::Model load_model(const fs::path& dir, const char* file, const std::string& device) {
  const fs::path p = dir / file;
  SLUICE_CHECK_IN(ValueError, "ocr", fs::exists(p))
      << "model " << p.string() << " is missing (scripts/fetch-models.sh fetches the PP-OCRv4 models)";
  return onnx::Model::load(p.string(), {.device = device});
}

// Writes im, resized to w x h, into channel planes of `out` at image index n of a width `pad_w` batch,
// each channel as (x / 255 - mean[c]) / std[c] (channels in BGR order, as PaddleOCR's arrays hold them).
void put(const Image& im, int w, int h, int pad_w, size_t n, const float mean[3], const float std[3],
         std::vector<float>& out) {
  Image r = resize(im, w, h);
  const size_t plane = size_t(h) * size_t(pad_w);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        out[(n * 3 + size_t(c)) * plane + size_t(y) * size_t(pad_w) + size_t(x)] =
            (float(r.at(x, y, c)) / 255.0f - mean[c]) / std[c];
}

}  // namespace

Pipeline::Pipeline(onnx::Model det, onnx::Model cls, onnx::Model rec, std::vector<std::string> chars,
                   Options o)
    : det_(std::move(det)),
      cls_(std::move(cls)),
      rec_(std::move(rec)),
      chars_(std::move(chars)),
      opt_(std::move(o)) {}

Pipeline Pipeline::load(const std::string& model_dir, Options o) {
  const fs::path dir(model_dir);
  const fs::path keys = dir / "ppocr_keys_v1.txt";
  std::ifstream in(keys);
  SLUICE_CHECK_IN(ValueError, "ocr", in)
      << "character list " << keys.string()
      << " is missing (scripts/fetch-models.sh fetches the PP-OCRv4 models)";
  std::vector<std::string> chars{""};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    chars.push_back(line);
  }
  chars.push_back(" ");
  // Loaded before the constructor call: its arguments are evaluated in no set order, and `o` moves.
  onnx::Model det = load_model(dir, "ch_PP-OCRv4_det_infer.onnx", o.device);
  onnx::Model cls = load_model(dir, "ch_ppocr_mobile_v2.0_cls_infer.onnx", o.device);
  onnx::Model rec = load_model(dir, "ch_PP-OCRv4_rec_infer.onnx", o.device);
  return Pipeline(std::move(det), std::move(cls), std::move(rec), std::move(chars), std::move(o));
}

std::vector<float> Pipeline::infer(onnx::Model& m, const Batch& in, Shape* out_shape) {
  auto host = std::make_shared<HostBuffer>();
  host->dtype = dtypes::float32;
  host->size = int64_t(in.data.size());
  host->bytes.resize(in.data.size() * sizeof(float));
  std::memcpy(host->bytes.data(), in.data.data(), host->bytes.size());
  std::vector<onnx::Value> out =
      m.run({{m.inputs().at(0).name, Tensor::from_host(host, in.shape, opt_.device)}});
  Tensor& t = out.at(0).tensor();
  if (out_shape) *out_shape = t.shape();
  return t.to_vector<float>();
}

Batch Pipeline::det_input(const Image& im) const {
  float ratio = 1;
  const int longest = std::max(im.width, im.height);
  if (longest > opt_.det_limit_side) ratio = float(opt_.det_limit_side) / float(longest);
  auto to32 = [](float v) { return std::max(int(std::lround(v / 32)) * 32, 32); };
  const int w = to32(float(im.width) * ratio), h = to32(float(im.height) * ratio);
  static const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  Batch b{{1, 3, h, w}, std::vector<float>(size_t(3) * size_t(h) * size_t(w))};
  put(im, w, h, w, 0, mean, std, b.data);
  return b;
}

std::vector<float> Pipeline::det_map(const Batch& in) { return infer(det_, in, nullptr); }

Batch Pipeline::cls_input(const std::vector<Image>& lines) const {
  static const float mean[3] = {0.5f, 0.5f, 0.5f}, std[3] = {0.5f, 0.5f, 0.5f};
  Batch b{{int64_t(lines.size()), 3, kClsH, kClsW},
          std::vector<float>(lines.size() * 3 * kClsH * kClsW, 0.0f)};
  for (size_t n = 0; n < lines.size(); ++n) {
    const Image& im = lines[n];
    const int w = std::min(kClsW, int(std::ceil(float(kClsH) * float(im.width) / float(im.height))));
    put(im, std::max(w, 1), kClsH, kClsW, n, mean, std, b.data);
  }
  return b;
}

std::vector<float> Pipeline::cls_probs(const Batch& in) { return infer(cls_, in, nullptr); }

Batch Pipeline::rec_input(const std::vector<Image>& lines) const {
  static const float mean[3] = {0.5f, 0.5f, 0.5f}, std[3] = {0.5f, 0.5f, 0.5f};
  float ratio = float(kRecMinW) / float(kRecH);
  for (const Image& im : lines) ratio = std::max(ratio, float(im.width) / float(im.height));
  const int width = int(float(kRecH) * ratio);
  Batch b{{int64_t(lines.size()), 3, kRecH, width},
          std::vector<float>(lines.size() * 3 * kRecH * size_t(width), 0.0f)};
  for (size_t n = 0; n < lines.size(); ++n) {
    const Image& im = lines[n];
    const int w = std::min(width, int(std::ceil(float(kRecH) * float(im.width) / float(im.height))));
    put(im, std::max(w, 1), kRecH, width, n, mean, std, b.data);
  }
  return b;
}

std::vector<float> Pipeline::rec_probs(const Batch& in, int64_t* steps) {
  Shape s;
  std::vector<float> p = infer(rec_, in, &s);
  SLUICE_CHECK_IN(ValueError, "ocr", s.size() == 3 && s[2] == int64_t(chars_.size()))
      << "the recognizer gives shape " << tuple_str(s) << ", the character list has " << chars_.size()
      << " classes";
  if (steps) *steps = s[1];
  return p;
}

std::pair<std::string, float> Pipeline::decode(const float* probs, int64_t steps) const {
  const int64_t classes = int64_t(chars_.size());
  std::string text;
  double conf = 0;
  int n = 0;
  int64_t prev = -1;
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = probs + t * classes;
    const int64_t k = std::max_element(row, row + classes) - row;
    if (k != 0 && k != prev) {  // repeats collapse, blanks drop out
      text += chars_[size_t(k)];
      conf += row[k];
      ++n;
    }
    prev = k;
  }
  return {text, n ? float(conf / n) : 0.0f};
}

std::vector<Line> Pipeline::run(const Image& im, Times* times, Trace* trace) {
  Times tm;
  const auto t0 = Clock::now();
  Batch din = det_input(im);
  std::vector<float> map = det_map(din);
  tm.det_ms = ms_since(t0);
  if (trace) *trace = Trace{din, map, {}, {}, {}, {}};
  auto t1 = Clock::now();
  std::vector<Box> boxes =
      boxes_from_map(map, int(din.shape[3]), int(din.shape[2]), im.width, im.height, opt_.boxes);
  std::vector<Line> lines(boxes.size());
  std::vector<Image> crops;
  for (size_t i = 0; i < boxes.size(); ++i) {
    lines[i].box = boxes[i].quad, lines[i].box_score = boxes[i].score;
    crops.push_back(crop_quad(im, boxes[i].quad));
  }
  tm.boxes_ms = ms_since(t1);
  // Lines in batches of similar width (PaddleOCR sorts by aspect ratio): less padding per batch.
  std::vector<size_t> by_ratio(crops.size());
  std::iota(by_ratio.begin(), by_ratio.end(), 0);
  std::sort(by_ratio.begin(), by_ratio.end(), [&](size_t a, size_t b) {
    return float(crops[a].width) / float(crops[a].height) < float(crops[b].width) / float(crops[b].height);
  });
  const size_t bs = size_t(std::max(1, opt_.rec_batch));
  t1 = Clock::now();
  for (size_t s = 0; s < by_ratio.size(); s += bs) {
    std::vector<Image> batch;
    for (size_t k = s; k < std::min(s + bs, by_ratio.size()); ++k) batch.push_back(crops[by_ratio[k]]);
    Batch in = cls_input(batch);
    std::vector<float> p = cls_probs(in);
    if (trace) trace->cls_in.push_back(std::move(in)), trace->cls_probs.push_back(p);
    for (size_t k = 0; k < batch.size(); ++k)
      if (p[k * 2 + 1] > p[k * 2] && p[k * 2 + 1] >= opt_.cls_threshold) {
        crops[by_ratio[s + k]] = rotate180(crops[by_ratio[s + k]]);
        lines[by_ratio[s + k]].turned = true;
      }
  }
  tm.cls_ms = ms_since(t1);
  t1 = Clock::now();
  for (size_t s = 0; s < by_ratio.size(); s += bs) {
    std::vector<Image> batch;
    for (size_t k = s; k < std::min(s + bs, by_ratio.size()); ++k) batch.push_back(crops[by_ratio[k]]);
    int64_t steps = 0;
    Batch in = rec_input(batch);
    std::vector<float> p = rec_probs(in, &steps);
    if (trace) trace->rec_in.push_back(std::move(in)), trace->rec_probs.push_back(p);
    for (size_t k = 0; k < batch.size(); ++k) {
      auto [text, conf] = decode(p.data() + k * size_t(steps) * chars_.size(), steps);
      lines[by_ratio[s + k]].text = text;
      lines[by_ratio[s + k]].confidence = conf;
    }
  }
  tm.rec_ms = ms_since(t1);
  tm.total_ms = ms_since(t0);
  if (times) *times = tm;
  return lines;
}

}  // namespace sluice::ocr
