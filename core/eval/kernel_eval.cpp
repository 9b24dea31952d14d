#include "core/eval/kernel_eval.h"

#include <cmath>
#include <optional>
#include <unordered_map>

#include "base/error.h"
#include "core/ir/shape_tracker.h"
#include "core/schedule/views.h"

namespace sluice::eval {
namespace {

// The buffer position element `idx` of the tracker reads, or nothing where a mask hides it: the last
// view's index gives a position in that view; every earlier view reads that position as a row-major index
// into its own shape.
std::optional<int64_t> position(const ShapeTracker& st, std::vector<int64_t> idx) {
  for (size_t k = st.views.size(); k-- > 0;) {
    const View& v = st.views[k];
    int64_t pos = v.offset;
    for (size_t a = 0; a < idx.size(); ++a) {
      if (v.mask && (idx[a] < (*v.mask)[a].first || idx[a] >= (*v.mask)[a].second)) return std::nullopt;
      pos += idx[a] * v.strides[a];
    }
    if (k == 0) return pos;
    const Shape& below = st.views[k - 1].shape;
    idx.assign(below.size(), 0);
    for (size_t a = below.size(); a-- > 0;) {
      if (below[a] == 0) return std::nullopt;
      idx[a] = pos % below[a];
      pos /= below[a];
    }
  }
  return std::nullopt;
}

struct Value {
  Scalar64 v;
  bool defined = true;
};

Scalar64 const_of(const UOp& u) {
  return u.dtype().is_float() ? Scalar64::of_float(u.const_value()) : Scalar64::of_int(u.const_int_value());
}

class Walker {
 public:
  explicit Walker(std::span<const HostArray> bufs) : bufs_(bufs) {}

  Value at(const UOp& u, std::vector<int64_t>& idx) {
    switch (u.op()) {
      case Op::Load: {
        const size_t b = size_t(u.src(0).arg_as<int64_t>());
        std::optional<int64_t> p = position(sched::st_of(u.src(1)), idx);
        if (!p) return {};  // masked: reads nothing
        SLUICE_CHECK_IN(ValueError, "evaluate_kernel", b < bufs_.size() && bufs_[b].numel() > 0)
            << "the kernel reads buffer " << b << ", which was not given (" << bufs_.size() << " buffers)";
        SLUICE_CHECK_IN(ValueError, "evaluate_kernel", *p >= 0 && *p < bufs_[b].numel())
            << "buffer " << b << " is read at position " << *p << ", outside its " << bufs_[b].numel()
            << " elements";
        return {bufs_[b].scalar(*p), bufs_[b].is_defined(*p)};
      }
      case Op::Const:
        if (u.num_src() == 1 && !position(sched::st_of(u.src(0)), idx)) return {};
        return {const_of(u)};
      case Op::Cast:
      case Op::Bitcast: {
        const UOp& x = u.src(0);
        Value s = at(x, idx);
        std::optional<Scalar64> r = u.op() == Op::Cast ? exec_cast(s.v, x.dtype(), u.dtype())
                                                       : exec_bitcast(s.v, x.dtype(), u.dtype());
        return r ? Value{*r, s.defined} : Value{{}, false};
      }
      case Op::ReduceAxis: return reduce(u, idx);
      default: break;
    }
    SLUICE_CHECK_IN(ValueError, "evaluate_kernel", op_in(u.op(), kAlu))
        << op_name(u.op()) << " is not an op of a kernel's value tree";
    const size_t n = u.num_src();
    Value xs[3];
    Scalar64 v[3];
    for (size_t s = 0; s < n; ++s) xs[s] = at(u.src(s), idx), v[s] = xs[s].v;
    const DType in = u.op() == Op::Where ? u.src(1).dtype() : u.src(0).dtype();
    std::optional<Scalar64> r = exec_alu(u.op(), in.is_float() ? dtypes::float64 : in, {v, n});
    bool defined = r.has_value();
    if (u.op() == Op::Where)
      defined &= xs[0].defined && xs[v[0].i ? 1 : 2].defined;
    else
      for (size_t s = 0; s < n; ++s) defined &= xs[s].defined;
    return {r.value_or(Scalar64{}), defined};
  }

 private:
  // Folds the source over every index of the reduced axes (the output index has them at 0).
  Value reduce(const UOp& u, std::vector<int64_t>& idx) {
    const ReduceArg& r = u.arg_as<ReduceArg>();
    const UOp& x = u.src(0);
    const DType dt = x.dtype(), exec_dt = dt.is_float() ? dtypes::float64 : dt;
    Value acc{r.op == Op::Add   ? Scalar64{0, 0.0}
              : r.op == Op::Mul ? Scalar64{1, 1.0}
                                : Scalar64{dt.is_float() ? 0 : dt.min_int(), -INFINITY}};
    const Shape& full = input_shape(u);
    const std::vector<int64_t> saved = idx;
    for (int64_t a : r.axes)
      if (full[size_t(a)] == 0) return acc;
    for (bool more = true; more;) {
      Value e = at(x, idx);
      Scalar64 pair[2] = {acc.v, e.v};
      acc = {*exec_alu(r.op, exec_dt, pair), acc.defined && e.defined};  // ADD, MUL, MAX are total
      more = false;
      for (size_t k = r.axes.size(); k-- > 0;) {
        const size_t a = size_t(r.axes[k]);
        if (++idx[a] < full[a]) {
          more = true;
          break;
        }
        idx[a] = 0;
      }
    }
    idx = saved;
    return acc;
  }

  // The shape a REDUCE_AXIS reduces (F): that of the views below it.
  const Shape& input_shape(const UOp& reduce) {
    auto [it, fresh] = full_.try_emplace(reduce.get());
    if (fresh) {
      for (const UOp& v : reduce.src(0).toposort())
        if (v.op() == Op::View) it->second = sched::st_of(v).shape();
      SLUICE_CHECK_IN(ValueError, "evaluate_kernel", !it->second.empty())
          << "a REDUCE_AXIS without a view below it";
    }
    return it->second;
  }

  std::span<const HostArray> bufs_;
  std::unordered_map<const void*, Shape> full_;
};

}  // namespace

std::vector<KernelValue> evaluate_kernel(const UOp& ast, std::span<const HostArray> bufs,
                                         std::span<const int64_t> elements) {
  SLUICE_CHECK_IN(ValueError, "evaluate_kernel", ast.op() == Op::Sink)
      << "expected a SINK of STOREs, got " << op_name(ast.op());
  Walker w(bufs);
  std::vector<KernelValue> out;
  for (const UOp& store : ast.src()) {
    SLUICE_CHECK_IN(ValueError, "evaluate_kernel", store.op() == Op::Store && store.num_src() == 3)
        << "expected STORE(DEFINE_GLOBAL, VIEW, value), got " << op_name(store.op());
    const ShapeTracker& st = sched::st_of(store.src(1));
    const Shape& shape = st.shape();
    const size_t b = size_t(store.src(0).arg_as<int64_t>());
    for (int64_t e : elements) {
      SLUICE_CHECK_IN(ValueError, "evaluate_kernel", e >= 0 && e < prod(shape))
          << "output element " << e << " is outside the output's " << prod(shape) << " elements";
      std::vector<int64_t> idx(shape.size());
      for (size_t a = shape.size(), rest = size_t(e); a-- > 0;) {
        idx[a] = int64_t(rest % size_t(shape[a]));
        rest /= size_t(shape[a]);
      }
      std::optional<int64_t> p = position(st, idx);
      if (!p) continue;
      Value v = w.at(store.src(2), idx);
      out.push_back({b, *p, v.v, v.defined});
    }
  }
  return out;
}

}  // namespace sluice::eval
