#pragma once
// The text detector's post-processing (PaddleOCR's DBPostProcess): its probability map thresholded, each
// connected region turned into its minimum-area rotated rectangle, scored by the mean probability inside,
// grown by the unclip ratio, mapped back to the source image, and the boxes sorted in reading order.
#include <vector>

#include "models/ocr/image.h"

namespace sluice::ocr {

struct BoxOptions {
  float threshold = 0.3f;      // probability above which a pixel is text
  float box_threshold = 0.6f;  // mean probability a box needs
  float unclip_ratio = 2.0f;   // growth: area * ratio / perimeter on every side
  int min_size = 3;            // shorter side, in map pixels, below which a box is dropped
  int max_candidates = 1000;
};

struct Box {
  Quad quad;  // in source-image pixels, clockwise from the top-left
  float score = 0;
};

// prob: map_h x map_w probabilities (row-major) for an image of src_w x src_h pixels.
std::vector<Box> boxes_from_map(const std::vector<float>& prob, int map_w, int map_h, int src_w, int src_h,
                                const BoxOptions& o = {});

// The minimum-area rectangle around points (rotating calipers over their convex hull), clockwise from the
// top-left corner as PaddleOCR orders it.
Quad min_area_rect(std::vector<Point> pts);

}  // namespace sluice::ocr
