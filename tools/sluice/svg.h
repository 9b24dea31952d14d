#pragma once
// The pieces of the latency report's charts (html.cpp): scales, axis ticks whose labels never collide,
// a text width estimate and XML escaping. Coordinates are SVG user units; text sizes are in the same
// units. The width estimate is for DejaVu Sans (the report's font), rounded up, so text laid out with it
// keeps its distance in narrower fonts too.
#include <functional>
#include <string>
#include <vector>

namespace sluice::cli::svg {

std::string esc(const std::string& s);  // XML text and attribute escaping
std::string num(double v);              // a coordinate: "12.3"
double text_width(const std::string& s, double font);

// Maps [lo, hi] onto pixels [p0, p1]; on a log scale lo must be > 0, and values below lo map to p0.
struct Scale {
  double lo, hi, p0, p1;
  bool log;
  double operator()(double v) const;
};

// The 1-2-5 sequence value at or below v (>0), at or above v.
double floor125(double v);
double ceil125(double v);

struct Tick {
  double value;
  std::string label;  // empty: a minor mark without a label
  bool grid;          // draws a grid line across the plot
};
// Ticks along `scale`: on a log scale a mark at every d x 10^k (and d.5 x 10^k when it spans less than a
// decade), on a linear one, or a log one spanning less than 3x, at a 1-2-5 step giving at most
// `max_ticks`. Labels are chosen by rank (powers of ten first, then 5, then 2, then the rest)
// and kept only where their extent along the axis (`extent(label)`, plus `gap`) overlaps no label kept
// before and stays inside [p0 - overhang, p1 + overhang].
std::vector<Tick> ticks(const Scale& scale, const std::function<std::string(double)>& label,
                        const std::function<double(const std::string&)>& extent, double gap, double overhang,
                        int max_ticks = 8);

}  // namespace sluice::cli::svg
