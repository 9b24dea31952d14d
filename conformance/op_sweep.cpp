// The op sweep's tables. Each table row is an op; the generator crosses it with the dtypes of its kinds
// and the shapes of its family. Inputs are deterministic and exactly representable in every dtype they
// are made in, so differences come from the device, not from the data.
#include "conformance/op_cases.h"

#include <cmath>
#include <cstdint>
#include <span>

namespace sluice::conformance {
namespace {

// ------------------------------------------------------------------ inputs
enum class Dom : uint8_t { Any, Pos, Unit, Small, NonZero };

uint32_t hash(const std::string& s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ uint8_t(c)) * 16777619u;
  return h;
}

// n values in the domain, on a grid of 1/64 (floats) or integers, so float16/bfloat16 hold them exactly.
std::vector<double> values(int64_t n, uint32_t seed, Dom dom, DType dt) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 12345;
  const bool fl = dt.is_float(), uns = dt.is_unsigned() || dt.is_bool();
  for (double& d : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    const double u = double(x % 4096) / 4096.0;  // [0, 1)
    switch (dom) {
      case Dom::Any:
        d = fl ? std::round((u * 6 - 3) * 16) / 16 : uns ? std::floor(u * 100) : std::floor(u * 101) - 50;
        break;
      case Dom::Pos: d = fl ? 0.125 + std::round(u * 4 * 16) / 16 : 1 + std::floor(u * 50); break;
      case Dom::Unit:
        d = fl ? std::round((u * 1.8 - 0.9) * 32) / 32 : uns ? std::floor(u * 2) : std::floor(u * 3) - 1;
        break;
      case Dom::Small: d = std::floor(u * 8); break;
      case Dom::NonZero:
        d = (1 + std::floor(u * 8)) * ((x >> 16) & 1 && !uns ? -1 : 1) * (fl ? 0.5 : 1);
        break;
    }
    if (dt.is_bool()) d = d != 0 && (x >> 7) & 1;
  }
  return v;
}

Shape parse_shape(const std::string& s) {
  Shape out;
  if (s.empty() || s == "scalar") return out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t x = s.find('x', at);
    out.push_back(std::stoll(s.substr(at, x == std::string::npos ? std::string::npos : x - at)));
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return out;
}

template <class T>
Tensor make_as(const std::vector<double>& v, const Shape& shape, const std::string& dev) {
  std::vector<T> t;
  for (double d : v) t.push_back(T(d));
  return Tensor::from(t, shape, dev);
}

Tensor make(const Shape& shape, DType dt, uint32_t seed, Dom dom, const std::string& dev) {
  std::vector<double> v = values(prod(shape), seed, dom, dt);
  switch (dt.scalar) {
    case Scalar::Bool: {
      std::vector<bool> b;
      for (double d : v) b.push_back(d != 0);
      return Tensor::from(b, shape, dev);
    }
    case Scalar::Int8: return make_as<int8_t>(v, shape, dev);
    case Scalar::UInt8: return make_as<uint8_t>(v, shape, dev);
    case Scalar::Int16: return make_as<int16_t>(v, shape, dev);
    case Scalar::UInt16: return make_as<uint16_t>(v, shape, dev);
    case Scalar::Int32: return make_as<int32_t>(v, shape, dev);
    case Scalar::UInt32: return make_as<uint32_t>(v, shape, dev);
    case Scalar::Int64: return make_as<int64_t>(v, shape, dev);
    case Scalar::UInt64: return make_as<uint64_t>(v, shape, dev);
    case Scalar::Float64: return make_as<double>(v, shape, dev);
    default: {
      std::vector<float> f(v.begin(), v.end());
      return Tensor::from(std::span<const float>(f), shape, dt, dev);
    }
  }
}

// An input described by a shape tag: "7x13", "scalar", "7x13.T", "5x12.step2", "31.flip".
Tensor input(const std::string& tag, DType dt, uint32_t seed, Dom dom, const std::string& dev) {
  const size_t dot = tag.find('.');
  const std::string base = tag.substr(0, dot), view = dot == std::string::npos ? "" : tag.substr(dot + 1);
  Shape s = parse_shape(base);
  if (view == "T") {  // made transposed, viewed back: strides are not row-major
    std::swap(s[s.size() - 2], s[s.size() - 1]);
    return make(s, dt, seed, dom, dev).transpose(-1, -2);
  }
  if (view == "step2") {  // every other element of a twice-longer last axis
    s.back() *= 2;
    std::vector<Slice> sl(s.size() - 1, Slice{});
    sl.push_back(Slice{0, {}, 2});
    return make(s, dt, seed, dom, dev).slice(sl);
  }
  if (view == "flip") return make(s, dt, seed, dom, dev).flip({-1});
  return make(s, dt, seed, dom, dev);
}

// ------------------------------------------------------------------ dtypes and tolerances
constexpr uint8_t F = 1, I = 2, B = 4;  // kinds an op accepts
const std::vector<DType> kFloats = {dtypes::float32, dtypes::float64, dtypes::float16, dtypes::bfloat16};
const std::vector<DType> kInts = {dtypes::int32, dtypes::int8, dtypes::uint8, dtypes::int64};

std::vector<DType> dtypes_of(uint8_t kinds) {
  std::vector<DType> out;
  if (kinds & F) out.insert(out.end(), kFloats.begin(), kFloats.end());
  if (kinds & I) out.insert(out.end(), kInts.begin(), kInts.end());
  if (kinds & B) out.push_back(dtypes::bool_);
  return out;
}

// Tolerance of one rounding in dt, times `depth` for ops that chain several roundings or call libm.
std::pair<double, double> tolerance(DType dt, double depth) {
  switch (dt.scalar) {
    case Scalar::Float64: return {1e-13 * depth, 1e-13 * depth};
    case Scalar::Float16: return {2e-3 * std::min(depth, 8.0), 2e-3 * std::min(depth, 8.0)};
    case Scalar::BFloat16: return {1.6e-2 * std::min(depth, 4.0), 1.6e-2 * std::min(depth, 4.0)};
    default: return {2e-6 * depth, 1e-6 * depth};  // float32, and floats computed from integers
  }
}

// The dtype as case names spell it (DType::name() gives C spellings: "float", "half").
std::string dname(DType dt) {
  static const char* const names[] = {"void",    "bool",     "int8",    "uint8",  "int16",
                                      "uint16",  "int32",    "uint32",  "int64",  "uint64",
                                      "float16", "bfloat16", "float32", "float64"};
  const size_t i = size_t(dt.scalar);
  return i < std::size(names) ? names[i] : dt.name();
}

struct Builder {
  std::vector<OpCase> cases;
  void add(const std::string& op, const std::string& group, DType dt, const std::string& shape,
           std::function<Tensor(const std::string&)> f, double depth, bool quick) {
    auto [rt, at] = tolerance(dt, depth);
    cases.push_back({"ops/" + op + "/" + dname(dt) + "/" + shape, group, std::move(f), rt, at, quick, ""});
  }
};

// ------------------------------------------------------------------ unary
using Fn1 = Tensor (*)(const Tensor&);
struct Unary {
  const char* name;
  uint8_t kinds;
  Dom dom;
  double depth;  // tolerance multiplier
  Fn1 f;
};
const Unary kUnary[] = {
    {"neg", F | I, Dom::Any, 1, [](const Tensor& x) { return x.neg(); }},
    {"abs", F | I, Dom::Any, 1, [](const Tensor& x) { return x.abs(); }},
    {"sign", F | I, Dom::Any, 1, [](const Tensor& x) { return x.sign(); }},
    {"square", F | I, Dom::Any, 1, [](const Tensor& x) { return x.square(); }},
    {"relu", F | I, Dom::Any, 1, [](const Tensor& x) { return x.relu(); }},
    {"reciprocal", F, Dom::Pos, 2, [](const Tensor& x) { return x.reciprocal(); }},
    {"sqrt", F, Dom::Pos, 2, [](const Tensor& x) { return x.sqrt(); }},
    {"rsqrt", F, Dom::Pos, 4, [](const Tensor& x) { return x.rsqrt(); }},
    {"exp", F, Dom::Any, 8, [](const Tensor& x) { return x.exp(); }},
    {"exp2", F, Dom::Any, 8, [](const Tensor& x) { return x.exp2(); }},
    {"log", F, Dom::Pos, 8, [](const Tensor& x) { return x.log(); }},
    {"log2", F, Dom::Pos, 8, [](const Tensor& x) { return x.log2(); }},
    {"sin", F, Dom::Any, 8, [](const Tensor& x) { return x.sin(); }},
    {"cos", F, Dom::Any, 8, [](const Tensor& x) { return x.cos(); }},
    {"tan", F, Dom::Unit, 8, [](const Tensor& x) { return x.tan(); }},
    {"trunc", F, Dom::Any, 1, [](const Tensor& x) { return x.mul(1.5).trunc(); }},
    {"floor", F, Dom::Any, 1, [](const Tensor& x) { return x.mul(1.5).floor(); }},
    {"ceil", F, Dom::Any, 1, [](const Tensor& x) { return x.mul(1.5).ceil(); }},
    {"round", F, Dom::Any, 1, [](const Tensor& x) { return x.mul(1.5).round(); }},
    {"isnan", F, Dom::Any, 1, [](const Tensor& x) { return x.div(x.mul(0)).isnan(); }},
    {"isinf", F, Dom::Any, 1, [](const Tensor& x) { return x.div(x.round()).isinf(); }},
    {"relu6", F, Dom::Any, 1, [](const Tensor& x) { return x.mul(3).relu6(); }},
    {"leaky_relu", F, Dom::Any, 2, [](const Tensor& x) { return x.leaky_relu(); }},
    {"elu", F, Dom::Any, 8, [](const Tensor& x) { return x.elu(); }},
    {"celu", F, Dom::Any, 8, [](const Tensor& x) { return x.celu(0.5); }},
    {"selu", F, Dom::Any, 8, [](const Tensor& x) { return x.selu(); }},
    {"gelu", F, Dom::Any, 16, [](const Tensor& x) { return x.gelu(); }},
    {"quick_gelu", F, Dom::Any, 16, [](const Tensor& x) { return x.quick_gelu(); }},
    {"silu", F, Dom::Any, 8, [](const Tensor& x) { return x.silu(); }},
    {"mish", F, Dom::Any, 32, [](const Tensor& x) { return x.mish(); }},
    {"softplus", F, Dom::Any, 8, [](const Tensor& x) { return x.softplus(); }},
    {"softsign", F, Dom::Any, 4, [](const Tensor& x) { return x.softsign(); }},
    {"sigmoid", F, Dom::Any, 8, [](const Tensor& x) { return x.sigmoid(); }},
    {"logsigmoid", F, Dom::Any, 16, [](const Tensor& x) { return x.logsigmoid(); }},
    {"hardsigmoid", F, Dom::Any, 2, [](const Tensor& x) { return x.hardsigmoid(); }},
    {"hardswish", F, Dom::Any, 4, [](const Tensor& x) { return x.hardswish(); }},
    {"hardtanh", F, Dom::Any, 1, [](const Tensor& x) { return x.hardtanh(); }},
    {"tanh", F, Dom::Any, 8, [](const Tensor& x) { return x.tanh(); }},
    {"erf", F, Dom::Any, 16, [](const Tensor& x) { return x.erf(); }},
    {"logical_not", F | I | B, Dom::Unit, 1, [](const Tensor& x) { return x.logical_not(); }},
    {"bitwise_not", I | B, Dom::Any, 1, [](const Tensor& x) { return x.bitwise_not(); }},
};
// Odd, prime, size-0 and size-1 dims, rank 0..3, and three non-contiguous views.
const char* const kUnaryShapes[] = {"scalar", "1",     "0",      "7",          "7x13",
                                    "2x0x3",  "3x1x5", "7x13.T", "5x12.step2", "31.flip"};
constexpr const char* kQuickShape = "7x13.T";

void unary(Builder& b) {
  for (const Unary& u : kUnary)
    for (DType dt : dtypes_of(u.kinds))
      for (const char* shape : kUnaryShapes) {
        const std::string s = shape;
        const Fn1 f = u.f;
        const Dom dom = u.dom;
        const uint32_t seed = hash(u.name);
        const bool quick = dt == dtypes_of(u.kinds).front() && s == kQuickShape;
        b.add(
            u.name, "ops/unary", dt, s, [=](const std::string& d) { return f(input(s, dt, seed, dom, d)); },
            u.depth, quick);
      }
}

// ------------------------------------------------------------------ binary
using Fn2 = Tensor (*)(const Tensor&, const Tensor&);
struct Binary {
  const char* name;
  const char* group;
  uint8_t kinds;
  Dom lhs, rhs;
  double depth;
  Fn2 f;
};
const Binary kBinary[] = {
    {"add", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x + y; }},
    {"sub", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x - y; }},
    {"mul", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x * y; }},
    {"div", "ops/binary", F | I, Dom::Any, Dom::NonZero, 2,
     [](const Tensor& x, const Tensor& y) { return x / y; }},
    {"div_trunc", "ops/binary", I, Dom::Any, Dom::NonZero, 1,
     [](const Tensor& x, const Tensor& y) { return x.div(y, Rounding::Trunc); }},
    {"floor_divide", "ops/binary", F | I, Dom::Any, Dom::NonZero, 2,
     [](const Tensor& x, const Tensor& y) { return x.floor_divide(y); }},
    {"mod", "ops/binary", F | I, Dom::Any, Dom::NonZero, 4,
     [](const Tensor& x, const Tensor& y) { return x.mod(y); }},
    {"pow", "ops/binary", F, Dom::Pos, Dom::Unit, 16,
     [](const Tensor& x, const Tensor& y) { return x.pow(y); }},
    {"maximum", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.maximum(y); }},
    {"minimum", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.minimum(y); }},
    {"lt", "ops/compare", F | I, Dom::Small, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.lt(y); }},
    {"le", "ops/compare", F | I, Dom::Small, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.le(y); }},
    {"gt", "ops/compare", F | I, Dom::Small, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.gt(y); }},
    {"ge", "ops/compare", F | I, Dom::Small, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.ge(y); }},
    {"eq", "ops/compare", F | I | B, Dom::Small, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.eq(y); }},
    {"ne", "ops/compare", F | I | B, Dom::Small, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.ne(y); }},
    {"bitwise_and", "ops/bitwise", I | B, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.bitwise_and(y); }},
    {"bitwise_or", "ops/bitwise", I | B, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.bitwise_or(y); }},
    {"bitwise_xor", "ops/bitwise", I | B, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.bitwise_xor(y); }},
    {"lshift", "ops/bitwise", I, Dom::Any, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.lshift(y); }},
    {"rshift", "ops/bitwise", I, Dom::Any, Dom::Small, 1,
     [](const Tensor& x, const Tensor& y) { return x.rshift(y); }},
    {"logical_and", "ops/bitwise", B, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.logical_and(y); }},
    {"logical_or", "ops/bitwise", B, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.logical_or(y); }},
    {"logical_xor", "ops/bitwise", B, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor& y) { return x.logical_xor(y); }},
    // A C++ scalar on either side (Number promotion rules).
    {"add_scalar", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor&) { return x + 3; }},
    {"rsub_scalar", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor&) { return 2 - x; }},
    {"mul_scalar", "ops/binary", F | I, Dom::Any, Dom::Any, 1,
     [](const Tensor& x, const Tensor&) { return x * 2.5; }},
    {"pow_scalar", "ops/binary", F | I, Dom::Unit, Dom::Any, 2,
     [](const Tensor& x, const Tensor&) { return x.pow(3); }},
};
// Same shapes, broadcasting both ways, a scalar tensor, size-0 dims, and non-contiguous operands.
const std::pair<const char*, const char*> kBinaryShapes[] = {
    {"7", "7"},      {"7x13", "7x13"}, {"7x1", "1x13"},    {"3x1x5", "4x5"},   {"1", "7x13"},
    {"scalar", "7"}, {"0x3", "1x3"},   {"2x1x0", "2x3x1"}, {"7x13.T", "7x13"}, {"31.flip", "31.step2"},
};

void binary(Builder& b) {
  for (const Binary& op : kBinary) {
    std::vector<DType> dts = dtypes_of(op.kinds);
    if (op.kinds & I) dts.push_back(dtypes::uint32);
    for (DType dt : dts)
      for (auto [l, r] : kBinaryShapes) {
        const std::string ls = l, rs = r, tag = ls + "_" + rs;
        const Fn2 f = op.f;
        const Dom ld = op.lhs, rd = op.rhs;
        const uint32_t seed = hash(op.name);
        const bool quick = dt == dts.front() && tag == "7x1_1x13";
        b.add(
            op.name, op.group, dt, tag,
            [=](const std::string& d) {
              return f(input(ls, dt, seed, ld, d), input(rs, dt, seed + 1, rd, d));
            },
            op.depth, quick);
      }
  }
}

// ------------------------------------------------------------------ ternary (where, clip, lerp)
void ternary(Builder& b) {
  const char* const shapes[] = {"7x13", "7x1_1x13", "scalar_7", "0x3", "7x13.T"};
  for (DType dt :
       {dtypes::float32, dtypes::float64, dtypes::float16, dtypes::int32, dtypes::uint8, dtypes::bool_})
    for (const char* sh : shapes) {
      const std::string tag = sh;
      const size_t us = tag.find('_');
      const std::string s1 = tag.substr(0, us), s2 = us == std::string::npos ? tag : tag.substr(us + 1);
      const bool quick = dt == dtypes::float32 && tag == "7x1_1x13";
      b.add(
          "where", "ops/ternary", dt, tag,
          [=](const std::string& d) {
            Tensor c = input(s1, dtypes::bool_, 5, Dom::Any, d);
            return c.where(input(s2, dt, 6, Dom::Any, d), input(s1, dt, 7, Dom::Any, d));
          },
          1, quick);
      if (dt.is_bool()) continue;
      b.add(
          "clip", "ops/ternary", dt, tag,
          [=](const std::string& d) {
            return input(s1, dt, 8, Dom::Any, d).clip(-1, 2) + input(s2, dt, 9, Dom::Unit, d);
          },
          2, quick);
      if (!dt.is_float()) continue;
      b.add(
          "lerp", "ops/ternary", dt, tag,
          [=](const std::string& d) {
            return input(s1, dt, 10, Dom::Any, d)
                .lerp(input(s2, dt, 11, Dom::Any, d), input(s1, dt, 12, Dom::Unit, d));
          },
          4, quick);
    }
}

// ------------------------------------------------------------------ reductions
using FnR = Tensor (*)(const Tensor&, const Shape& axes, bool keepdim);
struct Reduce {
  const char* name;
  uint8_t kinds;
  Dom dom;
  double depth;
  bool single_axis;  // takes one axis (softmax, cumsum, argmax...)
  bool empty_ok;     // defined on size-0 axes
  FnR f;
};
const Reduce kReduce[] = {
    {"sum", F | I | B, Dom::Any, 8, false, true,
     [](const Tensor& x, const Shape& a, bool k) { return x.sum(a, k); }},
    {"prod", F | I, Dom::Unit, 8, false, true,
     [](const Tensor& x, const Shape& a, bool k) { return x.prod(a, k); }},
    {"max", F | I | B, Dom::Any, 1, false, true,
     [](const Tensor& x, const Shape& a, bool k) { return x.max(a, k); }},
    {"min", F | I | B, Dom::Any, 1, false, true,
     [](const Tensor& x, const Shape& a, bool k) { return x.min(a, k); }},
    {"mean", F | I, Dom::Any, 8, false, false,
     [](const Tensor& x, const Shape& a, bool k) { return x.mean(a, k); }},
    {"var", F, Dom::Any, 32, false, false,
     [](const Tensor& x, const Shape& a, bool k) { return x.var(a, k); }},
    {"std", F, Dom::Any, 32, false, false,
     [](const Tensor& x, const Shape& a, bool k) { return x.std(a, k); }},
    {"any", F | I | B, Dom::Unit, 1, false, true,
     [](const Tensor& x, const Shape& a, bool k) { return x.any(a, k); }},
    {"all", F | I | B, Dom::Unit, 1, false, true,
     [](const Tensor& x, const Shape& a, bool k) { return x.all(a, k); }},
    {"logsumexp", F, Dom::Any, 16, false, false,
     [](const Tensor& x, const Shape& a, bool k) { return x.logsumexp(a, k); }},
    {"argmax", F | I, Dom::Any, 1, true, false,
     [](const Tensor& x, const Shape& a, bool k) { return x.argmax(a.at(0), k); }},
    {"argmin", F | I, Dom::Any, 1, true, false,
     [](const Tensor& x, const Shape& a, bool k) { return x.argmin(a.at(0), k); }},
    {"softmax", F, Dom::Any, 16, true, false,
     [](const Tensor& x, const Shape& a, bool) { return x.softmax(a.at(0)); }},
    {"log_softmax", F, Dom::Any, 16, true, false,
     [](const Tensor& x, const Shape& a, bool) { return x.log_softmax(a.at(0)); }},
    {"cumsum", F | I, Dom::Any, 8, true, false,
     [](const Tensor& x, const Shape& a, bool) { return x.cumsum(a.at(0)); }},
    {"cumprod", F | I, Dom::Unit, 8, true, false,
     [](const Tensor& x, const Shape& a, bool) { return x.cumprod(a.at(0)); }},
    {"cummax", F | I, Dom::Any, 1, true, false,
     [](const Tensor& x, const Shape& a, bool) { return x.cummax(a.at(0)); }},
};
struct ReduceShape {
  const char* tag;  // input shape tag, then @axes ("all": every axis), "k": keepdim
  const char* shape;
  Shape axes;
  bool keepdim, empty;
};
const ReduceShape kReduceShapes[] = {
    {"7x13@0", "7x13", {0}, false, false},
    {"7x13@1", "7x13", {1}, false, false},
    {"7x13@all", "7x13", {}, false, false},
    {"3x5x7@0,2", "3x5x7", {0, 2}, false, false},
    {"2x3x4@1k", "2x3x4", {1}, true, false},
    {"1x13@0", "1x13", {0}, false, false},
    {"31@all", "31", {}, false, false},
    {"7x13.T@1", "7x13.T", {1}, false, false},
    {"5x33.step2@-1", "5x33.step2", {-1}, false, false},
    {"3x0@1", "3x0", {1}, false, true},
};

void reduce(Builder& b) {
  for (const Reduce& r : kReduce) {
    std::vector<DType> dts = dtypes_of(r.kinds);
    for (DType dt : dts)
      for (const ReduceShape& rs : kReduceShapes) {
        if (r.single_axis && rs.axes.size() != 1) continue;
        if (rs.empty && !r.empty_ok) continue;
        const std::string shape = rs.shape;
        const Shape axes = rs.axes;
        const bool keep = rs.keepdim;
        const FnR f = r.f;
        const Dom dom = r.dom;
        const uint32_t seed = hash(r.name);
        const bool quick = dt == dts.front() && std::string(rs.tag) == "3x5x7@0,2";
        const bool quick1 = dt == dts.front() && r.single_axis && std::string(rs.tag) == "7x13.T@1";
        b.add(
            r.name, "ops/reduce", dt, rs.tag,
            [=](const std::string& d) { return f(input(shape, dt, seed, dom, d), axes, keep); }, r.depth,
            quick || quick1);
      }
  }
}

// ------------------------------------------------------------------ movement, indexing
struct Move {
  const char* name;
  const char* shape;  // input shape tag
  Tensor (*f)(const Tensor&);
};
Tensor piece(const std::vector<Tensor>& v, size_t i) { return v.at(i); }
const Move kMove[] = {
    {"reshape", "7x13",
     [](const Tensor& x) {
       return x.reshape({13, 7});
     }},
    {"reshape", "2x3x4.T",
     [](const Tensor& x) {
       return x.reshape({4, -1});
     }},
    {"reshape", "0x3",
     [](const Tensor& x) {
       return x.reshape({3, 0});
     }},
    {"permute", "2x3x5",
     [](const Tensor& x) {
       return x.permute({2, 0, 1});
     }},
    {"transpose", "7x13", [](const Tensor& x) { return x.transpose(); }},
    {"flatten", "2x3x5.flip", [](const Tensor& x) { return x.flatten(1); }},
    {"unflatten", "30",
     [](const Tensor& x) {
       return x.unflatten(0, {5, -1});
     }},
    {"unsqueeze", "7x13", [](const Tensor& x) { return x.unsqueeze(1); }},
    {"squeeze", "1x7x1x13", [](const Tensor& x) { return x.squeeze(); }},
    {"expand", "7x1",
     [](const Tensor& x) {
       return x.expand({3, 7, 13});
     }},
    {"pad", "7x13",
     [](const Tensor& x) {
       return x.pad({{1, 2}, {0, 3}});
     }},
    {"pad_value", "5x3",
     [](const Tensor& x) {
       return x.pad({{0, 1}, {2, 1}}, 1);
     }},
    {"pad_crop", "7x13",
     [](const Tensor& x) {
       return x.pad({{-1, 2}, {3, -4}});
     }},
    {"pad_reflect", "7x13",
     [](const Tensor& x) {
       return x.pad({{2, 2}, {1, 3}}, 0, PadMode::Reflect);
     }},
    {"pad_replicate", "7x13",
     [](const Tensor& x) {
       return x.pad({{2, 0}, {1, 3}}, 0, PadMode::Replicate);
     }},
    {"pad_circular", "7x13",
     [](const Tensor& x) {
       return x.pad({{2, 2}, {0, 13}}, 0, PadMode::Circular);
     }},
    {"shrink", "7x13",
     [](const Tensor& x) {
       return x.shrink({{1, 6}, {2, 11}});
     }},
    {"flip", "7x13",
     [](const Tensor& x) {
       return x.flip({0, 1});
     }},
    {"slice", "7x13",
     [](const Tensor& x) {
       return x.slice({Slice{1, {}, 2}, Slice{{}, {}, -3}});
     }},
    {"select", "3x7x13", [](const Tensor& x) { return x.select(1, -2); }},
    {"cat", "7x13",
     [](const Tensor& x) {
       return sluice::cat({x, x.flip({1}), x.shrink({{0, 7}, {0, 2}})}, 1);
     }},
    {"stack", "7x13",
     [](const Tensor& x) {
       return sluice::stack({x, x.flip({0})}, 2);
     }},
    {"repeat", "3x5",
     [](const Tensor& x) {
       return x.repeat({2, 1, 3});
     }},
    {"roll", "7x13",
     [](const Tensor& x) {
       return x.roll({2, -5}, {0, 1});
     }},
    {"tril", "7x13", [](const Tensor& x) { return x.tril(1); }},
    {"triu", "13x7", [](const Tensor& x) { return x.triu(-2); }},
    {"split", "7x13", [](const Tensor& x) { return piece(x.split(5, 1), 2); }},
    {"chunk", "13x7", [](const Tensor& x) { return piece(x.chunk(3, 0), 1); }},
    {"contiguous", "7x13.T", [](const Tensor& x) { return x.contiguous(); }},
};
void movement(Builder& b) {
  const std::vector<DType> dts = {dtypes::float32, dtypes::int8,    dtypes::bool_,
                                  dtypes::int64,   dtypes::float16, dtypes::uint16};
  for (const Move& m : kMove)
    for (DType dt : dts) {
      const std::string s = m.shape;
      auto f = m.f;
      // contiguous(): every movement result is realized as its own buffer.
      b.add(
          m.name, "ops/movement", dt, s,
          [=](const std::string& d) { return f(input(s, dt, hash(s), Dom::Any, d)).contiguous(); }, 1,
          dt == dts.front());
    }
}

void indexing(Builder& b) {
  for (DType dt : {dtypes::float32, dtypes::int32, dtypes::uint8, dtypes::float16}) {
    const bool q = dt == dtypes::float32;
    b.add(
        "gather", "ops/index", dt, "7x13@1",
        [=](const std::string& d) {
          Tensor idx = input("7x5", dtypes::int32, 3, Dom::Small, d);
          return input("7x13", dt, 1, Dom::Any, d).gather(1, idx);
        },
        1, q);
    b.add(
        "gather", "ops/index", dt, "5x3x2@0",
        [=](const std::string& d) {
          Tensor idx = input("2x3x2", dtypes::int32, 4, Dom::Small, d).clip(0, 4);
          return input("5x3x2", dt, 2, Dom::Any, d).gather(0, idx);
        },
        1, false);
    b.add(
        "index_select", "ops/index", dt, "7x13@0",
        [=](const std::string& d) {
          std::vector<int32_t> i = {0, 6, -1, 3, 3, -7};
          return input("7x13", dt, 5, Dom::Any, d).index_select(0, Tensor::from(i, {6}, d));
        },
        1, q);
    b.add(
        "index_select", "ops/index", dt, "3x11.T@1",
        [=](const std::string& d) {
          return input("3x11.T", dt, 6, Dom::Any, d)
              .index_select(1, input("2x2", dtypes::int32, 7, Dom::Small, d));
        },
        1, false);
    b.add(
        "masked_fill", "ops/index", dt, "7x13",
        [=](const std::string& d) {
          return input("7x13", dt, 8, Dom::Any, d)
              .masked_fill(input("1x13", dtypes::bool_, 9, Dom::Any, d), 3);
        },
        1, q);
  }
  for (const char* sh : {"7", "3x5", "0"}) {
    const std::string s = sh;
    b.add(
        "one_hot", "ops/index", dtypes::int32, s,
        [=](const std::string& d) { return input(s, dtypes::int32, 10, Dom::Small, d).one_hot(8); }, 1,
        s == "3x5");
  }
}

// ------------------------------------------------------------------ linear algebra, nn
void linalg(Builder& b) {
  const std::pair<const char*, const char*> shapes[] = {
      {"1x1", "1x1"},    {"7x13", "13x5"}, {"3x1", "1x4"},       {"2x3x8", "8x5"},   {"3x0", "0x4"},
      {"17x31", "31x1"}, {"13", "13x5"},   {"2x1x4x6", "3x6x2"}, {"7x13.T", "13x5"},
  };
  for (DType dt : {dtypes::float32, dtypes::float64, dtypes::float16, dtypes::bfloat16, dtypes::int32})
    for (auto [l, r] : shapes) {
      const std::string ls = l, rs = r;
      b.add(
          "matmul", "ops/linalg", dt, ls + "_" + rs,
          [=](const std::string& d) {
            return input(ls, dt, 1, Dom::Unit, d).matmul(input(rs, dt, 2, Dom::Unit, d));
          },
          32, dt == dtypes::float32 && ls == "2x3x8");
    }
  const std::pair<const char*, std::vector<const char*>> forms[] = {
      {"ij,jk->ik", {"7x13", "13x5"}},
      {"ij->ji", {"7x13"}},
      {"bij,bjk->bik", {"2x3x4", "2x4x5"}},
      {"i,i->", {"31"}},
      {"ij->", {"7x13"}},
      {"...ij,jk->...ik", {"2x3x4", "4x5"}},
      {"ij,kj->ik", {"3x5", "4x5"}},
      {"i,j->ij", {"7", "5"}},
  };
  for (DType dt : {dtypes::float32, dtypes::float64})
    for (const auto& [form, ins] : forms) {
      const std::string fs = form;
      std::vector<std::string> shapes_in(ins.begin(), ins.end());
      std::string tag;
      for (const std::string& s : shapes_in) tag += (tag.empty() ? "" : "_") + s;
      std::string opname = "einsum_";
      for (char c : fs)
        opname += std::isalpha(static_cast<unsigned char>(c)) ? c : c == '>' ? '2' : c == ',' ? '_' : 'x';
      b.add(
          opname, "ops/linalg", dt, tag,
          [=](const std::string& d) {
            std::vector<Tensor> ts;
            uint32_t seed = 1;
            for (const std::string& s : shapes_in) ts.push_back(input(s, dt, seed++, Dom::Unit, d));
            if (fs == "i,i->") ts.push_back(ts[0].flip({0}));
            return Tensor::einsum(fs, ts);
          },
          32, dt == dtypes::float32);
    }
}

struct Nn {
  const char* name;
  const char* shape;  // a tag for the name
  Tensor (*f)(DType dt, const std::string& d);
};
Tensor in(const char* s, DType dt, uint32_t seed, const std::string& d, Dom dom = Dom::Unit) {
  return input(s, dt, seed, dom, d);
}
const Nn kNn[] = {
    {"conv2d", "1x2x5x5_3x2x3x3",
     [](DType t, const std::string& d) { return in("1x2x5x5", t, 1, d).conv2d(in("3x2x3x3", t, 2, d)); }},
    {"conv2d_pad", "2x2x7x6_3x2x3x3",
     [](DType t, const std::string& d) {
       return in("2x2x7x6", t, 1, d).conv2d(in("3x2x3x3", t, 2, d), {.padding = {1}});
     }},
    {"conv2d_stride", "1x3x9x7_2x3x3x3",
     [](DType t, const std::string& d) {
       return in("1x3x9x7", t, 1, d).conv2d(in("2x3x3x3", t, 2, d), {.stride = {2}, .padding = {1, 0}});
     }},
    {"conv2d_dilation", "1x1x9x9_2x1x3x3",
     [](DType t, const std::string& d) {
       return in("1x1x9x9", t, 1, d).conv2d(in("2x1x3x3", t, 2, d), {.dilation = {2}});
     }},
    {"conv2d_groups_bias", "1x4x5x5_4x2x3x3",
     [](DType t, const std::string& d) {
       return in("1x4x5x5", t, 1, d).conv2d(in("4x2x3x3", t, 2, d), {.bias = in("4", t, 3, d), .groups = 2});
     }},
    {"conv1d", "2x3x11_4x3x3",
     [](DType t, const std::string& d) { return in("2x3x11", t, 1, d).conv1d(in("4x3x3", t, 2, d)); }},
    {"conv_transpose2d", "1x2x4x4_2x3x3x3",
     [](DType t, const std::string& d) {
       return in("1x2x4x4", t, 1, d).conv_transpose2d(in("2x3x3x3", t, 2, d));
     }},
    {"conv_transpose2d_stride", "1x2x3x3_2x1x3x3",
     [](DType t, const std::string& d) {
       return in("1x2x3x3", t, 1, d)
           .conv_transpose2d(in("2x1x3x3", t, 2, d), {.stride = {2}, .padding = {1}, .output_padding = {1}});
     }},
    {"max_pool2d", "1x2x6x8",
     [](DType t, const std::string& d) { return in("1x2x6x8", t, 1, d).max_pool2d(); }},
    {"max_pool2d_3x3", "1x1x7x7",
     [](DType t, const std::string& d) {
       return in("1x1x7x7", t, 1, d).max_pool2d({.kernel = {3}, .stride = {1}, .padding = {1}});
     }},
    {"max_pool2d_ceil", "1x1x7x5",
     [](DType t, const std::string& d) {
       return in("1x1x7x5", t, 1, d).max_pool2d({.kernel = {2}, .ceil_mode = true});
     }},
    {"avg_pool2d", "1x2x6x8",
     [](DType t, const std::string& d) { return in("1x2x6x8", t, 1, d).avg_pool2d(); }},
    {"avg_pool2d_nopad", "1x1x7x7",
     [](DType t, const std::string& d) {
       return in("1x1x7x7", t, 1, d)
           .avg_pool2d({.kernel = {3}, .stride = {2}, .padding = {1}, .count_include_pad = false});
     }},
    {"interpolate_nearest", "1x2x3x5",
     [](DType t, const std::string& d) {
       return in("1x2x3x5", t, 1, d).interpolate({7, 4}, InterpolateMode::Nearest);
     }},
    {"interpolate_nearest_exact", "1x1x5x3",
     [](DType t, const std::string& d) {
       return in("1x1x5x3", t, 1, d).interpolate({3, 7}, InterpolateMode::NearestExact);
     }},
    {"interpolate_linear", "1x2x3x5",
     [](DType t, const std::string& d) {
       return in("1x2x3x5", t, 1, d).interpolate({7, 4}, InterpolateMode::Linear);
     }},
    {"interpolate_align", "1x1x4x4",
     [](DType t, const std::string& d) {
       return in("1x1x4x4", t, 1, d).interpolate({7, 5}, InterpolateMode::Linear, true);
     }},
    {"layernorm", "3x17",
     [](DType t, const std::string& d) { return in("3x17", t, 1, d, Dom::Any).layernorm(); }},
    {"rmsnorm", "3x17",
     [](DType t, const std::string& d) { return in("3x17", t, 1, d, Dom::Any).rmsnorm(); }},
    {"batchnorm", "2x3x5",
     [](DType t, const std::string& d) {
       return in("2x3x5", t, 1, d)
           .batchnorm(in("3", t, 2, d), in("3", t, 3, d), in("3", t, 4, d), in("3", t, 5, d, Dom::Pos));
     }},
    {"sdpa", "1x2x7x4",
     [](DType t, const std::string& d) {
       return in("1x2x7x4", t, 1, d)
           .scaled_dot_product_attention(in("1x2x5x4", t, 2, d), in("1x2x5x3", t, 3, d));
     }},
    {"sdpa_causal", "2x6x4",
     [](DType t, const std::string& d) {
       return in("2x6x4", t, 1, d)
           .scaled_dot_product_attention(in("2x6x4", t, 2, d), in("2x6x4", t, 3, d), std::nullopt, true);
     }},
    {"sdpa_mask", "1x5x4",
     [](DType t, const std::string& d) {
       return in("1x5x4", t, 1, d)
           .scaled_dot_product_attention(in("1x3x4", t, 2, d), in("1x3x2", t, 3, d),
                                         input("5x3", dtypes::bool_, 9, Dom::Pos, d));
     }},
    {"cross_entropy", "5x7",
     [](DType t, const std::string& d) {
       return in("5x7", t, 1, d, Dom::Any).cross_entropy(input("5", dtypes::int32, 2, Dom::Small, d));
     }},
    {"cross_entropy_smooth", "5x7",
     [](DType t, const std::string& d) {
       return in("5x7", t, 1, d, Dom::Any)
           .cross_entropy(input("5", dtypes::int32, 2, Dom::Small, d), Reduction::Sum, 0.1);
     }},
    {"sparse_categorical_crossentropy", "4x9",
     [](DType t, const std::string& d) {
       return in("4x9", t, 1, d, Dom::Any)
           .sparse_categorical_crossentropy(input("4", dtypes::int32, 3, Dom::Small, d));
     }},
    {"nll_loss", "6x8",
     [](DType t, const std::string& d) {
       return in("6x8", t, 1, d, Dom::Any)
           .log_softmax()
           .nll_loss(input("6", dtypes::int32, 4, Dom::Small, d));
     }},
    {"binary_cross_entropy", "7x3",
     [](DType t, const std::string& d) {
       return in("7x3", t, 1, d, Dom::Any)
           .sigmoid()
           .binary_cross_entropy(in("7x3", t, 2, d, Dom::Pos).div(5));
     }},
    {"binary_cross_entropy_with_logits", "7x3",
     [](DType t, const std::string& d) {
       return in("7x3", t, 1, d, Dom::Any)
           .binary_cross_entropy_with_logits(in("7x3", t, 2, d, Dom::Pos).div(5));
     }},
};
void nn(Builder& b) {
  for (DType dt : {dtypes::float32, dtypes::float64, dtypes::float16})
    for (const Nn& n : kNn) {
      auto f = n.f;
      b.add(
          n.name, "ops/nn", dt, n.shape, [=](const std::string& d) { return f(dt, d); }, 64,
          dt == dtypes::float32);
    }
}

// ------------------------------------------------------------------ casts, creation
void casts(Builder& b) {
  const std::vector<DType> all = {dtypes::bool_,  dtypes::int8,    dtypes::uint8,    dtypes::int16,
                                  dtypes::uint16, dtypes::int32,   dtypes::uint32,   dtypes::int64,
                                  dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                                  dtypes::float64};
  for (DType from : all)
    for (DType to : all)
      for (const char* sh : {"7x13", "31.flip"}) {
        if (from == to) continue;
        const std::string s = sh;
        // Float sources scaled past small integer ranges: out-of-range float->int casts are undefined
        // (the reference skips them); wrap-around of int->int casts is defined.
        b.add(
            "cast_to_" + dname(to), "ops/cast", from, s,
            [=](const std::string& d) { return input(s, from, 3, Dom::Any, d).cast(to); }, 1,
            s == "7x13" && from == dtypes::float32);
      }
  const std::pair<DType, DType> bitcasts[] = {
      {dtypes::float32, dtypes::int32}, {dtypes::int32, dtypes::float32},   {dtypes::float32, dtypes::uint32},
      {dtypes::float16, dtypes::int16}, {dtypes::bfloat16, dtypes::uint16}, {dtypes::float64, dtypes::int64},
      {dtypes::int64, dtypes::float64}, {dtypes::int8, dtypes::uint8},      {dtypes::uint16, dtypes::float16},
  };
  for (auto [from, to] : bitcasts)
    b.add(
        "bitcast_to_" + dname(to), "ops/cast", from, "7x13",
        [=](const std::string& d) { return input("7x13", from, 4, Dom::Any, d).bitcast(to); }, 1,
        from == dtypes::float32 && to == dtypes::int32);
}

void creation(Builder& b) {
  for (DType dt : {dtypes::float32, dtypes::int32, dtypes::float64, dtypes::float16}) {
    const bool q = dt == dtypes::float32;
    b.add(
        "arange", "ops/creation", dt, "0-17-3",
        [=](const std::string& d) { return Tensor::arange(0, 17, 3, dt, d); }, 1, q);
    b.add(
        "arange", "ops/creation", dt, "5-m4-m2",
        [=](const std::string& d) { return Tensor::arange(5, -4, -2, dt, d); }, 1, false);
    b.add(
        "full", "ops/creation", dt, "7x13",
        [=](const std::string& d) {
          return Tensor::full({7, 13}, 3, dt, d);
        },
        1, q);
    b.add(
        "zeros", "ops/creation", dt, "3x0",
        [=](const std::string& d) {
          return Tensor::zeros({3, 0}, dt, d) + 1;
        },
        1, false);
    b.add(
        "ones_like", "ops/creation", dt, "7x13.T",
        [=](const std::string& d) { return input("7x13.T", dt, 1, Dom::Any, d).ones_like() * 2; }, 1, false);
    b.add(
        "eye", "ops/creation", dt, "5x7", [=](const std::string& d) { return Tensor::eye(5, 7, dt, d); }, 1,
        q);
    if (!dt.is_float()) continue;
    b.add(
        "linspace", "ops/creation", dt, "m1-2-13",
        [=](const std::string& d) { return Tensor::linspace(-1, 2, 13, dt, d); }, 4, q);
    b.add(
        "rand", "ops/creation", dt, "7x13",
        [=](const std::string& d) {
          return Tensor::rand({7, 13}, 3, dt, d);
        },
        8, q);
    b.add(
        "randn", "ops/creation", dt, "31",
        [=](const std::string& d) { return Tensor::randn({31}, 5, dt, d); }, 256, q);
    b.add(
        "uniform", "ops/creation", dt, "7x13",
        [=](const std::string& d) {
          return Tensor::uniform({7, 13}, -2, 3, 9, dt, d);
        },
        8, false);
    b.add(
        "normal", "ops/creation", dt, "13",
        [=](const std::string& d) { return Tensor::normal({13}, 1, 2, 11, dt, d); }, 256, false);
  }
  for (DType dt : {dtypes::int32, dtypes::int64, dtypes::uint8})
    b.add(
        "randint", "ops/creation", dt, "7x13",
        [=](const std::string& d) {
          return Tensor::randint({7, 13}, 0, 100, 4, dt, d);
        },
        1, dt == dtypes::int32);
}

}  // namespace

std::vector<OpCase> op_sweep() {
  Builder b;
  unary(b);
  binary(b);
  ternary(b);
  reduce(b);
  movement(b);
  indexing(b);
  linalg(b);
  nn(b);
  casts(b);
  creation(b);
  return std::move(b.cases);
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> v = op_sweep();
    for (OpCase& c : op_composites()) v.push_back(std::move(c));
    for (OpCase& c : op_gradients()) v.push_back(std::move(c));
    return v;
  }();
  return cases;
}

}  // namespace sluice::conformance
