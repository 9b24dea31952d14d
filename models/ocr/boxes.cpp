#include "models/ocr/boxes.h"

#include <algorithm>
#include <cmath>

namespace sluice::ocr {
namespace {

double cross(const Point& o, const Point& a, const Point& b) {
  return double(a[0] - o[0]) * (b[1] - o[1]) - double(a[1] - o[1]) * (b[0] - o[0]);
}

std::vector<Point> convex_hull(std::vector<Point> p) {  // Andrew's monotone chain, counter-clockwise
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  if (p.size() < 3) return p;
  std::vector<Point> h(2 * p.size());
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  for (size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  return h;
}

// PaddleOCR's get_mini_boxes order: by x; of the two leftmost the upper is first, the lower last; of the
// two rightmost the upper is second, the lower third.
Quad order(Quad q) {
  std::sort(q.begin(), q.end(), [](const Point& a, const Point& b) { return a[0] < b[0]; });
  Point tl = q[0], bl = q[1], tr = q[2], br = q[3];
  if (tl[1] > bl[1]) std::swap(tl, bl);
  if (tr[1] > br[1]) std::swap(tr, br);
  return {tl, tr, br, bl};
}

float side(const Quad& q, int i) {
  return std::hypot(q[size_t(i)][0] - q[size_t(i + 1) % 4][0], q[size_t(i)][1] - q[size_t(i + 1) % 4][1]);
}

bool inside(const Quad& q, float x, float y) {  // convex, either orientation
  int pos = 0, neg = 0;
  for (size_t i = 0; i < 4; ++i) {
    const double c = cross(q[i], q[(i + 1) % 4], {x, y});
    pos += c > 0, neg += c < 0;
  }
  return pos == 0 || neg == 0;
}

// The mean probability over the map pixels inside q (PaddleOCR's box_score_fast).
float box_score(const std::vector<float>& prob, int w, int h, const Quad& q) {
  float x0 = q[0][0], x1 = x0, y0 = q[0][1], y1 = y0;
  for (const Point& p : q)
    x0 = std::min(x0, p[0]), x1 = std::max(x1, p[0]), y0 = std::min(y0, p[1]), y1 = std::max(y1, p[1]);
  const int xa = std::clamp(int(std::floor(x0)), 0, w - 1), xb = std::clamp(int(std::ceil(x1)), 0, w - 1);
  const int ya = std::clamp(int(std::floor(y0)), 0, h - 1), yb = std::clamp(int(std::ceil(y1)), 0, h - 1);
  double sum = 0;
  int n = 0;
  for (int y = ya; y <= yb; ++y)
    for (int x = xa; x <= xb; ++x)
      if (inside(q, float(x), float(y))) sum += prob[size_t(y) * size_t(w) + size_t(x)], ++n;
  return n ? float(sum / n) : 0.0f;
}

}  // namespace

Quad min_area_rect(std::vector<Point> pts) {
  std::vector<Point> h = convex_hull(std::move(pts));
  if (h.empty()) return {};
  if (h.size() < 3) {
    const Point a = h.front(), b = h.back();
    return order({a, b, b, a});
  }
  double best = INFINITY;
  Quad out{};
  for (size_t i = 0; i < h.size(); ++i) {  // one side of the best rectangle lies on a hull edge
    const Point& a = h[i];
    const Point& b = h[(i + 1) % h.size()];
    double ux = b[0] - a[0], uy = b[1] - a[1];
    const double len = std::hypot(ux, uy);
    if (len == 0) continue;
    ux /= len, uy /= len;
    double lo_u = INFINITY, hi_u = -INFINITY, lo_v = INFINITY, hi_v = -INFINITY;
    for (const Point& p : h) {
      const double u = (p[0] - a[0]) * ux + (p[1] - a[1]) * uy, v = -(p[0] - a[0]) * uy + (p[1] - a[1]) * ux;
      lo_u = std::min(lo_u, u), hi_u = std::max(hi_u, u), lo_v = std::min(lo_v, v), hi_v = std::max(hi_v, v);
    }
    const double area = (hi_u - lo_u) * (hi_v - lo_v);
    if (area < best) {
      best = area;
      auto at = [&](double u, double v) {
        return Point{float(a[0] + u * ux - v * uy), float(a[1] + u * uy + v * ux)};
      };
      out = {at(lo_u, lo_v), at(hi_u, lo_v), at(hi_u, hi_v), at(lo_u, hi_v)};
    }
  }
  return order(out);
}

std::vector<Box> boxes_from_map(const std::vector<float>& prob, int w, int h, int src_w, int src_h,
                                const BoxOptions& o) {
  std::vector<uint8_t> mask(prob.size());
  for (size_t i = 0; i < prob.size(); ++i) mask[i] = prob[i] > o.threshold;
  std::vector<int> label(prob.size(), 0);
  std::vector<Box> out;
  int regions = 0;
  std::vector<int> stack;
  for (int sy = 0; sy < h; ++sy)
    for (int sx = 0; sx < w; ++sx) {
      const size_t s = size_t(sy) * size_t(w) + size_t(sx);
      if (!mask[s] || label[s]) continue;
      if (++regions > o.max_candidates) return out;
      // The region's boundary pixels (8-connected flood fill): what findContours traces.
      std::vector<Point> edge;
      stack.assign(1, int(s));
      label[s] = regions;
      while (!stack.empty()) {
        const int p = stack.back();
        stack.pop_back();
        const int x = p % w, y = p / w;
        bool boundary = false;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int nx = x + dx, ny = y + dy;
            if (nx < 0 || ny < 0 || nx >= w || ny >= h) {
              boundary = true;
              continue;
            }
            const size_t n = size_t(ny) * size_t(w) + size_t(nx);
            if (!mask[n])
              boundary = true;
            else if (!label[n])
              label[n] = regions, stack.push_back(int(n));
          }
        if (boundary) edge.push_back({float(x), float(y)});
      }
      Quad q = min_area_rect(edge);
      if (std::min(side(q, 0), side(q, 1)) < float(o.min_size)) continue;
      const float score = box_score(prob, w, h, q);
      if (score < o.box_threshold) continue;
      // Unclipping a rectangle by d = area * ratio / perimeter gives a rounded rectangle whose minimum
      // rectangle is the rectangle grown by d on every side.
      const float a = side(q, 0), b = side(q, 1);
      const float d = a * b * o.unclip_ratio / (2 * (a + b));
      const float ux = (q[1][0] - q[0][0]) / a, uy = (q[1][1] - q[0][1]) / a;  // along the top edge
      const float vx = (q[3][0] - q[0][0]) / b, vy = (q[3][1] - q[0][1]) / b;  // down the left edge
      Quad g = {Point{q[0][0] - d * ux - d * vx, q[0][1] - d * uy - d * vy},
                Point{q[1][0] + d * ux - d * vx, q[1][1] + d * uy - d * vy},
                Point{q[2][0] + d * ux + d * vx, q[2][1] + d * uy + d * vy},
                Point{q[3][0] - d * ux + d * vx, q[3][1] - d * uy + d * vy}};
      g = order(g);
      if (std::min(side(g, 0), side(g, 1)) < float(o.min_size + 2)) continue;
      Box box{g, score};
      for (Point& p : box.quad) {
        p[0] = std::clamp(std::round(p[0] * float(src_w) / float(w)), 0.0f, float(src_w));
        p[1] = std::clamp(std::round(p[1] * float(src_h) / float(h)), 0.0f, float(src_h));
      }
      if (side(box.quad, 0) <= 3 || side(box.quad, 1) <= 3) continue;
      out.push_back(box);
    }
  // Reading order: by the top-left corner's y, then x for boxes on one line (within 10 pixels).
  std::sort(out.begin(), out.end(), [](const Box& a, const Box& b) {
    return a.quad[0][1] != b.quad[0][1] ? a.quad[0][1] < b.quad[0][1] : a.quad[0][0] < b.quad[0][0];
  });
  for (size_t i = 0; i + 1 < out.size(); ++i)
    for (size_t j = i + 1; j-- > 0 && j + 1 < out.size();) {
      Box &a = out[j], &b = out[j + 1];
      if (std::abs(b.quad[0][1] - a.quad[0][1]) < 10 && b.quad[0][0] < a.quad[0][0])
        std::swap(a, b);
      else
        break;
    }
  return out;
}

}  // namespace sluice::ocr
