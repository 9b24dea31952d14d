// sluice.nn: the layers of runtime/nn.h. A layer's tensors (weight, bias, running statistics) are its
// members: reading one gives a Tensor that refers to the member itself (keeping the layer alive), so an
// optimizer built from layer.parameters() updates the layer in place, as in C++.
#include "runtime/nn.h"
#include "bindings.h"

namespace sluice::python {

namespace {

constexpr auto kRef = py::return_value_policy::reference_internal;

template <class L>
Tensor* bias_of(L& l) {
  return l.bias ? &*l.bias : nullptr;  // None for a layer built with bias=False
}

}  // namespace

void bind_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("nn", "Layers with PyTorch's initializations and state_dict keys.");
  // PyTorch's initializers, seeded (the same seed gives the same weights on every device).
  nn.def(
      "kaiming_uniform",
      [](const Shape& shape, uint64_t seed, double a, py::handle device) {
        return nn::kaiming_uniform(shape, seed, a, to_device(device));
      },
      py::arg("shape"), py::arg("seed") = 0, py::arg("a") = 0.0, py::arg("device") = py::none());
  nn.def(
      "kaiming_normal",
      [](const Shape& shape, uint64_t seed, double a, py::handle device) {
        return nn::kaiming_normal(shape, seed, a, to_device(device));
      },
      py::arg("shape"), py::arg("seed") = 0, py::arg("a") = 0.0, py::arg("device") = py::none());
  nn.def(
      "xavier_uniform",
      [](const Shape& shape, uint64_t seed, double gain, py::handle device) {
        return nn::xavier_uniform(shape, seed, gain, to_device(device));
      },
      py::arg("shape"), py::arg("seed") = 0, py::arg("gain") = 1.0, py::arg("device") = py::none());
  nn.def(
      "xavier_normal",
      [](const Shape& shape, uint64_t seed, double gain, py::handle device) {
        return nn::xavier_normal(shape, seed, gain, to_device(device));
      },
      py::arg("shape"), py::arg("seed") = 0, py::arg("gain") = 1.0, py::arg("device") = py::none());

  py::class_<nn::Module>(nn, "Module")
      .def("parameters", &nn::Module::parameters, kRef,
           "The trained tensors, in order (what an optimizer takes).")
      .def("state_dict", &nn::Module::state_dict)
      .def("load_state_dict", &nn::Module::load_state_dict, py::arg("state"))
      .def("train", &nn::Module::train, py::arg("mode") = true)
      .def("eval", &nn::Module::eval)
      .def_property_readonly("training", &nn::Module::training)
      .def("take_updates", &nn::Module::take_updates,
           "The buffer writes forward calls made since the last call (BatchNorm's running statistics).");

  py::class_<nn::Linear, nn::Module>(nn, "Linear")
      .def(py::init([](int64_t in, int64_t out, bool bias, uint64_t seed, py::handle device) {
             return new nn::Linear(in, out, bias, seed, to_device(device));
           }),
           py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true, py::arg("seed") = 0,
           py::arg("device") = py::none())
      .def("__call__", &nn::Linear::operator(), py::arg("x"))
      .def_readwrite("weight", &nn::Linear::weight)
      .def_property_readonly("bias", &bias_of<nn::Linear>, kRef);

  py::class_<nn::Conv2d, nn::Module>(nn, "Conv2d")
      .def(py::init([](int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                       int64_t dilation, int64_t groups, bool bias, uint64_t seed, py::handle device) {
             return new nn::Conv2d(in, out, kernel, {stride, padding, dilation, groups, bias, seed},
                                   to_device(device));
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true,
           py::arg("seed") = 0, py::arg("device") = py::none())
      .def("__call__", &nn::Conv2d::operator(), py::arg("x"))
      .def_readwrite("weight", &nn::Conv2d::weight)
      .def_property_readonly("bias", &bias_of<nn::Conv2d>, kRef);

  py::class_<nn::ConvTranspose2d, nn::Module>(nn, "ConvTranspose2d")
      .def(py::init([](int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                       int64_t output_padding, int64_t dilation, int64_t groups, bool bias, uint64_t seed,
                       py::handle device) {
             return new nn::ConvTranspose2d(in, out, kernel,
                                            {stride, padding, output_padding, dilation, groups, bias, seed},
                                            to_device(device));
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"), py::arg("stride") = 1,
           py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("dilation") = 1,
           py::arg("groups") = 1, py::arg("bias") = true, py::arg("seed") = 0, py::arg("device") = py::none())
      .def("__call__", &nn::ConvTranspose2d::operator(), py::arg("x"))
      .def_readwrite("weight", &nn::ConvTranspose2d::weight)
      .def_property_readonly("bias", &bias_of<nn::ConvTranspose2d>, kRef);

  py::class_<nn::BatchNorm, nn::Module>(nn, "BatchNorm")
      .def(py::init([](int64_t channels, double eps, double momentum, py::handle device) {
             return new nn::BatchNorm(channels, eps, momentum, to_device(device));
           }),
           py::arg("num_features"), py::arg("eps") = 1e-5, py::arg("momentum") = 0.1,
           py::arg("device") = py::none())
      .def("__call__", &nn::BatchNorm::operator(), py::arg("x"))
      .def_readwrite("weight", &nn::BatchNorm::weight)
      .def_readwrite("bias", &nn::BatchNorm::bias)
      .def_readwrite("running_mean", &nn::BatchNorm::running_mean)
      .def_readwrite("running_var", &nn::BatchNorm::running_var)
      .def_readwrite("num_batches_tracked", &nn::BatchNorm::num_batches_tracked);

  py::class_<nn::LayerNorm, nn::Module>(nn, "LayerNorm")
      .def(py::init([](py::handle shape, double eps, py::handle device) {
             Shape s = py::isinstance<py::int_>(shape) ? Shape{shape.cast<int64_t>()} : shape.cast<Shape>();
             return new nn::LayerNorm(s, eps, to_device(device));
           }),
           py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("device") = py::none())
      .def("__call__", &nn::LayerNorm::operator(), py::arg("x"))
      .def_readwrite("weight", &nn::LayerNorm::weight)
      .def_readwrite("bias", &nn::LayerNorm::bias);

  py::class_<nn::RMSNorm, nn::Module>(nn, "RMSNorm")
      .def(py::init([](int64_t dim, double eps, py::handle device) {
             return new nn::RMSNorm(dim, eps, to_device(device));
           }),
           py::arg("dim"), py::arg("eps") = 1e-6, py::arg("device") = py::none())
      .def("__call__", &nn::RMSNorm::operator(), py::arg("x"))
      .def_readwrite("weight", &nn::RMSNorm::weight);

  py::class_<nn::GroupNorm, nn::Module>(nn, "GroupNorm")
      .def(py::init([](int64_t groups, int64_t channels, double eps, py::handle device) {
             return new nn::GroupNorm(groups, channels, eps, to_device(device));
           }),
           py::arg("num_groups"), py::arg("num_channels"), py::arg("eps") = 1e-5,
           py::arg("device") = py::none())
      .def("__call__", &nn::GroupNorm::operator(), py::arg("x"))
      .def_readwrite("weight", &nn::GroupNorm::weight)
      .def_readwrite("bias", &nn::GroupNorm::bias);

  py::class_<nn::Embedding, nn::Module>(nn, "Embedding")
      .def(py::init([](int64_t num, int64_t dim, uint64_t seed, py::handle device) {
             return new nn::Embedding(num, dim, seed, to_device(device));
           }),
           py::arg("num_embeddings"), py::arg("embedding_dim"), py::arg("seed") = 0,
           py::arg("device") = py::none())
      .def("__call__", &nn::Embedding::operator(), py::arg("indices"))
      .def_readwrite("weight", &nn::Embedding::weight);

  py::class_<nn::Dropout, nn::Module>(nn, "Dropout")
      .def(py::init([](double p, uint64_t seed, py::handle device) {
             return new nn::Dropout(p, seed, to_device(device));
           }),
           py::arg("p") = 0.5, py::arg("seed") = 0, py::arg("device") = py::none())
      .def("__call__", &nn::Dropout::operator(), py::arg("x"));

  py::class_<nn::MultiheadAttention, nn::Module>(nn, "MultiheadAttention")
      .def(py::init([](int64_t embed_dim, int64_t num_heads, bool bias, bool batch_first, uint64_t seed,
                       py::handle device) {
             return new nn::MultiheadAttention(embed_dim, num_heads, {bias, batch_first, seed},
                                               to_device(device));
           }),
           py::arg("embed_dim"), py::arg("num_heads"), py::arg("bias") = true, py::arg("batch_first") = false,
           py::arg("seed") = 0, py::arg("device") = py::none())
      .def("__call__", &nn::MultiheadAttention::operator(), py::arg("query"), py::arg("key"),
           py::arg("value"), py::arg("attn_mask") = py::none(), py::arg("key_padding_mask") = py::none(),
           py::arg("is_causal") = false)
      .def_readwrite("in_proj_weight", &nn::MultiheadAttention::in_proj_weight)
      .def_property_readonly(
          "in_proj_bias",
          [](nn::MultiheadAttention& l) { return l.in_proj_bias ? &*l.in_proj_bias : nullptr; }, kRef)
      .def_property_readonly(
          "out_proj", [](nn::MultiheadAttention& l) { return &l.out_proj; }, kRef);
}

}  // namespace sluice::python
