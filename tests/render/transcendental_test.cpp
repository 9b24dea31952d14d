// The polynomial transcendentals (core/codegen/transcendental.h) against the exact value: the rewritten
// uops are evaluated one op at a time with core/ir/alu's exec_alu/exec_cast/exec_bitcast (the semantics
// every renderer reproduces, each op rounded to its dtype), the exact value with long double libm.
// Dense sweeps plus edge cases; each test asserts the documented max ulp error and prints the measured one.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

#include "core/codegen/transcendental.h"
#include "core/ir/alu.h"

namespace sluice::codegen {
namespace {

// A scalar function of x compiled to a topologically ordered list of uops.
class Program {
 public:
  Program(DType dt, const std::function<UOp(const UOp&)>& f)
      : dt_(dt), x_(UOp::make(Op::DefineVar, dt, {}, VarArg{"x", 0, 0})), order_(f(x_).toposort()) {
    std::unordered_map<const UOpNode*, size_t> index;
    for (size_t i = 0; i < order_.size(); ++i) {
      index[order_[i].get()] = i;
      Node n{order_[i].op(), order_[i].dtype(), order_[i].dtype(), {}, order_[i].num_src()};
      for (size_t k = 0; k < n.nsrc; ++k) n.src[k] = index.at(order_[i].src(k).get());
      if (n.nsrc) n.in = order_[i].src(n.op == Op::Where ? 1 : 0).dtype();
      if (n.op == Op::Const)
        n.value = n.out.is_float() ? Scalar64::of_float(order_[i].const_value())
                                   : Scalar64::of_int(order_[i].const_int_value());
      nodes_.push_back(n);
    }
  }
  size_t size() const { return order_.size(); }

  // The result, or NaN with *undefined set if an op had no defined result (C UB in a renderer).
  double operator()(double x, bool* undefined) const {
    std::vector<Scalar64> v(nodes_.size());
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const Node& u = nodes_[n];
      std::optional<Scalar64> r;
      Scalar64 s[3];
      for (size_t k = 0; k < u.nsrc; ++k) s[k] = v[u.src[k]];
      switch (u.op) {
        case Op::DefineVar: r = Scalar64::of_float(x); break;
        case Op::Const: r = u.value; break;
        case Op::Cast: r = exec_cast(s[0], u.in, u.out); break;
        case Op::Bitcast: r = exec_bitcast(s[0], u.in, u.out); break;
        default: r = exec_alu(u.op, u.in, std::span<const Scalar64>(s, u.nsrc));
      }
      if (!r) {
        *undefined = true;
        return std::nan("");
      }
      v[n] = *r;
    }
    return v.back().f;
  }

 private:
  struct Node {
    Op op;
    DType in, out;  // the operands' dtype (WHERE: the branches'), the result's
    std::array<size_t, 3> src;
    size_t nsrc;
    Scalar64 value{};  // CONST
  };
  DType dt_;
  UOp x_;
  std::vector<UOp> order_;
  std::vector<Node> nodes_;
};

// The distance from got to the exact value in units in the last place of the exact value (rounded to dt).
double ulps(DType dt, double got, long double exact) {
  const bool f64 = dt.scalar == Scalar::Float64;
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0 : 1e30;
  if (std::isinf(exact) || std::isinf(got)) {
    // A result beyond the largest finite value rounds to inf: compare with the rounded exact value.
    const double rounded = f64 ? double(exact) : double(float(exact));
    return rounded == got ? 0 : 1e30;
  }
  const int mant = f64 ? 52 : 23, emin = f64 ? -1022 : -126;
  int e = exact == 0 ? emin : std::max(int(std::floor(std::log2(std::fabs(double(exact))))), emin);
  if (exact != 0 && std::fabs(double(exact)) < std::ldexp(1.0, e)) --e;  // log2 rounding at powers of two
  return double(std::fabs((long double)got - exact) / std::ldexp(1.0L, std::max(e, emin) - mant));
}

struct Stats {
  double max_ulp = 0, worst_x = 0, max_abs = 0;
  long n = 0;
};

Stats measure(const Program& p, DType dt, const std::vector<double>& xs, long double (*exact)(long double)) {
  Stats s;
  for (double x : xs) {
    x = round_float(dt, x);  // the inputs are values of dt
    bool undefined = false;
    const double got = p(x, &undefined);
    EXPECT_FALSE(undefined) << "an op of the rewrite is undefined at x = " << x;
    const double u = ulps(dt, got, exact(x));
    if (u > s.max_ulp) s.max_ulp = u, s.worst_x = x;
    if (std::isfinite(got)) s.max_abs = std::max(s.max_abs, double(std::fabs(got - exact(x))));
    ++s.n;
  }
  return s;
}

// Floats of dt from a dense uniform sweep of [lo, hi] plus a sweep of bit patterns (all magnitudes).
std::vector<double> sweep(DType dt, double lo, double hi, int n) {
  std::vector<double> xs;
  for (int i = 0; i <= n; ++i) xs.push_back(round_float(dt, lo + (hi - lo) * i / n));
  return xs;
}
std::vector<double> bit_patterns(DType dt, bool negative_too, int n) {
  std::vector<double> xs;
  const bool f64 = dt.scalar == Scalar::Float64;
  const uint64_t top = f64 ? 0x7ff0000000000000ULL : 0x7f800000ULL;  // +inf's pattern
  for (int i = 0; i < n; ++i) {
    const uint64_t b =
        uint64_t((long double)(top - 1) * i / (n - 1)) + uint64_t(i % 7);  // scrambled low bits
    double v;
    if (f64) {
      std::memcpy(&v, &b, 8);
    } else {
      const uint32_t b32 = uint32_t(std::min<uint64_t>(b, top - 1));
      float f;
      std::memcpy(&f, &b32, 4);
      v = f;
    }
    if (!std::isfinite(v)) continue;
    xs.push_back(v);
    if (negative_too) xs.push_back(-v);
  }
  return xs;
}
std::vector<double> edges(DType dt) {
  const bool f64 = dt.scalar == Scalar::Float64;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const double dmin =
      f64 ? std::numeric_limits<double>::denorm_min() : std::numeric_limits<float>::denorm_min();
  const double nmin = f64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  const double big = f64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  return {0.0, -0.0, dmin, -dmin, nmin, -nmin, nmin / 3, 1.0, -1.0, 0.5, 2.0, big, -big, inf, -inf, nan};
}

long double exact_exp2(long double x) { return exp2l(x); }
long double exact_log2(long double x) { return log2l(x); }
long double exact_sin(long double x) { return sinl(x); }

void report(const char* what, const Program& p, const Stats& s) {
  std::printf("%-28s %4zu uops  %8ld inputs  max %.3f ulp (at %.17g)\n", what, p.size(), s.n, s.max_ulp,
              s.worst_x);
}

TEST(Transcendental, Exp2Float32) {
  const DType dt = dtypes::float32;
  Program p(dt, exp2_approx);
  std::vector<double> xs = sweep(dt, -152, 130, 60000);
  for (double x : bit_patterns(dt, true, 20000)) xs.push_back(x);
  for (double x : edges(dt)) xs.push_back(x);
  for (double x : {127.99999, 128.0, -149.0, -149.5, -150.0, -150.00002, -126.0, -126.5}) xs.push_back(x);
  Stats s = measure(p, dt, xs, exact_exp2);
  report("exp2 float32", p, s);
  EXPECT_LE(s.max_ulp, 1.5) << "at x = " << s.worst_x;
}

TEST(Transcendental, Exp2Float64) {
  const DType dt = dtypes::float64;
  Program p(dt, exp2_approx);
  std::vector<double> xs = sweep(dt, -1080, 1030, 60000);
  for (double x : bit_patterns(dt, true, 20000)) xs.push_back(x);
  for (double x : edges(dt)) xs.push_back(x);
  for (double x : {1023.9999999, 1024.0, -1074.0, -1074.5, -1075.0, -1022.0, 1e-300}) xs.push_back(x);
  Stats s = measure(p, dt, xs, exact_exp2);
  report("exp2 float64", p, s);
  EXPECT_LE(s.max_ulp, 1.5) << "at x = " << s.worst_x;
}

TEST(Transcendental, Log2Float32) {
  const DType dt = dtypes::float32;
  Program p(dt, log2_approx);
  std::vector<double> xs = bit_patterns(dt, true, 60000);
  for (double x : sweep(dt, 0.5, 2, 30000)) xs.push_back(x);
  for (double x : edges(dt)) xs.push_back(x);
  Stats s = measure(p, dt, xs, exact_log2);
  report("log2 float32", p, s);
  EXPECT_LE(s.max_ulp, 3.5) << "at x = " << s.worst_x;
}

TEST(Transcendental, Log2Float64) {
  const DType dt = dtypes::float64;
  Program p(dt, log2_approx);
  std::vector<double> xs = bit_patterns(dt, true, 60000);
  for (double x : sweep(dt, 0.5, 2, 30000)) xs.push_back(x);
  for (double x : edges(dt)) xs.push_back(x);
  Stats s = measure(p, dt, xs, exact_log2);
  report("log2 float64", p, s);
  EXPECT_LE(s.max_ulp, 3.5) << "at x = " << s.worst_x;
}

TEST(Transcendental, SinFloat32) {
  const DType dt = dtypes::float32;
  Program p(dt, sin_approx);
  std::vector<double> xs = sweep(dt, -20, 20, 60000);
  for (double x : bit_patterns(dt, true, 40000)) xs.push_back(x);
  for (double x : edges(dt)) xs.push_back(x);
  // Multiples of pi/2 (the hardest reductions) and large arguments.
  for (int k = 1; k < 2000; ++k) xs.push_back(round_float(dt, k * 1.5707963267948966));
  for (double x : {1e4, 39800.0, 1e6, 16777216.0, 1e10, 1e20, 1e30, 3.0e38}) xs.push_back(x);
  Stats s = measure(p, dt, xs, exact_sin);
  report("sin float32", p, s);
  EXPECT_LE(s.max_ulp, 2.0) << "at x = " << s.worst_x;
}

TEST(Transcendental, SinFloat64) {
  const DType dt = dtypes::float64;
  Program p(dt, sin_approx);
  std::vector<double> small = sweep(dt, -20, 20, 60000), large;
  for (int k = 1; k < 2000; ++k) small.push_back(k * 1.5707963267948966);
  for (double x : sweep(dt, 1e3, 1048575, 50000)) small.push_back(x);
  for (double x : edges(dt))
    if (!(std::fabs(x) >= 1048576)) small.push_back(x);
  for (double x : bit_patterns(dt, true, 40000)) (std::fabs(x) < 1048576 ? small : large).push_back(x);
  for (double x : {1048576.0, 1e7, 1e10, 1e15, 1e22, 1e100, 1e300, std::numeric_limits<double>::max()})
    large.push_back(x);
  Stats s = measure(p, dt, small, exact_sin);
  report("sin float64 |x| < 2^20", p, s);
  EXPECT_LE(s.max_ulp, 2.5) << "at x = " << s.worst_x;
  Stats l = measure(p, dt, large, exact_sin);
  std::printf("%-28s %8ld inputs  max abs error %.3g (2^%.1f), max %.3f ulp (at %.17g)\n",
              "sin float64 |x| >= 2^20", l.n, l.max_abs, std::log2(l.max_abs), l.max_ulp, l.worst_x);
  EXPECT_LE(l.max_abs, std::ldexp(1.0, -51.5));
}

// half through float: every finite half value, against the exact value rounded to half (<= 1 half ulp).
TEST(Transcendental, Float16AllValues) {
  struct Case {
    const char* name;
    UOp (*f)(const UOp&);
    long double (*exact)(long double);
  };
  for (const Case& c : {Case{"exp2", exp2_approx, exact_exp2}, Case{"log2", log2_approx, exact_log2},
                        Case{"sin", sin_approx, exact_sin}}) {
    const char* name = c.name;
    auto exact = c.exact;
    auto f = c.f;
    Program p(dtypes::float16, f);
    double worst = 0, worst_x = 0;
    for (uint32_t b = 0; b < 0x10000; ++b) {
      const double x = half_bits_to_float(uint16_t(b));
      bool undefined = false;
      const double got = p(x, &undefined), want = round_float(dtypes::float16, double(exact(x)));
      ASSERT_FALSE(undefined) << name << " at " << x;
      if (std::isnan(want) || std::isnan(got)) {
        EXPECT_EQ(std::isnan(want), std::isnan(got)) << name << "(" << x << ") = " << got;
        continue;
      }
      const int16_t gi = int16_t(float_to_half_bits(float(got))),
                    wi = int16_t(float_to_half_bits(float(want)));
      auto ord = [](int16_t v) { return v < 0 ? int(-32768) - v : int(v); };  // monotonic order of halves
      const double d = std::abs(ord(gi) - ord(wi));
      if (d > worst) worst = d, worst_x = x;
    }
    std::printf("%-28s max %.0f half ulp (at %g)\n", (std::string(name) + " float16 (all)").c_str(), worst,
                worst_x);
    EXPECT_LE(worst, 1) << name << " at " << worst_x;
  }
}

// The pass replaces exactly the scalar float EXP2/LOG2/SIN nodes and leaves everything else alone.
TEST(Transcendental, RewriteReplacesOnlyTranscendentals) {
  const UOp x = UOp::make(Op::DefineVar, dtypes::float32, {}, VarArg{"x", 0, 0});
  const UOp y = (x.alu(Op::Exp2) + x.alu(Op::Sqrt)).alu(Op::Log2).alu(Op::Sin);
  const UOp out = rewrite_transcendentals(UOp::sink({y}));
  int trans = 0, sqrt = 0;
  for (const UOp& u : out.toposort()) {
    trans += u.op() == Op::Exp2 || u.op() == Op::Log2 || u.op() == Op::Sin;
    sqrt += u.op() == Op::Sqrt;
  }
  EXPECT_EQ(trans, 0);
  EXPECT_EQ(sqrt, 1);
  const UOp i = UOp::sink({x.cast(dtypes::int32) + 1});
  EXPECT_EQ(rewrite_transcendentals(i), i);  // nothing to rewrite: the same node
}

}  // namespace
}  // namespace sluice::codegen
