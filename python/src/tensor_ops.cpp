// The methods of runtime/tensor.h under the same (the reference design's) names, and Python's operators.
// A right operand may be a Tensor or a Python scalar (Number: its kind decides promotion, as in C++).
#include "bindings.h"

namespace sluice::python {

namespace {

using UnaryFn = Tensor (Tensor::*)() const;
using BinT = Tensor (Tensor::*)(const Tensor&) const;
using BinN = Tensor (Tensor::*)(Number) const;

// a OP b for a Tensor or scalar b.
Tensor binary(const Tensor& a, py::handle b, BinT tensor_op, BinN number_op, const char* fn) {
  Operand o = to_operand(b, fn);
  if (auto* t = std::get_if<Tensor>(&o)) return (a.*tensor_op)(*t);
  return (a.*number_op)(std::get<Number>(o));
}
// b OP a, for the reflected operators (2 - t): the scalar becomes a tensor by the promotion rules.
Tensor reflected(const Tensor& a, py::handle b, BinT tensor_op, const char* fn) {
  Operand o = to_operand(b, fn);
  if (auto* t = std::get_if<Tensor>(&o)) return ((*t).*tensor_op)(a);
  Number n = std::get<Number>(o);
  // The scalar keeps the tensor's dtype when both are of a kind (Tensor.h's Number rule), as `a OP n` does.
  DType d = (n.kind == Number::Kind::Float && a.dtype().is_float()) ||
                    (n.kind == Number::Kind::Int && a.dtype().is_int())
                ? a.dtype()
                : n.default_dtype();
  return (a.full_like(n, d).*tensor_op)(a);
}

Rounding rounding(const std::optional<std::string>& mode) {
  if (!mode) return Rounding::None;
  if (*mode == "trunc") return Rounding::Trunc;
  if (*mode == "floor") return Rounding::Floor;
  SLUICE_FAIL(ValueError, "div") << "rounding_mode must be None, 'trunc' or 'floor', got '" << *mode << "'";
}
Reduction reduction(const std::string& r, const char* fn) {
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (r == "none") return Reduction::None;
  SLUICE_FAIL(ValueError, fn) << "reduction must be 'mean', 'sum' or 'none', got '" << r << "'";
}
PadMode pad_mode(const std::string& m) {
  if (m == "constant") return PadMode::Constant;
  if (m == "reflect") return PadMode::Reflect;
  if (m == "replicate") return PadMode::Replicate;
  if (m == "circular") return PadMode::Circular;
  SLUICE_FAIL(ValueError, "pad") << "mode must be 'constant', 'reflect', 'replicate' or 'circular', got '"
                                 << m << "'";
}
InterpolateMode interpolate_mode(const std::string& m) {
  if (m == "linear" || m == "bilinear" || m == "trilinear") return InterpolateMode::Linear;
  if (m == "nearest") return InterpolateMode::Nearest;
  if (m == "nearest-exact") return InterpolateMode::NearestExact;
  SLUICE_FAIL(ValueError, "interpolate")
      << "mode must be 'linear', 'nearest' or 'nearest-exact', got '" << m << "'";
}
std::vector<int64_t> ints(py::handle o) {
  if (py::isinstance<py::int_>(o)) return {o.cast<int64_t>()};
  return o.cast<std::vector<int64_t>>();
}
std::optional<Number> opt_number(py::handle o, const char* fn) {
  if (o.is_none()) return std::nullopt;
  auto n = to_number(o, fn);
  if (!n) SLUICE_FAIL(DTypeError, fn) << "expected a Python scalar or None";
  return n;
}
// A shape as separate ints or one sequence, for reshape/permute/expand/repeat.
Shape dims(const py::args& a, const char* fn) { return to_shape(a, fn); }

// The methods and operators bound from tables: one row per name.
using ReduceFn = Tensor (Tensor::*)(const Shape&, bool) const;
#define SLUICE_UNARY(name) std::pair<const char*, UnaryFn>(#name, &Tensor::name)
const std::pair<const char*, UnaryFn> kUnary[] = {
    SLUICE_UNARY(neg),         SLUICE_UNARY(abs),     SLUICE_UNARY(sign),       SLUICE_UNARY(square),
    SLUICE_UNARY(reciprocal),  SLUICE_UNARY(sqrt),    SLUICE_UNARY(rsqrt),      SLUICE_UNARY(exp),
    SLUICE_UNARY(exp2),        SLUICE_UNARY(log),     SLUICE_UNARY(log2),       SLUICE_UNARY(sin),
    SLUICE_UNARY(cos),         SLUICE_UNARY(tan),     SLUICE_UNARY(trunc),      SLUICE_UNARY(floor),
    SLUICE_UNARY(ceil),        SLUICE_UNARY(round),   SLUICE_UNARY(isnan),      SLUICE_UNARY(logical_not),
    SLUICE_UNARY(bitwise_not), SLUICE_UNARY(relu),    SLUICE_UNARY(relu6),      SLUICE_UNARY(gelu),
    SLUICE_UNARY(quick_gelu),  SLUICE_UNARY(silu),    SLUICE_UNARY(swish),      SLUICE_UNARY(mish),
    SLUICE_UNARY(softsign),    SLUICE_UNARY(sigmoid), SLUICE_UNARY(logsigmoid), SLUICE_UNARY(hardswish),
    SLUICE_UNARY(tanh),        SLUICE_UNARY(erf),     SLUICE_UNARY(kernelize),
};
#undef SLUICE_UNARY
// A Tensor or a Number on the right: both overloads.
#define SLUICE_BINARY(name) std::tuple<const char*, BinT, BinN>(#name, &Tensor::name, &Tensor::name)
const std::tuple<const char*, BinT, BinN> kBinary[] = {
    SLUICE_BINARY(add),          SLUICE_BINARY(sub),         SLUICE_BINARY(mul),
    SLUICE_BINARY(mod),          SLUICE_BINARY(pow),         SLUICE_BINARY(maximum),
    SLUICE_BINARY(minimum),      SLUICE_BINARY(lt),          SLUICE_BINARY(le),
    SLUICE_BINARY(gt),           SLUICE_BINARY(ge),          SLUICE_BINARY(eq),
    SLUICE_BINARY(ne),           SLUICE_BINARY(bitwise_and), SLUICE_BINARY(bitwise_or),
    SLUICE_BINARY(bitwise_xor),  SLUICE_BINARY(lshift),      SLUICE_BINARY(rshift),
    SLUICE_BINARY(floor_divide),
};
#undef SLUICE_BINARY
// Python operator -> the binary method it stands for.
const std::pair<const char*, const char*> kOperators[] = {
    {"__add__", "add"},         {"__sub__", "sub"},       {"__mul__", "mul"},
    {"__mod__", "mod"},         {"__pow__", "pow"},       {"__floordiv__", "floor_divide"},
    {"__and__", "bitwise_and"}, {"__or__", "bitwise_or"}, {"__xor__", "bitwise_xor"},
    {"__lshift__", "lshift"},   {"__rshift__", "rshift"}, {"__lt__", "lt"},
    {"__le__", "le"},           {"__gt__", "gt"},         {"__ge__", "ge"},
    {"__eq__", "eq"},           {"__ne__", "ne"},
};
const std::pair<const char*, const char*> kReflected[] = {
    {"__radd__", "add"},         {"__rsub__", "sub"},       {"__rmul__", "mul"},
    {"__rmod__", "mod"},         {"__rpow__", "pow"},       {"__rfloordiv__", "floor_divide"},
    {"__rand__", "bitwise_and"}, {"__ror__", "bitwise_or"}, {"__rxor__", "bitwise_xor"},
    {"__rlshift__", "lshift"},   {"__rrshift__", "rshift"},
};
const std::pair<const char*, ReduceFn> kReduce[] = {
    {"prod", &Tensor::prod},           {"max", &Tensor::max}, {"min", &Tensor::min},
    {"mean", &Tensor::mean},           {"any", &Tensor::any}, {"all", &Tensor::all},
    {"logsumexp", &Tensor::logsumexp},
};

const std::tuple<const char*, BinT, BinN>& find_binary(const char* name) {
  for (const auto& row : kBinary)
    if (std::string_view(std::get<0>(row)) == name) return row;
  SLUICE_ASSERT(false);  // every operator row names a kBinary row
  return kBinary[0];
}

}  // namespace

void bind_tensor_ops(py::module_& m) {
  auto t = py::class_<Tensor>(m.attr("Tensor"));

  // ------------------------------------------------------------------ elementwise, no arguments
  for (auto [name, fn] : kUnary) t.def(name, fn);

  // ------------------------------------------------------------------ elementwise, binary
  for (auto [name, tf, nf] : kBinary)
    t.def(
        name, [tf, nf, name](const Tensor& a, py::handle b) { return binary(a, b, tf, nf, name); },
        py::arg("other"));
  t.def("logical_and", &Tensor::logical_and, py::arg("other"))
      .def("logical_or", &Tensor::logical_or, py::arg("other"))
      .def("logical_xor", &Tensor::logical_xor, py::arg("other"))
      .def(
          "div",
          [](const Tensor& a, py::handle b, std::optional<std::string> mode) {
            Operand o = to_operand(b, "div");
            if (auto* x = std::get_if<Tensor>(&o)) return a.div(*x, rounding(mode));
            return a.div(std::get<Number>(o), rounding(mode));
          },
          py::arg("other"), py::arg("rounding_mode") = py::none())
      .def(
          "where",
          [](const Tensor& c, py::handle x, py::handle y) {
            Operand a = to_operand(x, "where"), b = to_operand(y, "where");
            return std::visit([&](auto& p, auto& q) { return c.where(p, q); }, a, b);
          },
          py::arg("x"), py::arg("y"), "self (a condition) selects x where true, y where false.")
      .def(
          "lerp",
          [](const Tensor& a, const Tensor& end, py::handle w) {
            Operand o = to_operand(w, "lerp");
            if (auto* x = std::get_if<Tensor>(&o)) return a.lerp(end, *x);
            return a.lerp(end, std::get<Number>(o));
          },
          py::arg("end"), py::arg("weight"))
      .def(
          "clip",
          [](const Tensor& a, py::handle lo, py::handle hi) {
            return a.clip(opt_number(lo, "clip"), opt_number(hi, "clip"));
          },
          py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def(
          "clamp",
          [](const Tensor& a, py::handle lo, py::handle hi) {
            return a.clip(opt_number(lo, "clamp"), opt_number(hi, "clamp"));
          },
          py::arg("min_") = py::none(), py::arg("max_") = py::none())
      .def("isinf", &Tensor::isinf, py::arg("detect_positive") = true, py::arg("detect_negative") = true)
      .def("leaky_relu", &Tensor::leaky_relu, py::arg("neg_slope") = 0.01)
      .def("elu", &Tensor::elu, py::arg("alpha") = 1.0)
      .def("celu", &Tensor::celu, py::arg("alpha") = 1.0)
      .def("selu", &Tensor::selu, py::arg("alpha") = 1.67326, py::arg("gamma") = 1.0507)
      .def("softplus", &Tensor::softplus, py::arg("beta") = 1.0)
      .def("hardsigmoid", &Tensor::hardsigmoid, py::arg("alpha") = 1.0 / 6, py::arg("beta") = 0.5)
      .def("hardtanh", &Tensor::hardtanh, py::arg("min_val") = -1.0, py::arg("max_val") = 1.0);

  // ------------------------------------------------------------------ operators
  for (auto [py_name, method] : kOperators) {
    auto [name, tf, nf] = find_binary(method);
    t.def(py_name,
          [tf, nf, py_name](const Tensor& a, py::handle b) { return binary(a, b, tf, nf, py_name); });
  }
  for (auto [py_name, method] : kReflected) {
    BinT tf = std::get<1>(find_binary(method));
    t.def(py_name, [tf, py_name](const Tensor& a, py::handle b) { return reflected(a, b, tf, py_name); });
  }
  t.def("__truediv__",
        [](const Tensor& a, py::handle b) {
          Operand o = to_operand(b, "__truediv__");
          if (auto* x = std::get_if<Tensor>(&o)) return a.div(*x);
          return a.div(std::get<Number>(o));
        })
      .def("__rtruediv__",
           [](const Tensor& a, py::handle b) {
             Operand o = to_operand(b, "__rtruediv__");
             if (auto* x = std::get_if<Tensor>(&o)) return x->div(a);
             return std::get<Number>(o) / a;
           })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return a.matmul(b); })
      .def("__rmatmul__", [](const Tensor& a, const Tensor& b) { return b.matmul(a); })
      .def("__neg__", &Tensor::neg)
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", &Tensor::abs)
      .def("__invert__", &Tensor::bitwise_not);

  // ------------------------------------------------------------------ reductions
  for (auto [name, fn] : kReduce)
    t.def(
        name,
        [fn](const Tensor& a, py::handle axis, bool keepdim) { return (a.*fn)(to_axes(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def(
       "sum",
       [](const Tensor& a, py::handle axis, bool keepdim, py::handle acc) {
         return a.sum(to_axes(axis), keepdim, to_dtype(acc, "sum"));
       },
       py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("acc_dtype") = py::none())
      .def(
          "var",
          [](const Tensor& a, py::handle axis, bool keepdim, double correction) {
            return a.var(to_axes(axis), keepdim, correction);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1.0)
      .def(
          "std",
          [](const Tensor& a, py::handle axis, bool keepdim, double correction) {
            return a.std(to_axes(axis), keepdim, correction);
          },
          py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1.0)
      .def("argmax", &Tensor::argmax, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("argmin", &Tensor::argmin, py::arg("axis") = py::none(), py::arg("keepdim") = false)
      .def("softmax", &Tensor::softmax, py::arg("axis") = -1)
      .def("log_softmax", &Tensor::log_softmax, py::arg("axis") = -1)
      .def("cumsum", &Tensor::cumsum, py::arg("axis") = 0)
      .def("cumprod", &Tensor::cumprod, py::arg("axis") = 0)
      .def("cummax", &Tensor::cummax, py::arg("axis") = 0);

  // ------------------------------------------------------------------ movement
  t.def("reshape", [](const Tensor& a, py::args s) { return a.reshape(dims(s, "reshape")); })
      .def("view", [](const Tensor& a, py::args s) { return a.reshape(dims(s, "view")); })
      .def("permute", [](const Tensor& a, py::args s) { return a.permute(dims(s, "permute")); })
      .def("expand", [](const Tensor& a, py::args s) { return a.expand(dims(s, "expand")); })
      .def("repeat", [](const Tensor& a, py::args s) { return a.repeat(dims(s, "repeat")); })
      .def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0)
      .def_property_readonly("T", [](const Tensor& a) { return a.transpose(); })
      .def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("unflatten", &Tensor::unflatten, py::arg("dim"), py::arg("sizes"))
      .def(
          "squeeze",
          [](const Tensor& a, std::optional<int64_t> dim) { return dim ? a.squeeze(*dim) : a.squeeze(); },
          py::arg("dim") = py::none())
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"))
      .def(
          "pad",
          [](const Tensor& a, const Bounds& padding, py::handle value, const std::string& mode) {
            return a.pad(padding, opt_number(value, "pad").value_or(Number(0)), pad_mode(mode));
          },
          py::arg("padding"), py::arg("value") = 0, py::arg("mode") = "constant",
          "One (before, after) pair per axis.")
      .def("shrink", &Tensor::shrink, py::arg("arg"), "One [begin, end) pair per axis.")
      .def(
          "flip", [](const Tensor& a, py::handle axis) { return a.flip(ints(axis)); }, py::arg("axis"))
      .def(
          "cat",
          [](const Tensor& a, py::args others, int64_t dim) {
            return a.cat(others.cast<std::vector<Tensor>>(), dim);
          },
          py::arg("dim") = 0)
      .def(
          "stack",
          [](const Tensor& a, py::args others, int64_t dim) {
            return a.stack(others.cast<std::vector<Tensor>>(), dim);
          },
          py::arg("dim") = 0)
      .def(
          "split",
          [](const Tensor& a, py::handle sizes, int64_t dim) {
            if (py::isinstance<py::int_>(sizes)) return a.split(sizes.cast<int64_t>(), dim);
            return a.split(sizes.cast<Shape>(), dim);
          },
          py::arg("sizes"), py::arg("dim") = 0)
      .def("chunk", &Tensor::chunk, py::arg("chunks"), py::arg("dim") = 0)
      .def(
          "roll",
          [](const Tensor& a, py::handle shifts, py::handle dims) {
            return a.roll(ints(shifts), ints(dims));
          },
          py::arg("shifts"), py::arg("dims"))
      .def("tril", &Tensor::tril, py::arg("diagonal") = 0)
      .def("triu", &Tensor::triu, py::arg("diagonal") = 0);
  m.def("cat", &cat, py::arg("tensors"), py::arg("dim") = 0);
  m.def("stack", &stack, py::arg("tensors"), py::arg("dim") = 0);

  // ------------------------------------------------------------------ indexing ops
  t.def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"))
      .def("index_select", &Tensor::index_select, py::arg("dim"), py::arg("index"))
      .def("one_hot", &Tensor::one_hot, py::arg("num_classes"))
      .def(
          "masked_fill",
          [](const Tensor& a, const Tensor& mask, py::handle value) {
            return a.masked_fill(mask, *opt_number(value, "masked_fill"));
          },
          py::arg("mask"), py::arg("value"));

  // ------------------------------------------------------------------ linear algebra
  t.def(
       "dot", [](const Tensor& a, const Tensor& w, py::handle acc) { return a.dot(w, to_dtype(acc, "dot")); },
       py::arg("w"), py::arg("acc_dtype") = py::none())
      .def(
          "matmul",
          [](const Tensor& a, const Tensor& w, py::handle acc) {
            return a.matmul(w, to_dtype(acc, "matmul"));
          },
          py::arg("w"), py::arg("acc_dtype") = py::none())
      .def_static(
          "einsum",
          [](const std::string& formula, py::args operands) {
            std::vector<Tensor> ops;
            // einsum("ij,jk", a, b) or einsum("ij,jk", [a, b])
            if (operands.size() == 1 && !py::isinstance<Tensor>(operands[0]))
              ops = operands[0].cast<std::vector<Tensor>>();
            else
              ops = operands.cast<std::vector<Tensor>>();
            return Tensor::einsum(formula, ops);
          },
          py::arg("formula"));

  // ------------------------------------------------------------------ nn functions
  t.def(
       "conv2d",
       [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, int64_t groups, py::handle stride,
          py::handle dilation, py::handle padding) {
         return x.conv2d(w, {.bias = bias,
                             .groups = groups,
                             .stride = ints(stride),
                             .dilation = ints(dilation),
                             .padding = ints(padding)});
       },
       py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
       py::arg("dilation") = 1, py::arg("padding") = 0)
      .def(
          "conv_transpose2d",
          [](const Tensor& x, const Tensor& w, std::optional<Tensor> bias, int64_t groups, py::handle stride,
             py::handle dilation, py::handle padding, py::handle output_padding) {
            return x.conv_transpose2d(w, {.bias = bias,
                                          .groups = groups,
                                          .stride = ints(stride),
                                          .dilation = ints(dilation),
                                          .padding = ints(padding),
                                          .output_padding = ints(output_padding)});
          },
          py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
          py::arg("dilation") = 1, py::arg("padding") = 0, py::arg("output_padding") = 0)
      .def(
          "max_pool2d",
          [](const Tensor& x, py::handle kernel, py::handle stride, py::handle dilation, py::handle padding,
             bool ceil_mode) {
            return x.max_pool2d({.kernel = ints(kernel),
                                 .stride = stride.is_none() ? std::vector<int64_t>{} : ints(stride),
                                 .dilation = ints(dilation),
                                 .padding = ints(padding),
                                 .ceil_mode = ceil_mode});
          },
          py::arg("kernel_size") = 2, py::arg("stride") = py::none(), py::arg("dilation") = 1,
          py::arg("padding") = 0, py::arg("ceil_mode") = false)
      .def(
          "avg_pool2d",
          [](const Tensor& x, py::handle kernel, py::handle stride, py::handle dilation, py::handle padding,
             bool ceil_mode, bool count_include_pad) {
            return x.avg_pool2d({.kernel = ints(kernel),
                                 .stride = stride.is_none() ? std::vector<int64_t>{} : ints(stride),
                                 .dilation = ints(dilation),
                                 .padding = ints(padding),
                                 .ceil_mode = ceil_mode,
                                 .count_include_pad = count_include_pad});
          },
          py::arg("kernel_size") = 2, py::arg("stride") = py::none(), py::arg("dilation") = 1,
          py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true)
      .def(
          "interpolate",
          [](const Tensor& x, const Shape& size, const std::string& mode, bool align_corners) {
            return x.interpolate(size, interpolate_mode(mode), align_corners);
          },
          py::arg("size"), py::arg("mode") = "linear", py::arg("align_corners") = false)
      .def("layernorm", &Tensor::layernorm, py::arg("axis") = -1, py::arg("eps") = 1e-5)
      .def("rmsnorm", &Tensor::rmsnorm, py::arg("axis") = -1, py::arg("eps") = 1e-6)
      .def("batchnorm", &Tensor::batchnorm, py::arg("weight"), py::arg("bias"), py::arg("mean"),
           py::arg("invstd"), py::arg("axis") = 1)
      .def("scaled_dot_product_attention", &Tensor::scaled_dot_product_attention, py::arg("key"),
           py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("is_causal") = false)
      .def(
          "cross_entropy",
          [](const Tensor& x, const Tensor& y, const std::string& r, double smoothing) {
            return x.cross_entropy(y, reduction(r, "cross_entropy"), smoothing);
          },
          py::arg("Y"), py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0)
      .def(
          "sparse_categorical_crossentropy",
          [](const Tensor& x, const Tensor& y, int64_t ignore_index, double smoothing, const std::string& r) {
            return x.sparse_categorical_crossentropy(y, ignore_index, smoothing,
                                                     reduction(r, "sparse_categorical_crossentropy"));
          },
          py::arg("Y"), py::arg("ignore_index") = -1, py::arg("label_smoothing") = 0.0,
          py::arg("reduction") = "mean")
      .def(
          "nll_loss",
          [](const Tensor& x, const Tensor& y, std::optional<Tensor> weight,
             std::optional<int64_t> ignore_index,
             const std::string& r) { return x.nll_loss(y, weight, ignore_index, reduction(r, "nll_loss")); },
          py::arg("Y"), py::arg("weight") = py::none(), py::arg("ignore_index") = py::none(),
          py::arg("reduction") = "mean")
      .def(
          "binary_crossentropy",
          [](const Tensor& x, const Tensor& y, const std::string& r) {
            return x.binary_cross_entropy(y, reduction(r, "binary_crossentropy"));
          },
          py::arg("Y"), py::arg("reduction") = "mean")
      .def(
          "binary_crossentropy_logits",
          [](const Tensor& x, const Tensor& y, const std::string& r) {
            return x.binary_cross_entropy_with_logits(y, reduction(r, "binary_crossentropy_logits"));
          },
          py::arg("Y"), py::arg("reduction") = "mean");
}

}  // namespace sluice::python
