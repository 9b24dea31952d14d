#include "core/eval/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "base/error.h"

namespace sluice::eval {

// ---------------------------------------------------------------- HostArray

double HostArray::value(int64_t k) const {
  if (dtype.is_float()) return f[size_t(k)];
  return dtype.scalar == Scalar::UInt64 ? double(uint64_t(i[size_t(k)])) : double(i[size_t(k)]);
}
Scalar64 HostArray::scalar(int64_t k) const {
  return dtype.is_float() ? Scalar64::of_float(f[size_t(k)]) : Scalar64::of_int(i[size_t(k)]);
}

namespace {

HostArray empty_like(DType dt, Shape shape) {
  HostArray a{dt, std::move(shape), {}, {}, {}};
  if (dt.is_float())
    a.f.assign(size_t(a.numel()), 0.0);
  else
    a.i.assign(size_t(a.numel()), 0);
  return a;
}

void check_count(const char* func, DType dt, const Shape& shape, size_t n) {
  SLUICE_CHECK_IN(ValueError, func, int64_t(n) == prod(shape))
      << n << " values of " << dt.name() << " for shape " << tuple_str(shape);
}

}  // namespace

HostArray HostArray::from_values(DType dt, Shape shape, const std::vector<double>& values) {
  check_count("from_values", dt, shape, values.size());
  HostArray a = empty_like(dt, std::move(shape));
  for (size_t k = 0; k < values.size(); k++) {
    if (dt.is_float())
      a.f[k] = round_float(dt, values[k]);
    else
      a.i[k] = UOp::const_(dt, values[k]).const_int_value();
  }
  return a;
}

HostArray HostArray::from_ints(DType dt, Shape shape, const std::vector<int64_t>& values) {
  check_count("from_ints", dt, shape, values.size());
  HostArray a = empty_like(dt, std::move(shape));
  for (size_t k = 0; k < values.size(); k++) {
    if (dt.is_float())
      a.f[k] = exec_cast(Scalar64::of_int(values[k]), dtypes::int64, dt)->f;
    else
      a.i[k] = wrap_int(dt, values[k]);
  }
  return a;
}

HostArray HostArray::from_bytes(DType dt, Shape shape, std::span<const std::byte> bytes) {
  const size_t w = size_t(dt.itemsize());
  SLUICE_CHECK_AS(ValueError, w > 0 && int64_t(bytes.size()) == prod(shape) * int64_t(w))
      << bytes.size() << " bytes for " << tuple_str(shape) << " of " << dt.name();
  HostArray a = empty_like(dt, std::move(shape));
  for (size_t k = 0; k < bytes.size() / w; k++) {
    uint64_t raw = 0;
    std::memcpy(&raw, bytes.data() + k * w, w);  // little-endian host: the low bytes of raw
    if (dt.is_bool()) {
      a.i[k] = raw != 0;
    } else {
      // A bitcast from the unsigned integer of the same width decodes floats and sign-extends ints.
      DType bits = w == 1   ? dtypes::uint8
                   : w == 2 ? dtypes::uint16
                   : w == 4 ? dtypes::uint32
                            : dtypes::uint64;
      Scalar64 v = *exec_bitcast(Scalar64::of_int(int64_t(raw)), bits, dt);
      if (dt.is_float())
        a.f[k] = v.f;
      else
        a.i[k] = v.i;
    }
  }
  return a;
}

std::vector<std::byte> HostArray::to_bytes() const {
  const size_t w = size_t(dtype.itemsize()), n = size_t(numel());
  std::vector<std::byte> out(n * w);
  for (size_t k = 0; k < n; k++) {
    uint64_t raw = 0;
    if (dtype.is_bool()) {
      raw = i[k] != 0;
    } else {
      DType bits = w == 1   ? dtypes::uint8
                   : w == 2 ? dtypes::uint16
                   : w == 4 ? dtypes::uint32
                            : dtypes::uint64;
      raw = uint64_t(exec_bitcast(scalar(int64_t(k)), dtype, bits)->i);
    }
    std::memcpy(out.data() + k * w, &raw, w);
  }
  return out;
}

std::string HostArray::str() const {
  std::ostringstream os;
  os << dtype.name() << " " << tuple_str(shape) << " [";
  for (int64_t k = 0; k < numel(); k++) {
    if (k) os << ", ";
    if (!is_defined(k))
      os << '?';
    else if (dtype.is_float())
      os << f[size_t(k)];
    else if (dtype.scalar == Scalar::UInt64)
      os << uint64_t(i[size_t(k)]);
    else
      os << i[size_t(k)];
  }
  os << "]";
  return os.str();
}

// ---------------------------------------------------------------- evaluation

namespace {

// The sources whose values a node's value depends on. The DEVICE and UNIQUE sources carry no values, and
// ASSIGN's target is overwritten, so it is never read (it may be a buffer that holds nothing yet).
std::span<const UOp> value_srcs(const UOp& u) {
  switch (u.op()) {
    case Op::Buffer:
    case Op::Const: return {};
    case Op::Copy: return u.src().first(1);
    case Op::Assign: return u.src().subspan(1, 1);
    default: return u.src();
  }
}

// Writes element `from` of src into element `to` of dst (same dtype), flag included.
inline void copy_elem(HostArray& dst, int64_t to, const HostArray& src, int64_t from) {
  if (src.dtype.is_float())
    dst.f[size_t(to)] = src.f[size_t(from)];
  else
    dst.i[size_t(to)] = src.i[size_t(from)];
  if (!src.undefined.empty() && src.undefined[size_t(from)]) dst.undefined[size_t(to)] = 1;
}
inline void store(HostArray& dst, int64_t k, Scalar64 v) {
  if (dst.dtype.is_float())
    dst.f[size_t(k)] = v.f;
  else
    dst.i[size_t(k)] = v.i;
}

// Iterates the multi-indices of `shape` in row-major order, keeping `pos = offset + sum(idx[a] * step[a])`
// up to date (so a loop over every element costs no division) and how many axes are outside [lo, hi).
struct Odometer {
  const Shape& shape;
  std::vector<int64_t> step, lo, hi, idx;
  int64_t pos;
  int outside = 0;

  Odometer(const Shape& s, std::vector<int64_t> st, int64_t offset, std::vector<int64_t> l = {},
           std::vector<int64_t> h = {})
      : shape(s), step(std::move(st)), lo(std::move(l)), hi(std::move(h)), idx(s.size(), 0), pos(offset) {
    if (lo.empty()) lo.assign(s.size(), 0), hi = s;
    for (size_t a = 0; a < s.size(); a++) outside += !(lo[a] <= 0 && 0 < hi[a]);
  }
  bool inside() const { return outside == 0; }
  void next() {
    for (size_t a = shape.size(); a-- > 0;) {
      const bool was_out = !(lo[a] <= idx[a] && idx[a] < hi[a]);
      if (++idx[a] < shape[a]) {
        pos += step[a];
        outside += int(!(lo[a] <= idx[a] && idx[a] < hi[a])) - int(was_out);
        return;
      }
      pos -= step[a] * (shape[a] - 1);
      idx[a] = 0;
      outside += int(!(lo[a] <= 0 && 0 < hi[a])) - int(was_out);
    }
  }
};

// Row-major strides of a dense array (size-1 axes keep their stride: any value would do).
std::vector<int64_t> dense_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t a = s.size(); a-- > 1;) st[a - 1] = st[a] * s[a];
  return st;
}

// out[j] = src[offset + sum(j[a] * step[a])] where lo[a] <= j[a] < hi[a] on every axis, else 0 (padding).
HostArray gather(const HostArray& src, const Shape& out_shape, std::vector<int64_t> step, int64_t offset,
                 std::vector<int64_t> lo = {}, std::vector<int64_t> hi = {}) {
  HostArray out = empty_like(src.dtype, out_shape);
  if (!src.undefined.empty()) out.undefined.assign(size_t(out.numel()), 0);
  Odometer it(out.shape, std::move(step), offset, std::move(lo), std::move(hi));
  for (int64_t k = 0, n = out.numel(); k < n; k++, it.next())
    if (it.inside()) copy_elem(out, k, src, it.pos);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> pairs(const std::vector<int64_t>& flat) {
  std::vector<std::pair<int64_t, int64_t>> p;
  for (size_t k = 0; k + 1 < flat.size(); k += 2) p.push_back({flat[k], flat[k + 1]});
  return p;
}

HostArray movement(const UOp& u, const HostArray& x) {
  const Shape& s = x.shape;
  const Shape& out = u.shape();
  std::vector<int64_t> st = dense_strides(s), step(out.size());
  int64_t offset = 0;
  switch (u.op()) {
    case Op::Permute: {
      auto& axes = u.arg_as<std::vector<int64_t>>();
      for (size_t a = 0; a < out.size(); a++) step[a] = st[size_t(axes[a])];
      return gather(x, out, step, 0);
    }
    case Op::Expand:
      for (size_t a = 0; a < out.size(); a++) step[a] = s[a] == out[a] ? st[a] : 0;
      return gather(x, out, step, 0);
    case Op::Pad: {
      std::vector<int64_t> lo(out.size()), hi(out.size());
      auto p = pairs(u.arg_as<std::vector<int64_t>>());
      for (size_t a = 0; a < out.size(); a++) {
        step[a] = st[a], lo[a] = p[a].first, hi[a] = p[a].first + s[a];
        offset -= p[a].first * st[a];
      }
      return gather(x, out, step, offset, lo, hi);
    }
    case Op::Shrink: {
      auto p = pairs(u.arg_as<std::vector<int64_t>>());
      for (size_t a = 0; a < out.size(); a++) step[a] = st[a], offset += p[a].first * st[a];
      return gather(x, out, step, offset);
    }
    case Op::Flip: {
      step = st;
      for (int64_t a : u.arg_as<std::vector<int64_t>>()) {
        step[size_t(a)] = -st[size_t(a)];
        if (s[size_t(a)] > 0) offset += (s[size_t(a)] - 1) * st[size_t(a)];
      }
      return gather(x, out, step, offset);
    }
    default: SLUICE_FAIL(ValueError, "evaluate") << op_name(u.op()) << " is not a movement op";
  }
}

HostArray reduce(const UOp& u, const HostArray& x) {
  const ReduceArg& r = u.arg_as<ReduceArg>();
  const DType dt = x.dtype, exec_dt = dt.is_float() ? dtypes::float64 : dt;
  HostArray out = empty_like(dt, u.shape());
  Scalar64 identity = r.op == Op::Add   ? Scalar64{0, 0.0}
                      : r.op == Op::Mul ? Scalar64{1, 1.0}
                                        : Scalar64{dt.is_float() ? 0 : dt.min_int(), -INFINITY};
  for (int64_t k = 0; k < out.numel(); k++) store(out, k, identity);
  if (!x.undefined.empty()) out.undefined.assign(size_t(out.numel()), 0);
  // Walk the input once; each element lands on the output element with the reduced axes at 0.
  std::vector<int64_t> step = dense_strides(out.shape);
  for (int64_t a : r.axes) step[size_t(a)] = 0;
  Odometer it(x.shape, step, 0);
  for (int64_t k = 0, n = x.numel(); k < n; k++, it.next()) {
    Scalar64 v[2] = {out.scalar(it.pos), x.scalar(k)};
    store(out, it.pos, *exec_alu(r.op, exec_dt, v));  // ADD, MUL and MAX are total
    if (!x.undefined.empty() && x.undefined[size_t(k)]) out.undefined[size_t(it.pos)] = 1;
  }
  return out;
}

HostArray alu(const UOp& u, std::span<const HostArray* const> xs) {
  const Op op = u.op();
  const DType in = op == Op::Where ? xs[1]->dtype : xs[0]->dtype;
  // exec_alu defines these only on floats (check_alu stops them at build time too).
  SLUICE_CHECK_IN(DTypeError, "evaluate",
                  in.is_float() || !((op_in(op, kUnary) && op != Op::Neg) || op == Op::FDiv))
      << op_name(op) << " needs a float, got " << in.name();
  HostArray out = empty_like(u.dtype(), u.shape());
  const int64_t n = out.numel();
  bool any_undefined = false;
  std::vector<int64_t> stride(xs.size());  // 1, or 0 for a broadcast scalar
  for (size_t s = 0; s < xs.size(); s++) {
    const bool scalar = xs[s]->shape.empty() && !out.shape.empty();
    SLUICE_CHECK_IN(ShapeError, "evaluate", scalar || xs[s]->shape == out.shape)
        << op_name(op) << " of shapes " << tuple_str(xs[0]->shape) << " and " << tuple_str(xs[s]->shape);
    stride[s] = scalar ? 0 : 1;
    any_undefined |= !xs[s]->undefined.empty();
  }
  const DType exec_dt = in.is_float() ? dtypes::float64 : in;  // floats: no rounding per op
  auto undef = [&](size_t s, int64_t k) {
    return !xs[s]->undefined.empty() && xs[s]->undefined[size_t(k * stride[s])];
  };
  Scalar64 v[3];
  std::span<const Scalar64> args(v, xs.size());
  for (int64_t k = 0; k < n; k++) {
    for (size_t s = 0; s < xs.size(); s++) v[s] = xs[s]->scalar(k * stride[s]);
    std::optional<Scalar64> r = exec_alu(op, exec_dt, args);
    bool bad = !r;
    SLUICE_CHECK_IN(DTypeError, "evaluate", r || !in.is_float())
        << op_name(op) << " is not defined on " << in.name();
    if (any_undefined) {
      if (op == Op::Where)
        bad |= undef(0, k) || undef(v[0].i ? 1 : 2, k);
      else
        for (size_t s = 0; s < xs.size(); s++) bad |= undef(s, k);
    }
    if (bad) {
      if (out.undefined.empty()) out.undefined.assign(size_t(n), 0);
      out.undefined[size_t(k)] = 1;
    } else {
      store(out, k, *r);
    }
  }
  return out;
}

HostArray cast(const UOp& u, const HostArray& x) {
  const DType to = u.dtype();
  const bool bit = u.op() == Op::Bitcast;
  SLUICE_CHECK_IN(DTypeError, "evaluate", !bit || (!x.dtype.is_bool() && !to.is_bool()))
      << "cannot bitcast " << x.dtype.name() << " to " << to.name() << ": bool has no bit layout";
  HostArray out = empty_like(to, x.shape);
  out.undefined = x.undefined;
  for (int64_t k = 0, n = out.numel(); k < n; k++) {
    std::optional<Scalar64> r =
        bit ? exec_bitcast(x.scalar(k), x.dtype, to) : exec_cast(x.scalar(k), x.dtype, to);
    if (r && x.is_defined(k)) {
      store(out, k, *r);
    } else {
      if (out.undefined.empty()) out.undefined.assign(size_t(n), 0);
      out.undefined[size_t(k)] = 1;
      store(out, k, Scalar64{});
    }
  }
  return out;
}

HostArray constant(const UOp& u) {
  HostArray a = empty_like(u.dtype(), {});
  if (u.dtype().is_float())
    a.f[0] = u.const_value();
  else
    a.i[0] = u.const_int_value();
  return a;
}

class Evaluator {
 public:
  Evaluator(const UOp& root, const BufferReader& read) : root_(root), read_(read) {}

  HostArray run() {
    for (const UOp& u : order()) {
      HostArray v = compute(u);
      SLUICE_ASSERT(v.shape == u.shape() && v.dtype == u.dtype());
      for (const UOp& s : value_srcs(u))
        if (--uses_[s.get()] == 0) values_.erase(s.get());
      values_.emplace(u.get(), std::move(v));
    }
    HostArray out = std::move(values_.at(root_.get()));
    if (std::find(out.undefined.begin(), out.undefined.end(), 1) == out.undefined.end())
      out.undefined.clear();
    return out;
  }

 private:
  // Value sources before users, counting how many users each node has (an edge per source slot).
  std::vector<UOp> order() {
    std::vector<UOp> out;
    std::unordered_map<const UOpNode*, bool> seen;
    std::vector<std::pair<const UOp*, size_t>> stack{{&root_, 0}};
    seen[root_.get()] = true;
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      std::span<const UOp> srcs = value_srcs(*u);
      if (next < srcs.size()) {
        const UOp* s = &srcs[next++];
        uses_[s->get()]++;
        if (!seen[s->get()]) seen[s->get()] = true, stack.push_back({s, 0});
      } else {
        out.push_back(*u);
        stack.pop_back();
      }
    }
    return out;
  }

  const HostArray& get(const UOp& s) const { return values_.at(s.get()); }
  // The value of a node's only source: moved out when this is its last use, else copied.
  HostArray take(const UOp& s) {
    if (uses_.at(s.get()) == 1) return std::move(values_.at(s.get()));
    return get(s);
  }

  HostArray compute(const UOp& u) {
    const Op op = u.op();
    if (is_alu(op)) {
      std::vector<const HostArray*> xs;
      for (const UOp& s : u.src()) xs.push_back(&get(s));
      return alu(u, xs);
    }
    if (is_movement(op) && op != Op::Reshape) return movement(u, get(u.src(0)));
    switch (op) {
      case Op::Buffer: return buffer(u);
      case Op::Const: return constant(u);
      case Op::Reshape:
      case Op::Contiguous:
      case Op::Detach:
      case Op::Copy:
      case Op::Assign: {
        HostArray v = take(value_srcs(u)[0]);
        v.shape = u.shape();
        return v;
      }
      case Op::Cast:
      case Op::Bitcast: return cast(u, get(u.src(0)));
      case Op::ReduceAxis: return reduce(u, get(u.src(0)));
      default:
        SLUICE_FAIL(ValueError, "evaluate") << "cannot evaluate " << op_name(op) << ": not a tensor-level op";
    }
  }

  HostArray buffer(const UOp& u) {
    HostArray v = read_(u);
    const size_t n = size_t(u.numel()), got = v.dtype.is_float() ? v.f.size() : v.i.size();
    SLUICE_CHECK_IN(ValueError, "evaluate", v.dtype == u.dtype() && v.numel() == u.numel() && got == n)
        << "the reader gave " << got << " values of " << v.dtype.name() << " for a BUFFER of " << n << " "
        << u.dtype().name();
    SLUICE_CHECK_IN(ValueError, "evaluate", v.undefined.empty() || v.undefined.size() == n)
        << "the reader gave " << v.undefined.size() << " undefined flags for " << n << " values";
    v.shape = u.shape();
    return v;
  }

  const UOp& root_;
  const BufferReader& read_;
  std::unordered_map<const UOpNode*, int> uses_;  // users not yet computed
  std::unordered_map<const UOpNode*, HostArray> values_;
};

}  // namespace

HostArray evaluate(const UOp& root, const BufferReader& read) {
  SLUICE_CHECK_AS(ValueError, bool(root)) << "no graph to evaluate";
  return Evaluator(root, read).run();
}

}  // namespace sluice::eval
