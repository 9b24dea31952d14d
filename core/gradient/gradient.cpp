#include "core/gradient/gradient.h"

#include <numbers>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "core/ir/view.h"

namespace sluice {
namespace {

// The device a tensor-level node lives on: the first device met down its first sources (a COPY names the
// device it copies to).
std::string device_of(UOp u) {
  for (;;) {
    if (std::string d = u.device(); !d.empty()) return d;
    if (u.num_src() == 0) return "";
    u = u.src(0);
  }
}

// What a rule reads: the node, its upstream gradient, and constants shaped like the node.
struct Ctx {
  const UOp& ret;
  const UOp& g;
  const std::string& device;
  UOp full(double v, const UOp& like) const {
    UOp c = UOp::const_on(device, like.dtype(), v);
    const Shape& s = like.shape();
    return s.empty() ? c : c.reshape(Shape(s.size(), 1)).expand(s);
  }
  const UOp& x() const { return ret.src(0); }
  const UOp& y() const { return ret.src(1); }
};

UOp mul(const UOp& a, const UOp& b) { return a.alu(Op::Mul, b); }
UOp add(const UOp& a, const UOp& b) { return a.alu(Op::Add, b); }
UOp neg(const UOp& a) { return a.alu(Op::Neg); }
UOp fdiv(const UOp& a, const UOp& b) { return a.alu(Op::FDiv, b); }
UOp eq(const UOp& a, const UOp& b, const Ctx& c) {  // as 1.0 / 0.0 in a's dtype
  return a.ne(b).where(c.full(0, a), c.full(1, a));
}

// The gradient of the REDUCE_AXIS sources: each output's gradient spread back over the reduced axes.
UOp reduce_grad(const Ctx& c) {
  const auto& arg = c.ret.arg_as<ReduceArg>();
  const Shape& in = c.x().shape();
  const UOp ge = c.g.expand(in);
  switch (arg.op) {
    case Op::Add: return ge;
    case Op::Mul: return fdiv(mul(ge, c.ret.expand(in)), c.x());
    case Op::Max: {
      // Ties share the gradient equally, as the reference design divides it.
      const UOp hit = eq(c.x(), c.ret.expand(in), c);
      return fdiv(mul(ge, hit), hit.reduce(Op::Add, arg.axes).expand(in));
    }
    default: return {};
  }
}

// The inverse of PERMUTE's axes.
Shape inverse(const Shape& axes) {
  Shape inv(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) inv[size_t(axes[i])] = int64_t(i);
  return inv;
}

// One rule per primitive op: the gradients of the node's sources (null: none flows to that source).
std::vector<UOp> rule(const Ctx& c) {
  const UOp &r = c.ret, &g = c.g;
  const auto& a = r.arg();
  constexpr double kLn2 = std::numbers::ln2;
  switch (r.op()) {
    // --- elementwise ---
    case Op::Neg: return {neg(g)};
    case Op::Exp2: return {mul(mul(g, r), c.full(kLn2, r))};
    case Op::Log2: return {fdiv(g, mul(c.x(), c.full(kLn2, r)))};
    case Op::Sin: return {mul(g, add(c.x(), c.full(std::numbers::pi / 2, r)).alu(Op::Sin))};  // cos x
    case Op::Sqrt: return {fdiv(g, mul(r, c.full(2, r)))};
    case Op::Recip: return {neg(mul(g, mul(r, r)))};
    case Op::Trunc: return {c.full(0, r)};
    case Op::Add: return {g, g};
    case Op::Sub: return {g, neg(g)};
    case Op::Mul: return {mul(g, c.y()), mul(g, c.x())};
    case Op::FDiv: return {fdiv(g, c.y()), neg(fdiv(mul(g, r), c.y()))};
    case Op::Max: {
      // Ties split the gradient in half between the two inputs.
      const UOp half = mul(g, c.full(0.5, r)), zero = c.full(0, r);
      const UOp tie = c.x().ne(c.y()).where(zero, half);
      return {c.y().lt(c.x()).where(g, tie), c.x().lt(c.y()).where(g, tie)};
    }
    case Op::Where: {
      const UOp zero = c.full(0, r);
      return {UOp{}, r.src(0).where(g, zero), r.src(0).where(zero, g)};
    }
    case Op::MulAcc: return {mul(g, r.src(1)), mul(g, r.src(0)), g};
    case Op::Cast: return {c.x().dtype().is_float() ? g.cast(c.x().dtype()) : UOp{}};
    // --- reductions ---
    case Op::ReduceAxis: return {reduce_grad(c)};
    // --- movement: the inverse movement of the gradient ---
    case Op::Reshape: return {g.reshape(c.x().shape())};
    case Op::Permute: return {g.permute(inverse(std::get<std::vector<int64_t>>(a)))};
    case Op::Expand: {
      const Shape &in = c.x().shape(), &out = r.shape();
      Shape axes;
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i] != out[i]) axes.push_back(int64_t(i));
      return {axes.empty() ? g : g.reduce(Op::Add, axes)};
    }
    case Op::Pad: {
      const auto& p = std::get<std::vector<int64_t>>(a);
      const Shape& in = c.x().shape();
      Bounds b(in.size());
      for (size_t i = 0; i < in.size(); ++i) b[i] = {p[2 * i], p[2 * i] + in[i]};
      return {g.shrink(b)};
    }
    case Op::Shrink: {
      const auto& p = std::get<std::vector<int64_t>>(a);
      const Shape& in = c.x().shape();
      Bounds b(in.size());
      for (size_t i = 0; i < in.size(); ++i) b[i] = {p[2 * i], in[i] - p[2 * i + 1]};
      return {g.pad(b)};
    }
    case Op::Flip: return {g.flip(std::get<std::vector<int64_t>>(a))};
    // --- structure ---
    case Op::Contiguous: return {g};
    case Op::Copy: return {g.copy_to(device_of(c.x())), UOp{}};
    default: return {};  // DETACH, constants, buffers, comparisons, integer and bit ops: no gradient
  }
}

bool differentiable(const UOp& u) { return u.dtype().is_float(); }

}  // namespace

std::vector<UOp> gradient(const UOp& root, const UOp& root_grad, std::span<const UOp> targets) {
  SLUICE_CHECK_IN(DTypeError, "backward", differentiable(root) && differentiable(root_grad))
      << "gradients need float tensors; the output is " << root.dtype().name() << " and its gradient "
      << root_grad.dtype().name();
  SLUICE_CHECK_IN(ShapeError, "backward", root.shape() == root_grad.shape())
      << "the gradient's shape " << tuple_str(root_grad.shape()) << " is not the output's "
      << tuple_str(root.shape());
  // The nodes on a path from a target to the root, sources before users.
  const std::unordered_set<UOp> wanted(targets.begin(), targets.end());
  std::unordered_set<UOp> on_path;
  std::vector<UOp> order;
  for (const UOp& u : root.toposort()) {
    bool in = wanted.count(u) > 0;
    if (u.op() != Op::Detach)
      for (const UOp& s : u.src()) in = in || on_path.count(s) > 0;
    if (in && differentiable(u)) {
      on_path.insert(u);
      order.push_back(u);
    }
  }
  std::unordered_map<UOp, UOp> grads;
  if (on_path.count(root)) grads.emplace(root, root_grad);
  std::unordered_map<UOp, std::string> devices;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOp& u = *it;
    auto found = grads.find(u);
    if (found == grads.end() || u.num_src() == 0) continue;
    auto [dev, fresh] = devices.try_emplace(u);
    if (fresh) dev->second = device_of(u);
    const std::vector<UOp> srcs = rule(Ctx{u, found->second, dev->second});
    for (size_t i = 0; i < srcs.size() && i < u.num_src(); ++i) {
      const UOp& s = u.src(i);
      if (!srcs[i] || !on_path.count(s)) continue;
      auto [slot, first] = grads.try_emplace(s, srcs[i]);
      if (!first) slot->second = add(slot->second, srcs[i]);
    }
  }
  std::vector<UOp> out;
  out.reserve(targets.size());
  for (const UOp& t : targets) {
    auto f = grads.find(t);
    out.push_back(f == grads.end() ? UOp{} : f->second);
  }
  return out;
}

}  // namespace sluice
