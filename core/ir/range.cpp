// Range analysis: UOp::vmin / UOp::vmax. Bounds are doubles, exact for integers up to 2^53; a bound that
// could exceed the dtype (wrap-around) or 2^53 falls back to the dtype's limits, which is always sound.
#include <algorithm>
#include <cmath>

#include "core/ir/uop.h"

namespace sluice {
namespace {

using Range = std::pair<double, double>;
constexpr double kExact = 9007199254740992.0;  // 2^53

Range dtype_range(DType d) {
  if (d.is_ptr() || d.is_void()) return {-INFINITY, INFINITY};
  return {d.min(), d.max()};
}

Range minmax4(double a, double b, double c, double d) {
  // 0 * inf is NaN; treat it as 0 (the product of a finite bound and an infinite one that is 0).
  auto z = [](double v) { return std::isnan(v) ? 0.0 : v; };
  a = z(a), b = z(b), c = z(c), d = z(d);
  return {std::min({a, b, c, d}), std::max({a, b, c, d})};
}

double trunc_div(double a, double b) { return std::trunc(a / b); }

Range compute(const UOp& u) {
  DType dt = u.dtype();
  if (dt.is_ptr() || dt.is_void() || dt.count > 1) return dtype_range(dt);
  auto s = u.src();
  auto lo = [&](int i) { return s[size_t(i)].vmin(); };
  auto hi = [&](int i) { return s[size_t(i)].vmax(); };
  switch (u.op()) {
    case Op::Const: return {u.const_value(), u.const_value()};
    case Op::DefineVar:
    case Op::Special: {
      auto& v = u.arg_as<VarArg>();
      return {double(v.min), double(v.max)};
    }
    case Op::Bind: return {lo(0), hi(0)};
    case Op::Range:  // RANGE(end) or RANGE(start, end): start <= i < end
      if (s.size() == 1) return {0, hi(0) - 1};
      if (s.size() >= 2) return {lo(0), hi(1) - 1};
      return dtype_range(dt);
    case Op::Add: return {lo(0) + lo(1), hi(0) + hi(1)};
    case Op::Sub: return {lo(0) - hi(1), hi(0) - lo(1)};
    case Op::Neg: return {-hi(0), -lo(0)};
    case Op::Mul: return minmax4(lo(0) * lo(1), lo(0) * hi(1), hi(0) * lo(1), hi(0) * hi(1));
    case Op::MulAcc: {
      Range m = minmax4(lo(0) * lo(1), lo(0) * hi(1), hi(0) * lo(1), hi(0) * hi(1));
      return {m.first + lo(2), m.second + hi(2)};
    }
    case Op::Max: return {std::max(lo(0), lo(1)), std::max(hi(0), hi(1))};
    case Op::IDiv:
      if (lo(1) > 0 || hi(1) < 0)  // divisor does not span 0: extremes are at the corners
        return minmax4(trunc_div(lo(0), lo(1)), trunc_div(lo(0), hi(1)), trunc_div(hi(0), lo(1)),
                       trunc_div(hi(0), hi(1)));
      break;
    case Op::Mod: {  // C remainder: the sign of the dividend, |r| < |divisor|
      double m = std::max(std::abs(lo(1)), std::abs(hi(1))) - 1;
      if (lo(1) > 0 && lo(1) == hi(1) && lo(0) >= 0 && hi(0) < lo(1)) return {lo(0), hi(0)};
      if (std::isinf(m)) break;
      return {lo(0) < 0 ? std::max(lo(0), -m) : 0.0, hi(0) > 0 ? std::min(hi(0), m) : 0.0};
    }
    case Op::CmpLT:
      if (hi(0) < lo(1)) return {1, 1};
      if (lo(0) >= hi(1)) return {0, 0};
      return {0, 1};
    case Op::CmpNE:
      if (hi(0) < lo(1) || lo(0) > hi(1)) return {1, 1};
      if (lo(0) == hi(0) && lo(1) == hi(1) && lo(0) == lo(1)) return {0, 0};
      return {0, 1};
    case Op::Where:
      if (lo(0) == 1) return {lo(1), hi(1)};
      if (hi(0) == 0) return {lo(2), hi(2)};
      return {std::min(lo(1), lo(2)), std::max(hi(1), hi(2))};
    case Op::And:
      if (dt.is_bool()) return {std::min(lo(0), lo(1)), std::min(hi(0), hi(1))};
      if (lo(0) >= 0 && lo(1) >= 0) return {0, std::min(hi(0), hi(1))};
      if (lo(0) >= 0) return {0, hi(0)};
      if (lo(1) >= 0) return {0, hi(1)};
      break;
    case Op::Or:
    case Op::Xor:
      if (dt.is_bool())
        return u.op() == Op::Or ? Range{std::max(lo(0), lo(1)), std::max(hi(0), hi(1))} : Range{0, 1};
      if (lo(0) >= 0 && lo(1) >= 0 && hi(0) < kExact && hi(1) < kExact) {
        double top = std::exp2(std::ceil(std::log2(std::max(hi(0), hi(1)) + 1))) - 1;  // all bits below
        return {u.op() == Op::Or ? std::max(lo(0), lo(1)) : 0.0, top};
      }
      break;
    case Op::Shl:
      if (lo(1) == hi(1) && lo(1) >= 0 && lo(1) < 63)
        return {lo(0) * std::exp2(lo(1)), hi(0) * std::exp2(lo(1))};
      break;
    case Op::Shr:
      if (lo(1) == hi(1) && lo(1) >= 0 && lo(1) < 64 && lo(0) >= 0)
        return {std::floor(lo(0) / std::exp2(lo(1))), std::floor(hi(0) / std::exp2(lo(1)))};
      break;
    case Op::Cast: {
      Range r{lo(0), hi(0)};
      if (dt.is_bool()) return {r.first > 0 || r.second < 0 ? 1 : 0, r.first == 0 && r.second == 0 ? 0 : 1};
      if (dt.is_int()) r = {std::trunc(r.first), std::trunc(r.second)};
      if (r.first >= dt.min() && r.second <= dt.max()) return r;  // fits: the cast keeps every value
      break;
    }
    case Op::Trunc: return {std::trunc(lo(0)), std::trunc(hi(0))};
    case Op::Sqrt:
      if (lo(0) >= 0) return {std::sqrt(lo(0)), std::sqrt(hi(0))};
      break;
    case Op::Exp2: return {std::exp2(lo(0)), std::exp2(hi(0))};
    case Op::Log2:
      if (lo(0) > 0) return {std::log2(lo(0)), std::log2(hi(0))};
      break;
    case Op::Sin: return {-1, 1};
    case Op::Recip:
      if (lo(0) > 0 || hi(0) < 0) return {1 / hi(0), 1 / lo(0)};
      break;
    default: break;
  }
  return dtype_range(dt);
}

Range checked(const UOp& u) {
  DType dt = u.dtype();
  Range r = compute(u);
  if (std::isnan(r.first) || std::isnan(r.second)) return dtype_range(dt);
  if (dt.is_int() || dt.is_bool()) {
    // A bound outside the dtype means the value may wrap; beyond 2^53 doubles are no longer exact.
    Range limits = dtype_range(dt);
    if (r.first < limits.first || r.second > limits.second) return limits;
    if (std::abs(r.first) > kExact || std::abs(r.second) > kExact)
      return {std::abs(r.first) > kExact ? limits.first : r.first,
              std::abs(r.second) > kExact ? limits.second : r.second};
  }
  return r;
}

bool ready(const UOp& u) { return u.get()->range_ready.load(std::memory_order_acquire) != 0; }
void store(const UOp& u) {
  Range r = checked(u);
  u.get()->vmin.store(r.first, std::memory_order_relaxed);
  u.get()->vmax.store(r.second, std::memory_order_relaxed);
  u.get()->range_ready.store(1, std::memory_order_release);
}

const UOpNode& fill(const UOp& u) {
  if (ready(u)) return *u.get();
  // Post-order over the nodes not yet analysed (iterative, so deep graphs do not recurse; it stops at
  // analysed nodes, so analysing a new node over a large analysed graph costs only the new part).
  std::vector<std::pair<const UOp*, uint32_t>> stack{{&u, 0}};
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (i < n->num_src()) {
      const UOp* s = &n->src(i++);
      if (!ready(*s)) stack.push_back({s, 0});
    } else {
      if (!ready(*n)) store(*n);
      stack.pop_back();
    }
  }
  return *u.get();
}

}  // namespace

double UOp::vmin() const { return fill(*this).vmin.load(std::memory_order_relaxed); }
double UOp::vmax() const { return fill(*this).vmax.load(std::memory_order_relaxed); }

}  // namespace sluice
