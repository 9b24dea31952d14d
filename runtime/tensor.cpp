// Tensor: the handle, its tags and queries, realize points, and the helpers every op family shares
// (axes, broadcasting, promotion, constants).
#include "runtime/tensor.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <ostream>
#include <sstream>

#include "runtime/device.h"
#include "runtime/realize.h"
#include "runtime/tensor_internal.h"

namespace sluice {

using detail::OpScope;

// ---------------------------------------------------------------- tags

namespace detail {
namespace {
thread_local const char* current_op = nullptr;

// Constants and buffers seen through movement ops are data, not computation: constants are shared by many
// ops, and a buffer in its tensor's shape is what from() builds and what a realized tensor becomes.
bool is_data(const UOp& u) {
  const UOp* x = &u;
  while (is_movement(x->op())) x = &x->src(0);
  return x->op() == Op::Const || x->op() == Op::Buffer;
}

// Tags every untagged node below `root` that is not data. Nodes built earlier by another tensor op are
// already tagged, so the walk stops there and each node is visited once over its lifetime.
void tag_new_nodes(const UOp& root, const char* name) {
  if (root.tag() || root.num_src() == 0 || is_data(root)) return;  // most views and re-wrapped nodes
  // Every tensor op builds a Tensor, so the walk's stack is kept per thread rather than allocated per call
  // (the walk calls nothing that could walk again).
  thread_local std::vector<const UOp*> stack;
  stack.assign(1, &root);
  while (!stack.empty()) {
    const UOp& u = *stack.back();
    stack.pop_back();
    if (u.tag() || u.num_src() == 0 || is_data(u)) continue;
    u.tagged(name);
    for (const UOp& s : u.src()) stack.push_back(&s);
  }
}
}  // namespace

OpScope::OpScope(const char* name) : outer_(current_op == nullptr) {
  if (outer_) current_op = name;
}
OpScope::~OpScope() {
  if (outer_) current_op = nullptr;
}
const char* OpScope::current() { return current_op; }
}  // namespace detail

Tensor::Tensor(UOp uop, const std::string& device) : uop_(std::move(uop)), device_(canonical_device(device)) {
  if (const char* name = OpScope::current()) detail::tag_new_nodes(uop_, name);
  if (NoGrad::active()) uop_ = detail::without_grad(uop_);
}

// ---------------------------------------------------------------- queries

DType Number::default_dtype() const {
  return kind == Kind::Bool ? dtypes::bool_ : kind == Kind::Int ? dtypes::int32 : dtypes::float32;
}

int64_t Tensor::shape(int64_t axis) const {
  return shape()[size_t(detail::resolve_axis("shape", axis, ndim()))];
}

std::string Tensor::str() const {
  std::ostringstream os;
  os << "Tensor(shape=" << tuple_str(shape()) << ", dtype=" << dtype().name() << ", device=" << device_
     << ")";
  return os.str();
}

// ---------------------------------------------------------------- state and realize points

Tensor& Tensor::assign(const Tensor& value) {
  OpScope scope("assign");
  SLUICE_CHECK_IN(DeviceError, "assign", value.device() == device_)
      << "cannot assign a tensor on " << value.device() << " to one on " << device_;
  SLUICE_CHECK_IN(ShapeError, "assign", value.shape() == shape())
      << "cannot assign " << tuple_str(value.shape()) << " to " << tuple_str(shape());
  SLUICE_CHECK_IN(DTypeError, "assign", value.dtype() == dtype())
      << "cannot assign " << value.dtype().name() << " to " << dtype().name();
  set_uop(Tensor(uop_.assign(value.uop_), device_).uop_);
  return *this;
}
Tensor Tensor::write(const Tensor& value) const {
  OpScope scope("write");
  SLUICE_CHECK_IN(DeviceError, "write", value.device() == device_)
      << "cannot write a tensor on " << value.device() << " to one on " << device_;
  SLUICE_CHECK_IN(ShapeError, "write", value.shape() == shape())
      << "cannot write " << tuple_str(value.shape()) << " to " << tuple_str(shape());
  return Tensor(uop_.assign(value.cast(dtype()).uop_), device_);
}
Tensor Tensor::contiguous() const {
  OpScope scope("contiguous");
  return Tensor(uop_.contiguous(), device_);
}
Tensor Tensor::detach() const {
  OpScope scope("detach");
  return Tensor(uop_.detach(), device_);
}
Tensor Tensor::to(const std::string& device) const {
  OpScope scope("to");
  std::string d = canonical_device(device);
  return d == device_ ? *this : Tensor(uop_.copy_to(d), d);
}
Tensor Tensor::cast(DType dt) const {
  OpScope scope("cast");
  return Tensor(uop_.cast(dt), device_);
}
Tensor Tensor::bitcast(DType dt) const {
  OpScope scope("bitcast");
  return Tensor(uop_.bitcast(dt), device_);
}

// ---------------------------------------------------------------- realize

Tensor& Tensor::realize() {
  set_uop(realizer(device_).realize({*this}).at(0));
  return *this;
}

void Tensor::realize_all(const std::vector<Tensor*>& tensors) {
  if (tensors.empty()) return;
  std::vector<Tensor> values;
  for (const Tensor* t : tensors) {
    SLUICE_CHECK_IN(DeviceError, "realize_all", t->device_ == tensors[0]->device_)
        << "every tensor must be on one device: " << tensors[0]->device_ << " and " << t->device_;
    values.push_back(*t);
  }
  const std::vector<UOp> done = realizer(tensors[0]->device_).realize(values);
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i]->set_uop(done[i]);
}

void Tensor::check_item() const {
  SLUICE_CHECK_IN(ValueError, "item", numel() == 1)
      << "tensor of shape " << tuple_str(shape()) << " has " << numel() << " elements, item() needs 1";
}

UOp Tensor::dense_buffer() const {
  const UOp* u = &uop_;
  while (u->op() == Op::Reshape) u = &u->src(0);
  return u->op() == Op::Buffer && u->arg_as<int64_t>() == numel() ? *u : UOp();
}

void Tensor::check_read(const char* fn, DType want, const char* type_name) const {
  const DType dt = dtype();
  const bool half_as_float = want == dtypes::float32 && (dt == dtypes::float16 || dt == dtypes::bfloat16);
  SLUICE_CHECK_IN(DTypeError, fn, dt == want || half_as_float)
      << "tensor is " << dt.name() << ", asked for " << type_name;
}

void Tensor::read_into(const char* fn, DType want, void* out) {
  const DType dt = dtype();
  const bool half_as_float = want == dtypes::float32 && (dt == dtypes::float16 || dt == dtypes::bfloat16);
  realize();
  const std::vector<std::byte> bytes = realizer(device_).read(*this, fn);
  if (!half_as_float) {
    if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
    return;
  }
  auto* f = static_cast<float*>(out);
  for (int64_t k = 0; k < numel(); k++) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * k, 2);
    f[k] = dt == dtypes::float16 ? half_bits_to_float(bits) : bf16_bits_to_float(bits);
  }
}

// ---------------------------------------------------------------- scheduling

std::vector<ScheduleItem> Tensor::schedule() const { return schedule_all({*this}); }
std::vector<ScheduleItem> Tensor::schedule_all(const std::vector<Tensor>& tensors) {
  std::vector<UOp> outputs;
  for (const Tensor& t : tensors) outputs.push_back(t.uop_);
  return sluice::schedule(outputs).items;
}
Tensor Tensor::kernelize() const { return Tensor(sluice::kernelize({uop_}).at(0), device_); }

// ---------------------------------------------------------------- shared helpers

namespace detail {

void check_shape(const char* op, const Shape& shape) {
  SLUICE_CHECK_IN(ShapeError, op, std::all_of(shape.begin(), shape.end(), [](int64_t s) { return s >= 0; }))
      << "negative size in shape " << tuple_str(shape);
  // Elements (and their bytes, up to 8 each) must fit int64: kernels and allocators count in it.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
  int64_t n = 1;
  for (int64_t s : shape)
    SLUICE_CHECK_IN(ShapeError, op, !__builtin_mul_overflow(n, s, &n) && n <= (int64_t(1) << 60))
        << "shape " << tuple_str(shape) << " has more than 2^60 elements";
}

int64_t resolve_axis(const char* op, int64_t axis, int64_t ndim) {
  SLUICE_CHECK_IN(ShapeError, op, axis >= -ndim && axis < ndim)
      << "axis " << axis << " is out of range for " << ndim << " dimensions";
  return axis < 0 ? axis + ndim : axis;
}

Shape resolve_axes(const char* op, const Shape& axes, int64_t ndim) {
  Shape out;
  if (axes.empty())
    for (int64_t a = 0; a < ndim; a++) out.push_back(a);
  for (int64_t a : axes) out.push_back(resolve_axis(op, a, ndim));
  std::sort(out.begin(), out.end());
  SLUICE_CHECK_IN(ShapeError, op, std::adjacent_find(out.begin(), out.end()) == out.end())
      << "repeated axis in " << tuple_str(axes);
  return out;
}

Shape broadcast_shape(const char* op, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; i++) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())],
            y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    SLUICE_CHECK_IN(ShapeError, op, x == y || x == 1 || y == 1)
        << "cannot broadcast " << tuple_str(a) << " and " << tuple_str(b);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Tensor broadcast_to(const char* op, const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  const Shape& s = t.shape();
  SLUICE_CHECK_IN(ShapeError, op, s.size() <= shape.size())
      << "cannot broadcast " << tuple_str(s) << " to " << tuple_str(shape);
  Shape padded(shape.size() - s.size(), 1);
  padded.insert(padded.end(), s.begin(), s.end());
  for (size_t i = 0; i < shape.size(); i++)
    SLUICE_CHECK_IN(ShapeError, op, padded[i] == shape[i] || padded[i] == 1)
        << "cannot broadcast " << tuple_str(s) << " to " << tuple_str(shape);
  return Tensor(t.uop().reshape(padded).expand(shape), t.device());
}

std::pair<Tensor, Tensor> broadcasted(const char* op, const Tensor& x, const Tensor& y, bool match_dtype) {
  SLUICE_CHECK_IN(DeviceError, op, x.device() == y.device())
      << "operands are on different devices: " << x.device() << " and " << y.device();
  Tensor a = x, b = y;
  if (match_dtype && a.dtype() != b.dtype()) {
    DType dt = least_upper_dtype({a.dtype(), b.dtype()});
    a = a.cast(dt), b = b.cast(dt);
  }
  Shape s = broadcast_shape(op, a.shape(), b.shape());
  return {broadcast_to(op, a, s), broadcast_to(op, b, s)};
}

Tensor const_tensor(const std::string& device, DType dt, Number v, const Shape& shape) {
  UOp c = dt.is_float() || v.kind == Number::Kind::Float ? UOp::const_on(device, dt, v.as_double())
                                                         : UOp::const_int_on(device, dt, v.i);
  if (!shape.empty()) c = c.reshape(Shape(shape.size(), 1)).expand(shape);
  return Tensor(c, device);
}

Tensor number_tensor(const Tensor& like, Number v) {
  DType t = like.dtype();
  bool keep = t.is_float() || (t.is_int() && v.kind == Number::Kind::Int);
  return const_tensor(like.device(), keep ? t : v.default_dtype(), v);
}

Tensor alu(Op op, const Tensor& a) { return Tensor(a.uop().alu(op), a.device()); }
Tensor alu(Op op, const Tensor& a, const Tensor& b) { return Tensor(a.uop().alu(op, b.uop()), a.device()); }
Tensor alu(Op op, const Tensor& a, const Tensor& b, const Tensor& c) {
  return Tensor(a.uop().alu(op, b.uop(), c.uop()), a.device());
}

// A large reduction into few outputs runs as two kernels, as the reference design splits it: one reduced
// axis of size n becomes (d, n / d), the n / d part reduces into d partials per output, then the partials
// reduce. As one kernel each output is one work-item's loop over all n: one core of the CPU, one
// work-group of a GPU, and past llvmpipe's loop limit on Vulkan for rows of 2^24 elements.
Tensor reduce(const Tensor& t, Op op, const Shape& axes) {
  if (axes.empty()) return t;
  constexpr int64_t kSplitFrom = 32768, kMaxPartials = int64_t(1) << 22;  // reduced size; partials in all
  int64_t reduced = 1;
  for (int64_t a : axes) reduced *= t.shape()[size_t(a)];
  const int64_t outputs = reduced ? t.numel() / reduced : 0;
  if (reduced >= kSplitFrom && outputs > 0)
    for (int64_t a : axes)
      for (int64_t d = std::min<int64_t>(256, kMaxPartials / outputs); d >= 8; --d) {
        const int64_t n = t.shape()[size_t(a)];
        if (n % d != 0) continue;
        Shape split = t.shape();
        split[size_t(a)] = n / d;
        split.insert(split.begin() + a, d);
        Shape inner;  // the axes in the split shape: `a` is now its n / d part
        for (int64_t b : axes) inner.push_back(b < a ? b : b + 1);
        Tensor partials = Tensor(t.uop().reshape(split).reduce(op, inner), t.device()).contiguous();
        Shape kept = t.shape();
        for (int64_t b : axes) kept[size_t(b)] = 1;
        return Tensor(partials.uop().reduce(op, {a}).reshape(kept), t.device());
      }
  return Tensor(t.uop().reduce(op, axes), t.device());
}

Tensor drop_axes(const Tensor& t, const Shape& axes) {
  Shape s;
  for (int64_t i = 0; i < t.ndim(); i++)
    if (std::find(axes.begin(), axes.end(), i) == axes.end()) s.push_back(t.shape()[size_t(i)]);
  return Tensor(t.uop().reshape(s), t.device());
}

Tensor inverse(const Tensor& t) {
  return t.dtype().is_float() ? t.neg() : t.dtype().is_int() ? t.bitwise_not() : t.logical_not();
}

double reduce_identity(Op op, DType dt) {
  if (op == Op::Add) return 0;
  if (op == Op::Mul) return 1;
  return dt.is_float() ? -std::numeric_limits<double>::infinity() : dt.min();
}

}  // namespace detail
}  // namespace sluice
