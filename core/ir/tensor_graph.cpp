// The tensor-level graph (DESIGN.md §2, "Tensor graph"): buffers, device constants, movement ops and
// reductions as UOps, with their shapes inferred from sources and args.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "base/error.h"
#include "core/ir/shape_tracker.h"
#include "core/ir/uop.h"

namespace sluice {

// ---------------------------------------------------------------- identities of buffers

namespace {
std::atomic<int64_t> next_identity{1};
std::mutex payload_mu;  // payloads are set rarely (once per buffer): one lock for all is enough
}  // namespace

Identity::Identity() : id_(next_identity.fetch_add(1, std::memory_order_relaxed)) {}
std::shared_ptr<void> Identity::payload() const {
  std::lock_guard lock(payload_mu);
  return payload_;
}
void Identity::set_payload(std::shared_ptr<void> p) const {
  std::lock_guard lock(payload_mu);
  payload_ = std::move(p);
}

// ---------------------------------------------------------------- shapes

namespace {
std::vector<int64_t> flatten(const Bounds& b) {
  std::vector<int64_t> out;
  out.reserve(2 * b.size());
  for (auto& [x, y] : b) out.push_back(x), out.push_back(y);
  return out;
}

// Whether u's shape is its first source's shape transformed by u's arg (or kept): shape inference walks
// down these first sources.
bool derives_from_src0(Op op) {
  return is_movement(op) || is_alu(op) || op == Op::Cast || op == Op::Bitcast || op == Op::ReduceAxis ||
         op == Op::Contiguous || op == Op::Detach || op == Op::Copy || op == Op::Assign;
}

Shape infer(const UOp& u, const Shape* in) {
  const Arg& a = u.arg();
  switch (u.op()) {
    case Op::Buffer: return {std::get<int64_t>(a)};
    case Op::Const:
    case Op::DefineVar:
    case Op::Bind: return {};
    case Op::View:
      return static_cast<const ShapeTracker&>(*std::get<std::shared_ptr<const ArgObject>>(a)).shape();
    case Op::Reshape:
    case Op::Expand: return std::get<std::vector<int64_t>>(a);
    // Sized up front and read from the flat (begin, end) args in place: every node's shape is inferred
    // once, and allocating is most of what that costs.
    case Op::Permute: {
      const auto& axes = std::get<std::vector<int64_t>>(a);
      Shape s(axes.size());
      for (size_t i = 0; i < axes.size(); i++) s[i] = (*in)[size_t(axes[i])];
      return s;
    }
    case Op::Pad: {
      Shape s = *in;
      const auto& p = std::get<std::vector<int64_t>>(a);
      for (size_t i = 0; i < s.size(); i++) s[i] += p[2 * i] + p[2 * i + 1];
      return s;
    }
    case Op::Shrink: {
      const auto& p = std::get<std::vector<int64_t>>(a);
      Shape s(p.size() / 2);
      for (size_t i = 0; i < s.size(); i++) s[i] = p[2 * i + 1] - p[2 * i];
      return s;
    }
    case Op::ReduceAxis: {
      Shape s = *in;
      for (int64_t ax : std::get<ReduceArg>(a).axes) s[size_t(ax)] = 1;
      return s;
    }
    default:
      if (derives_from_src0(u.op())) return *in;
      SLUICE_FAIL(ShapeError, "shape") << op_name(u.op()) << " has no shape (it is not a tensor-level op)";
  }
}

bool ready(const UOp& u) { return u.get()->shape.load(std::memory_order_acquire) != nullptr; }
const Shape& cached(const UOp& u) { return *u.get()->shape.load(std::memory_order_acquire); }
void store(const UOp& u, Shape s) {
  auto* fresh = new Shape(std::move(s));
  const Shape* expected = nullptr;
  if (!u.get()->shape.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) delete fresh;
}

// Whether u's shape can be inferred now: it needs no source's shape, or its first source's is cached.
bool inferable(const UOp& u) { return !derives_from_src0(u.op()) || u.num_src() == 0 || ready(u.src(0)); }
void fill(const UOp& u) {
  const Shape* in = derives_from_src0(u.op()) && u.num_src() > 0 ? &cached(u.src(0)) : nullptr;
  if (derives_from_src0(u.op()) && !in)
    SLUICE_FAIL(ShapeError, "shape") << op_name(u.op()) << " without a source has no shape";
  store(u, infer(u, in));
}
}  // namespace

const Shape& UOp::shape() const {
  if (ready(*this)) return cached(*this);
  // A node is nearly always built on sources whose shapes are known: then there is no chain to collect.
  if (inferable(*this)) {
    fill(*this);
    return cached(*this);
  }
  // Walk down first sources to a node whose shape is known (or needs no source), then fill upward; a loop,
  // so million-op chains do not recurse.
  std::vector<const UOp*> chain{this};
  while (!inferable(*chain.back())) chain.push_back(&chain.back()->src(0));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) fill(**it);
  return cached(*this);
}

// ---------------------------------------------------------------- buffers, devices, constants

UOp UOp::device_node(const std::string& device) { return make(Op::Device, dtypes::void_, {}, device); }

UOp UOp::new_buffer(const std::string& device, DType dt, int64_t size) {
  SLUICE_CHECK_AS(ShapeError, size >= 0) << "negative buffer size " << size;
  SLUICE_CHECK_AS(DTypeError, !dt.is_void() && !dt.is_ptr() && dt.count == 1)
      << "a buffer holds scalars, not " << dt.name();
  UOp unique =
      make(Op::Unique, dtypes::void_, {}, std::shared_ptr<const ArgObject>(std::make_shared<Identity>()));
  return make(Op::Buffer, dt, {device_node(device), unique}, size);
}

UOp UOp::const_on(const std::string& device, DType dt, double v) {
  UOp c = const_(dt, v);
  return make(Op::Const, dt, {device_node(device)}, c.arg());
}
UOp UOp::const_int_on(const std::string& device, DType dt, int64_t v) {
  UOp c = const_int(dt, v);
  return make(Op::Const, dt, {device_node(device)}, c.arg());
}

std::string UOp::device() const {
  for (const UOp& s : src())
    if (s.op() == Op::Device) return s.arg_as<std::string>();
  return "";
}

const Identity& UOp::buffer_identity() const {
  SLUICE_CHECK_AS(ValueError, op() == Op::Buffer) << "expected a BUFFER, got " << op_name(op());
  return static_cast<const Identity&>(*src(1).arg_as<std::shared_ptr<const ArgObject>>());
}

const char* UOp::tag() const { return n_->tag.load(std::memory_order_relaxed); }
const UOp& UOp::tagged(const char* name) const {
  const char* expected = nullptr;
  n_->tag.compare_exchange_strong(expected, name, std::memory_order_relaxed);
  return *this;
}

// ---------------------------------------------------------------- movement, reduce, realize points

UOp UOp::reshape(const Shape& new_shape) const {
  check_reshape(shape(), new_shape);
  return new_shape == shape() ? *this : make(Op::Reshape, dtype(), {*this}, new_shape);
}
UOp UOp::permute(const Shape& axes) const {
  check_permute(shape(), axes);
  bool identity = true;
  for (size_t i = 0; i < axes.size(); i++) identity &= axes[i] == int64_t(i);
  return identity ? *this : make(Op::Permute, dtype(), {*this}, axes);
}
UOp UOp::expand(const Shape& new_shape) const {
  check_expand(shape(), new_shape);
  return new_shape == shape() ? *this : make(Op::Expand, dtype(), {*this}, new_shape);
}
UOp UOp::pad(const Bounds& pads) const {
  check_pad(shape(), pads);
  bool none = std::all_of(pads.begin(), pads.end(), [](auto& p) { return p.first == 0 && p.second == 0; });
  return none ? *this : make(Op::Pad, dtype(), {*this}, flatten(pads));
}
UOp UOp::shrink(const Bounds& bounds) const {
  check_shrink(shape(), bounds);
  bool all = true;
  for (size_t i = 0; i < bounds.size(); i++) all &= bounds[i].first == 0 && bounds[i].second == shape()[i];
  return all ? *this : make(Op::Shrink, dtype(), {*this}, flatten(bounds));
}
UOp UOp::flip(const Shape& axes) const {
  check_flip(shape(), axes);
  if (axes.empty()) return *this;
  Shape sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  return make(Op::Flip, dtype(), {*this}, sorted);
}
UOp UOp::reduce(Op op, const Shape& axes) const {
  SLUICE_CHECK_AS(ValueError, op == Op::Add || op == Op::Mul || op == Op::Max)
      << "cannot reduce with " << op_name(op) << " (ADD, MUL or MAX)";
  const Shape& s = shape();
  std::vector<bool> seen(s.size());
  for (int64_t a : axes) {
    SLUICE_CHECK_AS(ShapeError, a >= 0 && a < int64_t(s.size()) && !seen[size_t(a)])
        << "bad axes " << tuple_str(axes) << " for shape " << tuple_str(s);
    seen[size_t(a)] = true;
  }
  Shape sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  return make(Op::ReduceAxis, dtype(), {*this}, ReduceArg{op, sorted});
}
UOp UOp::contiguous() const { return make(Op::Contiguous, dtype(), {*this}); }
UOp UOp::detach() const { return make(Op::Detach, dtype(), {*this}); }
UOp UOp::copy_to(const std::string& device) const {
  return make(Op::Copy, dtype(), {*this, device_node(device)});
}
UOp UOp::assign(const UOp& value) const {
  SLUICE_CHECK_AS(ShapeError, shape() == value.shape())
      << "cannot assign " << tuple_str(value.shape()) << " to " << tuple_str(shape());
  SLUICE_CHECK_AS(DTypeError, dtype() == value.dtype())
      << "cannot assign " << value.dtype().name() << " to " << dtype().name();
  return make(Op::Assign, dtype(), {*this, value});
}

}  // namespace sluice
