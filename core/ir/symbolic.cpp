#include "core/ir/symbolic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"
#include "core/ir/alu.h"

namespace sluice {
namespace {

// ---------------------------------------------------------------- helpers

Scalar64 value_of(const UOp& c) {
  DType d = c.dtype();
  return d.is_float() ? Scalar64::of_float(c.const_value()) : Scalar64::of_int(c.const_int_value());
}
UOp const_of(DType d, Scalar64 v) { return d.is_float() ? UOp::const_(d, v.f) : UOp::const_int(d, v.i); }

bool is_int(const UOp& u) { return u.dtype().is_int() && u.dtype().count == 1; }
int64_t ci(const UOp& c) { return c.const_int_value(); }
int64_t lo(const UOp& u) { return int64_t(u.vmin()); }
int64_t hi(const UOp& u) { return int64_t(u.vmax()); }
// Whether a + b and a * b stay inside the dtype: rewrites that move constants must not hide wrap-around.
bool fits(const UOp& like, double v) {
  return v >= like.dtype().min() && v <= like.dtype().max() && std::abs(v) < 9e15;
}

OpSet alu_ops(bool with_casts) {
  OpSet s;
  for (int o = 0; o < kNumOps; o++)
    if (is_alu(Op(o))) s.add(Op(o));
  if (with_casts) s.add(Op::Cast), s.add(Op::Bitcast);
  return s;
}
UPat any_alu(bool with_casts = false) { return UPat(alu_ops(with_casts)); }

// ---------------------------------------------------------------- sums and factors (for div/mod folding)

void split_add(const UOp& u, std::vector<UOp>& out) {
  if (u.op() == Op::Add) {
    split_add(u.src(0), out);
    split_add(u.src(1), out);
  } else {
    out.push_back(u);
  }
}
int64_t const_factor(const UOp& u) {
  if (u.op() == Op::Const) return ci(u);
  if (u.op() == Op::Mul && u.src(1).op() == Op::Const) return ci(u.src(1));
  if (u.op() == Op::Add) return std::gcd(const_factor(u.src(0)), const_factor(u.src(1)));
  return 1;
}
// u / f for an f that divides const_factor(u).
UOp divides(const UOp& u, int64_t f) {
  if (f == 1) return u;
  if (u.op() == Op::Const) return u.const_like_int(ci(u) / f);
  if (u.op() == Op::Mul && u.src(1).op() == Op::Const) {
    int64_t c = ci(u.src(1)) / f;
    return c == 1 ? u.src(0) : u.src(0) * u.src(0).const_like_int(c);
  }
  SLUICE_ASSERT(u.op() == Op::Add);
  return divides(u.src(0), f) + divides(u.src(1), f);
}
UOp sum(const UOp& like, int64_t c, const std::vector<std::pair<int64_t, UOp>>& terms) {
  UOp out;
  for (auto& [k, v] : terms) {
    if (k == 0) continue;
    UOp t = k == 1 ? v : v * v.const_like_int(k);
    out = out ? out + t : t;
  }
  if (!out) return like.const_like_int(c);
  return c == 0 ? out : out + like.const_like_int(c);
}

// x // y or x % y from ranges and the structure of the sum x; null when nothing simplifies.
UOp div_mod_fold(const UOp& x, const UOp& y, Op which, bool split_rem = false) {
  if (!is_int(x)) return {};
  // All of x lands in one quotient: x//y = q and x%y = x - q*y (trunc division is monotone per argument).
  if (y.vmin() > 0 || y.vmax() < 0) {
    int64_t q = int64_t(std::trunc(x.vmin() / y.vmin()));
    if (q == int64_t(std::trunc(x.vmin() / y.vmax())) && q == int64_t(std::trunc(x.vmax() / y.vmin())) &&
        q == int64_t(std::trunc(x.vmax() / y.vmax())))
      return which == Op::Mod ? (q == 0 ? x : x - y * q) : x.const_like_int(q);
  }
  if (y.op() != Op::Const || ci(y) <= 0 || x.vmin() < 0) return {};
  // From here x >= 0 and c > 0, so C division equals floor division and the algebra below is exact.
  const int64_t c = ci(y);
  std::vector<UOp> terms;
  split_add(x, terms);
  std::vector<UOp> svars;
  std::vector<int64_t> factors, quotients, remainders;
  int64_t gcd = c, div = 1, cnst = 0, offset = 0;
  bool changed = false;
  for (UOp u : terms) {
    if (u.op() == Op::Mod && which == Op::Mod && u.src(1).op() == Op::Const && ci(u.src(1)) % c == 0 &&
        u.src(0).vmin() >= 0) {
      u = u.src(0);  // (a % (k*c)) % c == a % c
      changed = true;
    }
    int64_t f = const_factor(u);
    int64_t q = floordiv(f, c), r = floormod(f, c);
    if (r == 0 || ((which == Op::Mod || split_rem || u.op() == Op::Const) && r != f)) changed = true;
    if (u.op() == Op::Const) {
      cnst += f;
      offset += r;
      continue;
    }
    UOp v = divides(u, f);
    if (v.vmin() < 0) return {};  // the congruences below need non-negative terms
    offset += r * lo(v);
    if (f > 1 && c % f == 0 && (div == 1 || div > f)) div = f;
    gcd = std::gcd(r, gcd);
    factors.push_back(f), svars.push_back(v), quotients.push_back(q), remainders.push_back(r);
  }
  // offset: x % c at the low corner of every term.
  offset = floormod(offset, c);

  // One term taking only two values: x%c and x//c are both linear in it.
  if (svars.size() == 1 && hi(svars[0]) - lo(svars[0]) == 1) {
    const UOp& v = svars[0];
    int64_t r = floormod(offset + remainders[0], c) - offset;
    int64_t off = offset - r * lo(v);
    if (which == Op::Mod) return sum(x, off, {{r, v}});
    return sum(x, floordiv(cnst - off, c), {{floordiv(factors[0] - r, c), v}});
  }
  // Within a mod, multiples of c may be subtracted freely: if x is congruent to an expression whose range
  // lies inside [0, c), that expression is x % c, and x // c = (x - x % c) / c follows.
  {
    int64_t lbound = offset, ubound = offset, off = offset;
    std::vector<int64_t> rs = remainders;
    bool inside = true;
    for (size_t i = 0; i < svars.size() && inside; i++) {
      int64_t span = hi(svars[i]) - lo(svars[i]);
      if (rs[i] > c / 2) {
        rs[i] -= c;
        lbound += rs[i] * span;
        inside = lbound >= 0;
      } else {
        ubound += rs[i] * span;
        inside = ubound < c;
      }
      off -= rs[i] * lo(svars[i]);
    }
    if (inside) {
      std::vector<std::pair<int64_t, UOp>> t;
      for (size_t i = 0; i < svars.size(); i++)
        t.push_back({which == Op::Mod ? rs[i] : floordiv(factors[i] - rs[i], c), svars[i]});
      return which == Op::Mod ? sum(x, off, t) : sum(x, floordiv(cnst - off, c), t);
    }
  }
  if (gcd != 1) changed = true;
  if (!changed) {
    if (which == Op::IDiv && div > 1 && div < c) {  // x//c == (x//d)//(c/d): fold by a divisor first
      if (UOp nx = div_mod_fold(x, x.const_like_int(div), Op::IDiv); nx)
        return nx / x.const_like_int(c / div);
    }
    return {};
  }
  // Split off the parts divisible by c and cancel the common factor gcd of c and the remainders.
  std::vector<std::pair<int64_t, UOp>> quo_t, rem_t;
  for (size_t i = 0; i < svars.size(); i++) {
    if (which == Op::IDiv && !split_rem && remainders[i] != 0) {
      rem_t.push_back({factors[i] / gcd, svars[i]});
    } else {
      rem_t.push_back({remainders[i] / gcd, svars[i]});
      quo_t.push_back({quotients[i], svars[i]});
    }
  }
  UOp quo = sum(x, floordiv(cnst, c), quo_t), rem = sum(x, floormod(cnst, c) / gcd, rem_t);
  if (rem.vmin() < 0) return {};
  UOp cg = x.const_like_int(c / gcd);
  if (which == Op::Mod) {
    UOp m = rem % cg;
    UOp out = gcd == 1 ? m : m * x.const_like_int(gcd);
    return floormod(cnst, gcd) ? out + x.const_like_int(floormod(cnst, gcd)) : out;
  }
  return rem / cg + quo;
}

// An integer sum with like terms or several constants, rebuilt with each base once and one constant last:
// x*a + y + x*b + 3 + 4 -> x*(a+b) + y + 7. Null when already in that form. Long sums (more than kMaxTerms
// terms) are left alone: they are not index expressions, and flattening them at every node is quadratic.
UOp collect_terms(const UOp& root) {
  constexpr size_t kMaxTerms = 16;
  if (!is_int(root)) return {};
  std::vector<UOp> terms;
  split_add(root, terms);
  if (terms.size() > kMaxTerms) return {};
  std::vector<std::pair<int64_t, UOp>> coef;  // (factor, base) in order of first appearance
  int64_t c = 0;
  int consts = 0;
  bool merged = false;
  for (const UOp& t : terms) {
    if (t.op() == Op::Const) {
      c += ci(t), consts++;
      continue;
    }
    bool scaled = t.op() == Op::Mul && t.src(1).op() == Op::Const;
    const UOp& base = scaled ? t.src(0) : t;
    int64_t k = scaled ? ci(t.src(1)) : 1;
    auto it = std::find_if(coef.begin(), coef.end(), [&](auto& p) { return p.second == base; });
    if (it == coef.end()) {
      coef.push_back({k, base});
    } else {
      it->first += k;
      merged = true;
    }
  }
  bool const_last = terms.back().op() == Op::Const || consts == 0;
  if (!merged && consts <= 1 && const_last) return {};
  return sum(root, wrap_int(root.dtype(), c), coef);
}

UOp cmp_const_fold(const UOp& root) {  // x+c0 < c1 -> x < c1-c0 and c0*x < c1 -> x < ceil(c1/c0)
  const UOp &lhs = root.src(0), &rhs = root.src(1);
  if (!is_int(lhs) || rhs.op() != Op::Const || lhs.src().size() != 2 || lhs.src(1).op() != Op::Const)
    return {};
  int64_t c0 = ci(lhs.src(1)), c1 = ci(rhs);
  const UOp& x = lhs.src(0);
  if (lhs.op() == Op::Add && fits(x, x.vmin() + double(c0)) && fits(x, x.vmax() + double(c0)) &&
      fits(x, double(c1) - double(c0)))
    return x.lt(x.const_like_int(c1 - c0));
  if (lhs.op() == Op::Mul && c0 > 0 && fits(x, x.vmin() * double(c0)) && fits(x, x.vmax() * double(c0)))
    return x.lt(x.const_like_int(floordiv(c1 + c0 - 1, c0)));
  if (lhs.op() == Op::IDiv && c0 > 0 && x.vmin() >= 0 && fits(x, double(c1) * double(c0)))
    return x.lt(x.const_like_int(c1 * c0));  // x//c0 < c1 <=> x < c1*c0 for x >= 0
  return {};
}

// Whether every value of dtype `a` survives a round trip through dtype `b`.
bool widens(DType a, DType b) {
  if (a.is_int() && b.is_int()) return b.min_int() <= a.min_int() && b.max_uint() >= a.max_uint();
  if (a.is_float() && b.is_float()) return b.itemsize() > a.itemsize() && a.scalar != Scalar::BFloat16;
  return false;
}

}  // namespace

// ---------------------------------------------------------------- constant folding

UOp fold_alu(const UOp& u) {
  Scalar64 args[3];
  auto s = u.src();
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i].op() != Op::Const) return {};
    args[i] = value_of(s[i]);
  }
  std::optional<Scalar64> r;
  if (u.op() == Op::Cast)
    r = exec_cast(args[0], s[0].dtype(), u.dtype());
  else if (u.op() == Op::Bitcast)
    r = exec_bitcast(args[0], s[0].dtype(), u.dtype());
  else
    r = exec_alu(u.op(), u.op() == Op::Where ? s[1].dtype() : s[0].dtype(), {args, s.size()});
  return r ? const_of(u.dtype(), *r) : UOp();
}

const PatternMatcher fold_constants{{
    {any_alu(true).named("u"),
     [](Match& m) { return m["u"].dtype().count == 1 ? fold_alu(m["u"]) : UOp(); }},  // op(c1, c2) -> c
}};

// ---------------------------------------------------------------- identities

namespace {
UOp keep(Match& m, const char* n) { return m[n]; }
bool int_or_bool(const UOp& u) { return (u.dtype().is_int() || u.dtype().is_bool()) && u.dtype().count == 1; }
}  // namespace

const PatternMatcher symbolic_simple =
    fold_constants +
    PatternMatcher{{
        {var("x") + 0, [](Match& m) { return keep(m, "x"); }},                       // x+0 -> x
        {var("x") - 0, [](Match& m) { return keep(m, "x"); }},                       // x-0 -> x
        {var("x") * 1, [](Match& m) { return keep(m, "x"); }},                       // x*1 -> x
        {var("x") / 1, [](Match& m) { return keep(m, "x"); }},                       // x//1 -> x
        {var("x") / -1, [](Match& m) { return -m["x"]; }},                           // x//-1 -> -x
        {var("x").alu(Op::FDiv, {cnst(1)}), [](Match& m) { return keep(m, "x"); }},  // x/1.0 -> x
        {var("x") % 1, [](Match& m) { return m["x"].const_like(0); }},               // x%1 -> 0
        {var("x") % -1, [](Match& m) { return m["x"].const_like(0); }},              // x%-1 -> 0
        {var("x") * 0,
         [](Match& m) { return int_or_bool(m["x"]) ? m["x"].const_like(0) : UOp(); }},  // x*0 -> 0 (ints)
        {var("x") - var("x"),
         [](Match& m) { return is_int(m["x"]) ? m["x"].const_like(0) : UOp(); }},  // x-x -> 0 (ints)
        {var("x") ^ var("x"), [](Match& m) { return m["x"].const_like(0); }},      // x^x -> 0
        {var("x") / var("x"),                                                      // x//x -> 1 (x != 0)
         [](Match& m) { return m["x"].vmin() > 0 || m["x"].vmax() < 0 ? m["x"].const_like(1) : UOp(); }},
        {var("x") & var("x"), [](Match& m) { return keep(m, "x"); }},     // x&x -> x
        {var("x") | var("x"), [](Match& m) { return keep(m, "x"); }},     // x|x -> x
        {var("x").max(var("x")), [](Match& m) { return keep(m, "x"); }},  // max(x,x) -> x
        {var("x").lt(var("x")),
         [](Match& m) { return int_or_bool(m["x"]) ? UOp::const_bool(false) : UOp(); }},  // x<x -> F
        {var("x").ne(var("x")),
         [](Match& m) { return int_or_bool(m["x"]) ? UOp::const_bool(false) : UOp(); }},  // x!=x -> F
        {var("c").where(var("x"), var("x")), [](Match& m) { return keep(m, "x"); }},      // where(c,x,x) -> x
        {cvar("c", dtypes::bool_).where(var("t"), var("f")),                              // where(T,t,f) -> t
         [](Match& m) { return ci(m["c"]) ? m["t"] : m["f"]; }},
        {var("x", dtypes::bool_) & cvar("c", dtypes::bool_),  // x&T -> x, x&F -> F
         [](Match& m) { return ci(m["c"]) ? m["x"] : m["c"]; }},
        {var("x", dtypes::bool_) | cvar("c", dtypes::bool_),  // x|F -> x, x|T -> T
         [](Match& m) { return ci(m["c"]) ? m["c"] : m["x"]; }},
        {-(-var("x")), [](Match& m) { return keep(m, "x"); }},  // --x -> x
        {var("x").cast().named("c"),                            // cast to same dtype -> x
         [](Match& m) { return m["c"].dtype() == m["x"].dtype() ? m["x"] : UOp(); }},
        {var("x").cast().cast().named("c"),  // widen, narrow back -> x
         [](Match& m) {
           const UOp &x = m["x"], &mid = m["c"].src(0);
           return m["c"].dtype() == x.dtype() && widens(x.dtype(), mid.dtype()) ? x : UOp();
         }},
    }};

// ---------------------------------------------------------------- the full symbolic set

namespace {
const UPat kCommutativeConstFirst = UPat({Op::Add, Op::Mul, Op::Max, Op::And, Op::Or, Op::Xor, Op::CmpNE})
                                        .named("a")
                                        .src({cvar("c"), var("x")});
UOp int_only(const UOp& like, UOp r) { return is_int(like) ? r : UOp(); }
}  // namespace

const PatternMatcher symbolic =
    symbolic_simple +
    PatternMatcher{{
        {kCommutativeConstFirst,  // c op x -> x op c (constants on the right, so equal sums intern once)
         [](Match& m) {
           return m["x"].op() == Op::Const ? UOp() : m["a"].with_src({m["x"], m["c"]});
         }},
        // A node whose range is one value is that value.
        {any_alu(true).named("u"),
         [](Match& m) {
           const UOp& u = m["u"];
           bool exact = int_or_bool(u) && u.vmin() == u.vmax() && std::abs(u.vmin()) < 9e15;
           return exact ? UOp::const_int(u.dtype(), int64_t(u.vmin())) : UOp();
         }},
        // integer subtraction and negation become sums of terms c*x, so like terms can meet
        {var("x") - var("y"),
         [](Match& m) { return int_only(m["x"], m["x"] + m["y"] * -1); }},    // x-y -> x+y*-1
        {-var("x"), [](Match& m) { return int_only(m["x"], m["x"] * -1); }},  // -x -> x*-1
        {(var("x") * cvar("c1")) * cvar("c2"),                                // (x*c1)*c2 -> x*(c1*c2)
         [](Match& m) { return int_only(m["x"], m["x"] * fold_alu(m["c1"] * m["c2"])); }},
        {(var("x") + cvar("c1")) * cvar("c2"),  // (x+c1)*c2 -> x*c2+c1*c2
         [](Match& m) { return int_only(m["x"], m["x"] * m["c2"] + fold_alu(m["c1"] * m["c2"])); }},
        {UPat(Op::Add).named("s"),
         [](Match& m) { return collect_terms(m["s"]); }},  // x*a+y+x*b+c1+c2 -> y+x*(a+b)+c
        // division and modulo
        {var("x") / var("y"),
         [](Match& m) { return div_mod_fold(m["x"], m["y"], Op::IDiv); }},  // from ranges and sums
        {var("x") % var("y"), [](Match& m) { return div_mod_fold(m["x"], m["y"], Op::Mod); }},
        {(var("x") / cvar("c1")) / cvar("c2"),  // x//c1//c2 -> x//(c1*c2)
         [](Match& m) {
           int64_t a = ci(m["c1"]), b = ci(m["c2"]);
           return a > 0 && b > 0 && fits(m["x"], double(a) * double(b)) ? m["x"] / (a * b) : UOp();
         }},
        {(var("x") % cvar("c1")) % cvar("c2"),  // x%(k*c)%c -> x%c
         [](Match& m) {
           int64_t a = ci(m["c1"]), b = ci(m["c2"]);
           return a > 0 && b > 0 && a % b == 0 ? m["x"] % m["c2"] : UOp();
         }},
        {(var("x") % cvar("c")) + (var("x") / cvar("c")) * cvar("c"),  // x%c+(x//c)*c -> x
         [](Match& m) { return keep(m, "x"); }},
        {(var("y") + var("x") % cvar("c")) + (var("x") / cvar("c")) * cvar("c"),  // y+x%c+(x//c)*c -> y+x
         [](Match& m) { return m["y"] + m["x"]; }},
        // comparisons
        {UPat(Op::CmpLT).named("r").src({UPat({Op::Add, Op::Mul, Op::IDiv}), UPat(Op::Const)}),
         [](Match& m) { return cmp_const_fold(m["r"]); }},
        {var("x").lt(cvar("a")) & var("x").lt(cvar("b")),  // x<a & x<b -> x<min(a,b)
         [](Match& m) {
           return ci(m["a"]) <= ci(m["b"]) || !is_int(m["x"]) ? m["x"].lt(m["a"]) : m["x"].lt(m["b"]);
         }},
        {var("x").max(var("y")),  // max(x,y) -> x if x>=y
         [](Match& m) {
           const UOp &x = m["x"], &y = m["y"];
           return x.vmin() >= y.vmax() ? x : y.vmin() >= x.vmax() ? y : UOp();
         }},
    }};

UOp simplify(const UOp& u) { return graph_rewrite(u, symbolic); }

namespace {

// The clauses of a conjunction.
void split_and(const UOp& u, std::vector<UOp>& out) {
  if (u.op() == Op::And && u.dtype().is_bool()) {
    split_and(u.src(0), out);
    split_and(u.src(1), out);
  } else {
    out.push_back(u);
  }
}

}  // namespace

UOp simplify_given(const UOp& e, const UOp& valid) {
  if (!valid || valid.is_const()) return e;
  // Bounds fold divisions and remainders (a sum of bounded terms is already as simple as it gets): an
  // index without them is left as it is, which keeps lowering fast.
  bool divides = false;
  for (const UOp& u : e.toposort()) divides |= u.op() == Op::IDiv || u.op() == Op::Mod;
  if (!divides) return e;
  // Bounds each clause puts on an integer expression: x < c, x >= c (UOp::ge's !(x < c)), c < x. Each
  // starts from x's own range and a clause tightens only the side it bounds; an expression whose range is
  // beyond exact doubles is left alone.
  std::vector<UOp> clauses;
  split_and(valid, clauses);
  struct Bound {
    UOp x;
    double lo, hi;
  };
  std::vector<Bound> bounds;
  auto bound_of = [&](const UOp& x) -> Bound* {
    if (!is_int(x) || x.is_const() || std::abs(x.vmin()) > 9e15 || std::abs(x.vmax()) > 9e15) return nullptr;
    for (Bound& b : bounds)
      if (b.x == x) return &b;
    return &bounds.emplace_back(Bound{x, x.vmin(), x.vmax()});
  };
  for (const UOp& c : clauses) {
    const bool lt = c.op() == Op::CmpLT, ge = c.op() == Op::CmpNE && c.src(1).is_const() &&
                                              c.src(1).dtype().is_bool() && c.src(1).const_int_value() == 1 &&
                                              c.src(0).op() == Op::CmpLT;
    const UOp cmp = ge ? c.src(0) : c;
    if (!(lt || ge)) continue;
    if (cmp.src(1).is_const() && is_int(cmp.src(1))) {  // x < k, or x >= k
      if (Bound* b = bound_of(cmp.src(0))) {
        const double k = double(ci(cmp.src(1)));
        if (lt)
          b->hi = std::min(b->hi, k - 1);
        else
          b->lo = std::max(b->lo, k);
      }
    } else if (lt && cmp.src(0).is_const() && is_int(cmp.src(0))) {  // k < x
      if (Bound* b = bound_of(cmp.src(1))) b->lo = std::max(b->lo, double(ci(cmp.src(0))) + 1);
    }
  }
  // Each bounded expression becomes a variable with the narrower bounds, the expression is simplified, and
  // the variables are put back.
  std::vector<std::pair<UOp, UOp>> to, back;
  for (const Bound& b : bounds) {
    if (b.lo > b.hi) return e;  // never valid: nothing reads the index
    if (b.lo == b.x.vmin() && b.hi == b.x.vmax()) continue;
    UOp v = UOp::variable("\x01given" + std::to_string(to.size()), int64_t(b.lo), int64_t(b.hi), b.x.dtype());
    to.push_back({b.x, v});
    back.push_back({v, b.x});
  }
  if (to.empty()) return e;
  return simplify(simplify(e.substitute(to)).substitute(back));
}

}  // namespace sluice
