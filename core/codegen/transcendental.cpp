#include "core/codegen/transcendental.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sluice::codegen {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The bit layout of a float dtype.
struct Fmt {
  DType f, i, u;  // the float, the signed and unsigned integers of its width
  int mant;       // mantissa bits
  int64_t bias, emask;
  bool f64;
};
Fmt fmt(DType f) {
  if (f.scalar == Scalar::Float64) return {f, dtypes::int64, dtypes::uint64, 52, 1023, 0x7ff, true};
  return {f, dtypes::int32, dtypes::uint32, 23, 127, 0xff, false};
}

UOp cf(const UOp& like, double v) { return like.const_like(v); }
UOp ci(const UOp& like, int64_t v) { return like.const_like_int(v); }
UOp shl(const UOp& x, int64_t n) { return x.alu(Op::Shl, ci(x, n)); }
UOp shr(const UOp& x, int64_t n) { return x.alu(Op::Shr, ci(x, n)); }
UOp and_(const UOp& x, int64_t m) { return x & ci(x, m); }
UOp no() { return UOp::const_bool(false); }

// Horner: ((c0 x + c1) x + c2) ...
UOp poly(const UOp& x, std::initializer_list<double> cs) {
  auto it = cs.begin();
  UOp u = cf(x, *it++);
  for (; it != cs.end(); ++it) u = u * x + cf(x, *it);
  return u;
}

// rint(x) as an integer of dtype i, halves away from zero (x finite and in i's range).
UOp rint_int(const UOp& x, DType i) { return (x + x.lt(0.0).where(cf(x, -0.5), cf(x, 0.5))).cast(i); }
// 2^q for q in the normal exponent range.
UOp pow2i(const UOp& q, const Fmt& t) { return shl(q + ci(q, t.bias), t.mant).bitcast(t.f); }
// d 2^q in two steps, so results may be subnormal or overflow (|q| up to twice the exponent range).
UOp ldexp2k(const UOp& d, const UOp& q, const Fmt& t) {
  const UOp h = shr(q, 1);
  return d * pow2i(h, t) * pow2i(q - h, t);
}

// float16/bfloat16 compute in float32 and round once.
template <class F>
UOp widened(const UOp& x, F f) {
  const DType dt = x.dtype();
  if (dt.scalar == Scalar::Float32 || dt.scalar == Scalar::Float64) return f(x);
  return f(x.cast(dtypes::float32)).cast(dt);
}

UOp exp2_impl(const UOp& d) {
  const Fmt t = fmt(d.dtype());
  const double hi = t.f64 ? 1024 : 128, lo = t.f64 ? -1075 : -150;  // 2^hi overflows, 2^lo rounds to 0
  UOp x = d.lt(lo).where(cf(d, lo), d);  // NaN and infinities become finite for the integer steps
  x = x.lt(hi).where(x, cf(d, hi));
  const UOp q = rint_int(x, t.i), s = x - q.cast(t.f);  // s in [-1/2, 1/2]
  UOp u = t.f64 ? poly(s, {0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6,
                           0.1321543872511327615e-5, 0.1525273353517584730e-4, 0.1540353045101147808e-3,
                           0.1333355814670499073e-2, 0.9618129107597600536e-2, 0.5550410866482046596e-1,
                           0.2402265069591012214e+0, 0.6931471805599452862e+0, 1.0})
                : poly(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1,
                           0.2402264476e+0, 0.6931471825e+0, 1.0});
  u = ldexp2k(u, q, t);
  u = d.lt(hi).where(u, cf(d, kInf));
  u = d.lt(lo).where(cf(d, 0.0), u);
  return d.ne(d).where(cf(d, kNan), u);
}

UOp log2_impl(const UOp& d) {
  const Fmt t = fmt(d.dtype());
  const UOp denorm = d.lt(1e-37);  // scaled into the normal range (negatives and zeros are patched below)
  const UOp a = denorm.where(d * 18446744073709551616.0, d);
  // e with a = m 2^e, m in [3/4, 3/2): the exponent of a * 4/3.
  const UOp ei = and_(shr((a * (1.0 / 0.75)).bitcast(t.i), t.mant), t.emask) - ci(a.bitcast(t.i), t.bias);
  const UOp m = (a.bitcast(t.i) + (-ei) * ci(ei, int64_t(1) << t.mant)).bitcast(t.f);
  UOp e = ei.cast(t.f);
  e = denorm.where(e - 64.0, e);
  const UOp x = (m - 1.0) / (m + 1.0), x2 = x * x;
  UOp r = t.f64 ? poly(x2, {0.2211941750456081490e+0, 0.2200768693152277689e+0, 0.2623708057488514656e+0,
                            0.3205977477944495502e+0, 0.4121985945485324709e+0, 0.5770780162997058982e+0,
                            0.96179669392608091449}) *
                          (x * x2) +
                      (e + x * 2.885390081777926774)
                : poly(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120}) * (x * x2) +
                      ((e + x * 2.8853900432586669922) + x * 3.2734474483568488616e-08);
  r = d.ne(kInf).where(r, cf(d, kInf));
  r = d.lt(0.0).where(cf(d, kNan), r);
  r = d.ne(0.0).where(r, cf(d, -kInf));  // -0 too
  return d.ne(d).where(cf(d, kNan), r);
}

// 1/(2 pi) in 32-bit words, most significant first, after one zero word (for windows that start before
// its first bit).
constexpr uint32_t kInv2Pi[] = {
    0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4, 0x7d4d3770, 0x36d8a566, 0x4f10e410, 0x7f9458ea,
    0xf7aef158, 0x6dc91b8e, 0x909374b8, 0x01924bba, 0x82746487, 0x3f877ac7, 0x2c4a69cf, 0xba208d7d,
    0x4baed121, 0x3a671c09, 0xad17df90, 0x4e64758e, 0x60d4ce7d, 0x272117e2, 0xef7e4a0e, 0xc7fe25ff,
    0xf7816603, 0xfbcbc462, 0xd6829b47, 0xdb4d9fb3, 0xc9f2c26d, 0xd3d18fd9, 0xa797fa8b, 0x5d49eeb1,
    0xfaf97c5e, 0xcf41ce7d, 0xe294a4ba, 0x9afed7ec, 0x47e35742};

// Payne-Hanek: ax (positive, normal, at least pi/4) mod pi/2 as (r in [-pi/4, pi/4) in float64, quadrant).
// ax = ia 2^s with integer ia; ax/(2 pi) mod 1 needs only the bits of 1/(2 pi) from 2^-(s+1) on: a 128-bit
// window T of them gives frac(ia T 2^-128), of which we keep 64 bits P (error a few 2^-64 of a turn).
std::pair<UOp, UOp> payne_hanek(const UOp& ax, const Fmt& t) {
  const DType u64 = dtypes::uint64;
  const UOp bits = ax.bitcast(t.u).cast(u64);
  const UOp ex = and_(shr(bits, t.mant), t.emask).cast(dtypes::int32) - int64_t(t.bias);
  const UOp ia = and_(bits, (int64_t(1) << t.mant) - 1) | ci(bits, int64_t(1) << t.mant);
  // The window's first bit, counted from 0 at the table's first (zero) word: 32 + (s + 1) - 1.
  const UOp k = ex + int64_t(32 - t.mant);
  const UOp j = shr(k, 5), b = and_(k, 31).cast(u64);
  const int jmax = t.f64 ? 31 : 4;  // largest exponent: 1023 - 20 >> 5, 127 + 9 >> 5
  auto word = [&](int i) {          // table[j + i]
    UOp w = ci(bits, kInv2Pi[i]);
    for (int v = 1; v <= jmax; ++v) w = j.ne(int64_t(v)).where(w, ci(bits, kInv2Pi[v + i]));
    return w;
  };
  const UOp w0 = word(0), w1 = word(1), w2 = word(2), w3 = word(3), w4 = word(4);
  auto window = [&](const UOp& h, const UOp& l) {  // 32 bits from bit b of h:l
    return and_((shl(h, 32) | l).alu(Op::Shr, ci(b, 32) - b), 0xffffffff);
  };
  const UOp t3 = window(w0, w1), t2 = window(w1, w2), t1 = window(w2, w3), t0 = window(w3, w4);
  const UOp a0 = and_(ia, 0xffffffff), a1 = shr(ia, 32);
  // floor(ia T / 2^64) mod 2^64 from 32-bit limbs (uint64 arithmetic wraps).
  UOp p = shl(a0 * t3 + a1 * t2, 32) + a0 * t2 + a1 * t1 + shr(a0 * t1, 32) + shr(a1 * t0, 32);
  p = p + ci(p, int64_t(1) << 61);  // round the quadrant to nearest
  const UOp q = shr(p, 62).cast(dtypes::int32);
  const UOp rem = and_(p, (int64_t(1) << 62) - 1).cast(dtypes::int64) - (int64_t(1) << 61);
  return {rem.cast(dtypes::float64) * 3.4061215800865545e-19, q};  // rem 2^-62 pi/2
}

UOp sin_impl(const UOp& d) {
  const Fmt t = fmt(d.dtype());
  const UOp finite = d.ne(d).where(no(), d.ne(kInf).where(d.ne(-kInf), no()));
  const UOp x = finite.where(d, cf(d, 0.0));
  const UOp neg = x.lt(0.0), ax = neg.where(-x, x);
  auto [r, q] = payne_hanek(ax, t);
  if (!t.f64) r = r.cast(t.f);
  if (t.f64) {  // Cody-Waite below 2^20: n pi/2 in four parts, the first three exact products for n < 2^20
    const UOp mid = ax.lt(1048576.0), axc = mid.where(ax, cf(ax, 0.0));
    const UOp n = rint_int(axc * 0.6366197723675814, dtypes::int64), nf = n.cast(t.f);
    const UOp rc =
        (((axc - nf * 1.5707963267341256) - nf * 6.077100506303966e-11) - nf * 2.0222662487111665e-21) -
        nf * 8.4784276603689e-32;
    r = mid.where(rc, r);
    q = mid.where(n.cast(dtypes::int32), q);
  }
  const UOp small = ax.lt(0.7853981633974483);
  r = small.where(ax, r);
  q = small.where(ci(q, 0), q);
  const UOp z = r * r;
  const UOp s = t.f64 ? r + r * z *
                                poly(z, {1.58962301576546568060E-10, -2.50507477628578072866E-8,
                                         2.75573136213857245213E-6, -1.98412698295895385996E-4,
                                         8.33333333332211858878E-3, -1.66666666666666307295E-1})
                      : r + r * z * poly(z, {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1});
  const UOp c =
      t.f64 ? (cf(z, 1.0) - z * 0.5) + z * z *
                                           poly(z, {-1.13585365213876817300E-11, 2.08757008419747316778E-9,
                                                    -2.75573141792967388112E-7, 2.48015872888517045348E-5,
                                                    -1.38888888888730564116E-3, 4.16666666666665929218E-2})
            : (cf(z, 1.0) - z * 0.5) +
                  z * z * poly(z, {2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002});
  UOp res = and_(q, 1).ne(int64_t(0)).where(c, s);
  res = and_(q, 2).ne(int64_t(0)).where(-res, res);
  res = neg.where(-res, res);
  res = d.ne(0.0).where(res, d);  // +-0 keeps its sign
  return finite.where(res, cf(d, kNan));
}

}  // namespace

UOp exp2_approx(const UOp& x) { return widened(x, exp2_impl); }
UOp log2_approx(const UOp& x) { return widened(x, log2_impl); }
UOp sin_approx(const UOp& x) { return widened(x, sin_impl); }

UOp rewrite_transcendentals(const UOp& sink) {
  std::unordered_map<const UOpNode*, UOp> done;
  for (const UOp& u : sink.toposort()) {
    std::vector<UOp> src;
    bool changed = false;
    for (const UOp& s : u.src()) {
      src.push_back(done.at(s.get()));
      changed |= src.back() != s;
    }
    UOp n = changed ? u.with_src(src) : u;
    const DType dt = n.dtype();
    if (dt.is_float() && !dt.is_vector() && !dt.is_ptr()) {
      if (u.op() == Op::Exp2) n = exp2_approx(n.src(0));
      if (u.op() == Op::Log2) n = log2_approx(n.src(0));
      if (u.op() == Op::Sin) n = sin_approx(n.src(0));
    }
    done[u.get()] = n;
  }
  return done.at(sink.get());
}

}  // namespace sluice::codegen
