#pragma once
// Builds small ONNX models in tests with the ONNX project's protobuf classes, serialized to bytes that
// Model::from_bytes loads (or to a file that Model::load reads).
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace sluice::onnx::test {

// A dimension: a size, or a symbol when the string is not empty.
struct D {
  int64_t size = -1;
  std::string symbol;
  D(int64_t s) : size(s) {}        // NOLINT: implicit, as in {2, 3}
  D(const char* s) : symbol(s) {}  // NOLINT
};

inline void set_type(::onnx::ValueInfoProto* v, const std::string& name, int elem, std::vector<D> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* s = t->mutable_shape();
  for (const D& d : dims) {
    auto* x = s->add_dim();
    if (d.symbol.empty())
      x->set_dim_value(d.size);
    else
      x->set_dim_param(d.symbol);
  }
}

class GraphBuilder {
 public:
  explicit GraphBuilder(::onnx::GraphProto* g) : g_(g) {}
  GraphBuilder& input(const std::string& name, int elem, std::vector<D> dims) {
    set_type(g_->add_input(), name, elem, std::move(dims));
    return *this;
  }
  GraphBuilder& output(const std::string& name, int elem, std::vector<D> dims) {
    set_type(g_->add_output(), name, elem, std::move(dims));
    return *this;
  }
  // An output without a declared shape.
  GraphBuilder& output_any(const std::string& name, int elem) {
    auto* v = g_->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    return *this;
  }
  ::onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                          const std::string& name = "") {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  // An int64 or float initializer.
  ::onnx::TensorProto* ints(const std::string& name, std::vector<int64_t> v,
                            std::vector<int64_t> dims = {-1}) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    if (dims == std::vector<int64_t>{-1}) dims = {int64_t(v.size())};
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t x : v) t->add_int64_data(x);
    return t;
  }
  ::onnx::TensorProto* floats(const std::string& name, std::vector<float> v, std::vector<int64_t> dims) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
    return t;
  }
  ::onnx::GraphProto* proto() { return g_; }

 private:
  ::onnx::GraphProto* g_;
};

inline void attr(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void attr(::onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void attr_f(::onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void attr_floats(::onnx::NodeProto* n, const std::string& name, std::vector<float> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void attr_s(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void attr_strings(::onnx::NodeProto* n, const std::string& name, std::vector<std::string> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a->add_strings(x);
}
inline ::onnx::GraphProto* attr_graph(::onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  return a->mutable_g();
}

struct ModelBuilder {
  ::onnx::ModelProto m;
  explicit ModelBuilder(int opset = 13) {
    m.set_ir_version(8);
    m.set_producer_name("sluice-test");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m.mutable_graph()->set_name("g");
  }
  GraphBuilder graph() { return GraphBuilder(m.mutable_graph()); }
  std::vector<std::byte> bytes() const {
    std::string s = m.SerializeAsString();
    std::vector<std::byte> b(s.size());
    std::memcpy(b.data(), s.data(), s.size());
    return b;
  }
};

}  // namespace sluice::onnx::test
