#include "frontend/onnx/interpreter.h"

#include <algorithm>

#include "frontend/onnx/op.h"
#include "runtime/buffer.h"
#include "runtime/reference.h"

namespace sluice::onnx {
namespace {

// Rethrows e as its own class with the node named first. Nested subgraphs read as a path:
// "[onnx] m.onnx: node 'loop' (Loop) > node 'add' (Add): ...". The op's own "[Op] " prefix is dropped.
[[noreturn]] void rethrow_in_node(const Error& e, const RunState& rs, const Node& n) {
  const std::string head = "[onnx] " + rs.model->name + ": ";
  const std::string here = "node '" + n.name + "' (" + n.op_type + ")";
  std::string msg = e.what();
  if (msg.rfind(head, 0) == 0) {
    msg = head + here + " > " + msg.substr(head.size());
  } else {
    for (const std::string& own : {"[" + n.op_type + "] ", std::string("[onnx] ")})
      if (msg.rfind(own, 0) == 0) msg = msg.substr(own.size());
    msg = head + here + ": " + msg;
  }
  if (dynamic_cast<const ShapeError*>(&e)) throw ShapeError(msg);
  if (dynamic_cast<const DTypeError*>(&e)) throw DTypeError(msg);
  if (dynamic_cast<const ValueError*>(&e)) throw ValueError(msg);
  if (dynamic_cast<const DeviceError*>(&e)) throw DeviceError(msg);
  throw Error(msg);
}

}  // namespace

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_)
    if (auto it = s->values_.find(name); it != s->values_.end()) return &it->second;
  return nullptr;
}

Tensor constant_tensor(const std::shared_ptr<const TensorData>& d, RunState& rs) {
  if (auto it = rs.constants->find(d.get()); it != rs.constants->end()) return it->second;
  Tensor t = Tensor::from_host(d->host, d->shape, rs.device);
  rs.constants->emplace(d.get(), t);
  return t;
}

std::vector<Value> run_graph(const Graph& g, const std::vector<Value>& inputs, const Scope* outer,
                             RunState& rs) {
  Scope scope(outer);
  for (const auto& init : g.initializers) scope.set(init->name, constant_tensor(init, rs));
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const bool given = i < inputs.size() && !inputs[i].is_none();
    const bool has_default = std::any_of(g.initializers.begin(), g.initializers.end(),
                                         [&](const auto& d) { return d->name == g.inputs[i].name; });
    if (given || !has_default) scope.set(g.inputs[i].name, given ? inputs[i] : Value());
  }
  for (const Node& n : g.nodes) {
    std::vector<Value> in;
    in.reserve(n.inputs.size());
    for (const std::string& name : n.inputs) {
      if (name.empty()) {
        in.emplace_back();
        continue;
      }
      const Value* v = scope.find(name);
      SLUICE_CHECK_IN(ValueError, "onnx", v)
          << rs.model->name << ": node '" << n.name << "' (" << n.op_type << "): input '" << name
          << "' is not made by an earlier node, an initializer or a graph input";
      in.push_back(*v);
    }
    const OpDef* def = n.domain.empty() ? find_op(n.op_type) : nullptr;
    SLUICE_CHECK_IN(ValueError, "onnx", def)
        << rs.model->name << ": node '" << n.name << "': op " << (n.domain.empty() ? "" : n.domain + ".")
        << n.op_type << " is not supported";
    Values out;
    try {
      OpContext ctx(n, std::move(in), scope, rs);
      out = def->fn(ctx);
    } catch (const Error& e) { rethrow_in_node(e, rs, n); }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k].empty()) continue;
      SLUICE_CHECK_IN(ValueError, "onnx", k < out.size())
          << rs.model->name << ": node '" << n.name << "' (" << n.op_type << "): output " << k << " ('"
          << n.outputs[k] << "') is not produced by sluice's " << n.op_type;
      scope.set(n.outputs[k], out[k]);
    }
  }
  std::vector<Value> out;
  for (const ValueInfo& o : g.outputs) {
    const Value* v = scope.find(o.name);
    SLUICE_CHECK_IN(ValueError, "onnx", v) << rs.model->name << ": graph output '" << o.name
                                           << "' is not made by any node, initializer or input";
    out.push_back(*v);
  }
  return out;
}

namespace {

// What evaluating t on the host costs: the elements its computing nodes produce (movement ops are index
// arithmetic, buffers are read once). Adds the model inputs it reads to `inputs`.
int64_t host_cost(const Tensor& t, const RunState& rs, std::set<size_t>& inputs) {
  int64_t cost = 0;
  for (const UOp& u : t.uop().toposort()) {
    if (u.op() == Op::Buffer) {
      if (auto it = rs.input_buffers.find(u); it != rs.input_buffers.end()) inputs.insert(it->second);
    } else if (is_alu(u.op()) || u.op() == Op::ReduceAxis || u.op() == Op::Cast || u.op() == Op::Bitcast) {
      cost += std::max<int64_t>(u.numel(), u.src().empty() ? 0 : u.src(0).numel());
    }
  }
  return cost;
}

}  // namespace

bool fixed_by_model(const Tensor& t, const RunState& rs) {
  std::set<size_t> inputs;
  return host_cost(t, rs, inputs) <= rs.host_eval_limit && inputs.empty();
}

eval::HostArray host_values(const Tensor& t, RunState& rs) {
  if (host_cost(t, rs, rs.inputs_read) <= rs.host_eval_limit) return reference(t);
  rs.device_reads = true;
  Tensor r = t;
  r.realize();
  return reference(r);
}

}  // namespace sluice::onnx
