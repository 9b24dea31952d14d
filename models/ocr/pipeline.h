#pragma once
// OCR with PaddleOCR's PP-OCRv4 models on a sluice device: an image in, its lines of text out.
//
//   auto ocr = sluice::ocr::Pipeline::load("data/ocr-models/assets", {.device = "CPU"});
//   for (const auto& line : ocr.run(sluice::ocr::read_image("page.png"))) std::cout << line.text << "\n";
//
// The steps are PaddleOCR's: det (DBNet) on the image resized so each side is a multiple of 32 and the
// longest at most 960, normalized with ImageNet's mean and std in BGR order -> probability map -> boxes
// (boxes.h) -> each box cropped upright -> cls (48x192) turns lines it reads as upside down -> rec
// (48 pixels high, a batch padded to its widest line, normalized to [-1, 1]) -> greedy CTC decoding
// against the character list (class 0 the blank, class k line k of ppocr_keys_v1.txt, the last a space).
//
// Each stage's tensors are exposed so tests can compare them with ONNX Runtime's on the same inputs.
// Failures: ValueError naming the missing model file or the bad image; what the models throw.
#include <string>
#include <vector>

#include "frontend/onnx/model.h"
#include "models/ocr/boxes.h"
#include "models/ocr/image.h"

namespace sluice::ocr {

struct Options {
  std::string device = default_device();
  BoxOptions boxes;
  int det_limit_side = 960;
  float cls_threshold = 0.9f;  // a line turns when cls says 180 degrees at least this surely
  int rec_batch = 6;  // lines per cls and rec batch (PaddleOCR's rec_batch_num), padded to the widest
};

struct Line {
  Quad box;
  float box_score = 0;
  std::string text;
  float confidence = 0;  // mean probability of the decoded characters
  bool turned = false;   // cls turned it 180 degrees
};

struct Times {
  double det_ms = 0, boxes_ms = 0, cls_ms = 0, rec_ms = 0, total_ms = 0;
};

// An NCHW float tensor's data: what a stage feeds its model.
struct Batch {
  Shape shape;
  std::vector<float> data;
};

// What run() fed each model and what it got back (cls and rec: one entry per batch), so a test can give
// another runtime the same inputs.
struct Trace {
  Batch det_in;
  std::vector<float> det_map;
  std::vector<Batch> cls_in, rec_in;
  std::vector<std::vector<float>> cls_probs, rec_probs;
};

class Pipeline {
 public:
  static Pipeline load(const std::string& model_dir, Options o = {});

  std::vector<Line> run(const Image& im, Times* times = nullptr, Trace* trace = nullptr);

  // The stages, for tests and benchmarks.
  Batch det_input(const Image& im) const;
  std::vector<float> det_map(const Batch& in);  // the probability map, in.shape[2] x in.shape[3]
  Batch cls_input(const std::vector<Image>& lines) const;
  std::vector<float> cls_probs(const Batch& in);  // N x 2 ("0", "180")
  Batch rec_input(const std::vector<Image>& lines) const;
  std::vector<float> rec_probs(const Batch& in, int64_t* steps = nullptr);  // N x steps x classes
  // Greedy CTC decoding of one line's steps x classes probabilities.
  std::pair<std::string, float> decode(const float* probs, int64_t steps) const;

  const std::vector<std::string>& characters() const { return chars_; }
  onnx::Model& det() { return det_; }
  onnx::Model& cls() { return cls_; }
  onnx::Model& rec() { return rec_; }

 private:
  Pipeline(onnx::Model det, onnx::Model cls, onnx::Model rec, std::vector<std::string> chars, Options o);
  std::vector<float> infer(onnx::Model& m, const Batch& in, Shape* out_shape);

  onnx::Model det_, cls_, rec_;
  std::vector<std::string> chars_;  // by class: "" (blank), the keys, " "
  Options opt_;
};

}  // namespace sluice::ocr
