#include "frontend/onnx/model.h"

#include <chrono>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_set>

#include "frontend/onnx/interpreter.h"
#include "frontend/onnx/op.h"
#include "frontend/onnx/proto.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/jit.h"
#include "runtime/realize.h"
#include "runtime/reference.h"
#include "runtime/saved_plan.h"

namespace sluice::onnx {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Calls f(node) for every node of g and of its subgraphs.
void for_each_node(const Graph& g, const std::function<void(const Node&)>& f) {
  for (const Node& n : g.nodes) {
    f(n);
    for (const auto& [name, a] : n.attrs)
      if (const auto* sub = std::get_if<std::shared_ptr<const Graph>>(&a)) for_each_node(**sub, f);
  }
}

// Every value a node reads is made before it: by a node, an initializer, a graph input, or an enclosing
// graph. Checked once at load, so a run never meets a dangling name.
void check_names(const Graph& g, std::vector<const std::unordered_set<std::string>*>& outer,
                 const std::string& model) {
  std::unordered_set<std::string> known;
  for (const auto& i : g.inputs) known.insert(i.name);
  for (const auto& i : g.initializers) known.insert(i->name);
  auto defined = [&](const std::string& name) {
    if (known.count(name)) return true;
    for (const auto* o : outer)
      if (o->count(name)) return true;
    return false;
  };
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs)
      SLUICE_CHECK_IN(ValueError, "onnx", in.empty() || defined(in))
          << model << ": node '" << n.name << "' (" << n.op_type << ") reads '" << in
          << "', which no earlier node, initializer or graph input makes";
    outer.push_back(&known);
    for (const auto& [name, a] : n.attrs)
      if (const auto* sub = std::get_if<std::shared_ptr<const Graph>>(&a)) check_names(**sub, outer, model);
    outer.pop_back();
    for (const std::string& out : n.outputs)
      if (!out.empty()) known.insert(out);
  }
  for (const auto& o : g.outputs)
    SLUICE_CHECK_IN(ValueError, "onnx", defined(o.name))
        << model << ": graph output '" << o.name << "' is not made by any node, initializer or input";
}

bool same_values(const eval::HostArray& a, const eval::HostArray& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.i == b.i && a.f == b.f;
}

struct Sig {
  Shape shape;
  DType dtype;
  bool operator==(const Sig&) const = default;
};

// One way the graph ran for inputs of given shapes (and given values of the inputs it read on the host).
struct Plan {
  std::vector<Sig> sigs;
  std::map<size_t, eval::HostArray> read;  // input index -> the values the graph read
  bool replayable = false;
  std::string why;  // when not replayable
  std::unique_ptr<Jit> jit;
  std::vector<UOp> output_buffers;  // of the captured outputs (inputs aliasing them are copied first)
};

constexpr size_t kMaxPlansPerShape = 8;  // beyond: inputs read on the host vary too much to capture

}  // namespace

std::string unsupported_ops(const Graph& g) {
  std::map<std::string, std::vector<std::string>> bad;
  for_each_node(g, [&](const Node& n) {
    if (n.domain.empty() && find_op(n.op_type)) return;
    bad[(n.domain.empty() ? "" : n.domain + ".") + n.op_type].push_back(n.name);
  });
  std::ostringstream os;
  for (const auto& [op, nodes] : bad) {
    if (os.tellp() > 0) os << ", ";
    os << op << " (node" << (nodes.size() > 1 ? "s " : " ");
    for (size_t i = 0; i < nodes.size() && i < 5; ++i) os << (i ? ", '" : "'") << nodes[i] << "'";
    if (nodes.size() > 5) os << " and " << nodes.size() - 5 << " more";
    os << ")";
  }
  return os.str();
}

struct Model::Impl {
  // From the caller's options: a default-constructed ModelOptions would ask for the default device, which
  // probes every backend.
  Impl(std::shared_ptr<const ParsedModel> p, ModelOptions o) : parsed(std::move(p)), opt(std::move(o)) {}
  std::shared_ptr<const ParsedModel> parsed;
  ModelOptions opt;
  std::vector<ValueInfo> inputs;
  std::unordered_map<const TensorData*, Tensor> constants;
  std::vector<std::unique_ptr<Plan>> plans;
  Plan* last = nullptr;  // the plan the last run made or replayed; null when it ran unplanned
  RunInfo info;

  std::vector<Value> bind(const std::map<std::string, Value>& given);
  void check_outputs(const std::vector<Value>& out) const;
  std::vector<Value> build(const std::vector<Value>& in, RunState& rs);
  std::vector<Value> run_plain(const std::vector<Value>& in);
  std::vector<Value> run(const std::map<std::string, Value>& given);
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

Model Model::from_bytes(std::span<const std::byte> bytes, const std::string& name,
                        const std::string& base_dir, ModelOptions options) {
  return open(parse_model_bytes(bytes, name, base_dir), std::move(options));
}

Model Model::load(const std::string& path, ModelOptions options) {
  return open(parse_model_file(path), std::move(options));
}

Model Model::open(std::shared_ptr<const ParsedModel> parsed, ModelOptions options) {
  auto impl = std::make_unique<Impl>(std::move(parsed), std::move(options));
  impl->opt.device = canonical_device(impl->opt.device);
  const ParsedModel& m = *impl->parsed;
  SLUICE_CHECK_IN(ValueError, "onnx", m.opset >= kMinOpset && m.opset <= kMaxOpset)
      << m.name << ": imports opset " << m.opset << " of the default domain; sluice reads opsets "
      << kMinOpset << " to " << kMaxOpset;
  const std::string bad = unsupported_ops(*m.graph);
  SLUICE_CHECK_IN(ValueError, "onnx", bad.empty()) << m.name << ": ops sluice does not support: " << bad;
  std::vector<const std::unordered_set<std::string>*> outer;
  check_names(*m.graph, outer, m.name);
  for (const ValueInfo& i : m.graph->inputs) {
    bool init = false;
    for (const auto& d : m.graph->initializers) init |= d->name == i.name;
    if (!init) impl->inputs.push_back(i);
  }
  return Model(std::move(impl));
}

const std::string& Model::name() const { return impl_->parsed->name; }
const std::string& Model::device() const { return impl_->opt.device; }
int Model::opset() const { return impl_->parsed->opset; }
const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->parsed->graph->outputs; }
const ParsedModel& Model::parsed() const { return *impl_->parsed; }
const RunInfo& Model::last_run() const { return impl_->info; }
std::vector<Value> Model::run(const std::map<std::string, Value>& inputs) { return impl_->run(inputs); }

void Model::save(const std::string& path) const {
  const Impl& m = *impl_;
  SLUICE_CHECK_IN(ValueError, "save", m.last)
      << name() << ": "
      << (m.info.not_captured.empty() ? "run it once with inputs of the shapes to compile it for"
                                      : "its last run was not captured (" + m.info.not_captured + ")")
      << "; there is no plan to save";
  SavedPlan plan = save_plan(*m.last->jit);
  plan.label = name();
  for (size_t k = 0; k < plan.inputs.size(); ++k) {
    plan.inputs[k].name = m.inputs[k].name;
    if (auto it = m.last->read.find(k); it != m.last->read.end())
      plan.inputs[k].fixed = it->second.to_bytes();
  }
  for (size_t k = 0; k < plan.outputs.size(); ++k) plan.outputs[k].name = outputs()[k].name;
  write_plan_file(plan, path);
}

// The given values in declared order, checked against the declared types, on the model's device.
std::vector<Value> Model::Impl::bind(const std::map<std::string, Value>& given) {
  const std::string& model = parsed->name;
  for (const auto& [name, v] : given) {
    bool known = false;
    for (const ValueInfo& i : inputs) known |= i.name == name;
    if (known) continue;
    std::string names;
    for (const ValueInfo& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
    SLUICE_FAIL(ValueError, "onnx") << model << ": no input is named '" << name << "' (inputs: " << names
                                    << ")";
  }
  std::map<std::string, int64_t> symbols;  // symbolic dims bound so far
  std::vector<Value> out;
  for (const ValueInfo& info : inputs) {
    auto it = given.find(info.name);
    if (it == given.end() || it->second.is_none()) {
      SLUICE_CHECK_IN(ValueError, "onnx", info.kind == ValueInfo::Kind::Optional)
          << model << ": input '" << info.name << "' (" << info.type_str() << ") is missing";
      out.emplace_back();
      continue;
    }
    const Value& v = it->second;
    const bool want_seq = info.kind == ValueInfo::Kind::Sequence ||
                          (info.kind == ValueInfo::Kind::Optional && info.optional_of_sequence);
    SLUICE_CHECK_IN(ValueError, "onnx", v.is_sequence() == want_seq)
        << model << ": input '" << info.name << "' is declared " << info.type_str() << ", got " << v.str();
    auto check_tensor = [&](const Tensor& t) {
      SLUICE_CHECK_IN(DTypeError, "onnx", !info.known_dtype || t.dtype() == info.dtype)
          << model << ": input '" << info.name << "' is declared " << info.type_str() << ", got "
          << onnx_type_name(t.dtype()) << " " << tuple_str(t.shape());
      if (!info.has_shape || want_seq) return;
      SLUICE_CHECK_IN(ShapeError, "onnx", t.ndim() == int64_t(info.shape.size()))
          << model << ": input '" << info.name << "' is declared " << info.type_str() << " (rank "
          << info.shape.size() << "), got shape " << tuple_str(t.shape());
      for (size_t d = 0; d < info.shape.size(); ++d) {
        const Dim& dim = info.shape[d];
        const int64_t got = t.shape()[d];
        if (dim.size >= 0) {
          SLUICE_CHECK_IN(ShapeError, "onnx", got == dim.size)
              << model << ": input '" << info.name << "' is declared " << info.type_str() << ", got shape "
              << tuple_str(t.shape()) << " (dim " << d << " is " << got << ", not " << dim.size << ")";
        } else if (!dim.symbol.empty()) {
          auto [s, fresh] = symbols.try_emplace(dim.symbol, got);
          SLUICE_CHECK_IN(ShapeError, "onnx", fresh || s->second == got)
              << model << ": input '" << info.name << "' has " << dim.symbol << " = " << got << " (dim " << d
              << "), but an earlier input bound " << dim.symbol << " = " << s->second;
        }
      }
    };
    if (v.is_tensor()) {
      check_tensor(v.tensor());
      out.emplace_back(v.tensor().to(opt.device));
    } else {
      std::vector<Tensor> items;
      for (const Tensor& t : v.items()) {
        check_tensor(t);
        items.push_back(t.to(opt.device));
      }
      out.push_back(Value::sequence(std::move(items), v.sequence_dtype()));
    }
  }
  return out;
}

void Model::Impl::check_outputs(const std::vector<Value>& out) const {
  const auto& decl = parsed->graph->outputs;
  for (size_t k = 0; k < out.size() && k < decl.size(); ++k) {
    const ValueInfo& info = decl[k];
    if (!out[k].is_tensor() || info.kind != ValueInfo::Kind::Tensor) continue;
    const Tensor& t = out[k].tensor();
    bool ok = !info.known_dtype || t.dtype() == info.dtype;
    if (info.has_shape) {
      ok &= t.ndim() == int64_t(info.shape.size());
      for (size_t d = 0; ok && d < info.shape.size(); ++d)
        ok &= info.shape[d].size < 0 || info.shape[d].size == t.shape()[d];
    }
    SLUICE_CHECK_IN(ShapeError, "onnx", ok)
        << parsed->name << ": output '" << info.name << "' is declared " << info.type_str()
        << ", but the graph computes " << onnx_type_name(t.dtype()) << " " << tuple_str(t.shape());
  }
}

std::vector<Value> Model::Impl::build(const std::vector<Value>& in, RunState& rs) {
  rs.model = parsed.get();
  rs.device = opt.device;
  rs.constants = &constants;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].is_tensor())
      if (UOp b = in[k].tensor().dense_buffer()) rs.input_buffers.emplace(b, k);
  const auto t0 = Clock::now();
  std::vector<Value> out = run_graph(*parsed->graph, in, nullptr, rs);
  info.build_ms = ms_since(t0);
  return out;
}

// Builds and realizes the graph without capturing it.
std::vector<Value> Model::Impl::run_plain(const std::vector<Value>& in) {
  RunState rs;
  std::vector<Value> out = build(in, rs);
  std::vector<Tensor> flat;
  for (const Value& v : out) {
    if (v.is_tensor()) flat.push_back(v.tensor());
    if (v.is_sequence())
      for (const Tensor& t : v.items()) flat.push_back(t);
  }
  if (!flat.empty()) {
    RealizeReport rep;
    std::vector<UOp> forms = realizer(opt.device).realize(flat, &rep);
    size_t k = 0;
    for (Value& v : out) {
      if (v.is_tensor()) v = Tensor(forms[k++], opt.device);
      if (v.is_sequence()) {
        std::vector<Tensor> items;
        for (size_t i = 0; i < v.items().size(); ++i) items.emplace_back(forms[k++], opt.device);
        v = Value::sequence(std::move(items), v.sequence_dtype());
      }
    }
    info.kernels = rep.kernels.size() + rep.copies;
    for (const auto& kr : rep.kernels) info.compiled += kr.compiled;
    info.schedule_ms = rep.schedule_ms, info.codegen_ms = rep.codegen_ms, info.compile_ms = rep.compile_ms;
  }
  return out;
}

std::vector<Value> Model::Impl::run(const std::map<std::string, Value>& given) {
  const auto t0 = Clock::now();
  info = {};
  last = nullptr;
  std::vector<Value> in = bind(given);
  bool tensors_only = true;
  for (const Value& v : in) tensors_only &= v.is_tensor();
  for (const ValueInfo& o : parsed->graph->outputs) tensors_only &= o.kind == ValueInfo::Kind::Tensor;
  if (!opt.capture || !tensors_only) {
    info.not_captured = !opt.capture ? "capture is off" : "sequence or optional values";
    std::vector<Value> out = run_plain(in);
    check_outputs(out);
    info.total_ms = ms_since(t0);
    return out;
  }
  std::vector<Tensor> ts;
  std::vector<Sig> sigs;
  for (Value& v : in) {
    Tensor t = v.tensor();
    if (!t.dense_buffer()) t = t.contiguous();  // a lazy input: the JIT realizes it into a buffer of its own
    ts.push_back(t);
    sigs.push_back({t.shape(), t.dtype()});
  }
  // A plan of these shapes whose host-read inputs hold the same values now.
  Plan* plan = nullptr;
  size_t same_shape = 0;
  for (auto& p : plans) {
    if (p->sigs != sigs) continue;
    ++same_shape;
    bool match = true;
    for (const auto& [k, vals] : p->read) match &= same_values(reference(ts[k]), vals);
    if (match) {
      plan = p.get();
      break;
    }
  }
  if (plan && plan->replayable) {
    // An input that is a captured output (a state fed back) is copied: the replay overwrites it.
    for (Tensor& t : ts) {
      UOp b = t.dense_buffer();
      if (std::find(plan->output_buffers.begin(), plan->output_buffers.end(), b) !=
          plan->output_buffers.end()) {
        Tensor copy = Tensor::empty(t.shape(), t.dtype(), opt.device);
        copy.assign(t);
        t = copy.realize();
      }
    }
    std::vector<Tensor> outs = (*plan->jit)(ts);
    last = plan;
    info.replayed = true;
    info.kernels = plan->jit->kernel_count();
    info.total_ms = ms_since(t0);
    return {outs.begin(), outs.end()};
  }
  if (plan || same_shape >= kMaxPlansPerShape) {  // known to be data-dependent, or too many variants
    info.not_captured = plan ? plan->why : "the values the graph reads on the host vary from run to run";
    std::vector<Value> out = run_plain(in);
    check_outputs(out);
    info.total_ms = ms_since(t0);
    return out;
  }
  auto p = std::make_unique<Plan>();
  p->sigs = sigs;
  RunState rs;
  std::vector<Value> built;
  p->jit = std::make_unique<Jit>(
      [&](const std::vector<Tensor>& jin) {
        std::vector<Value> vin(jin.begin(), jin.end());
        built = build(vin, rs);
        std::vector<Tensor> outs;
        for (const Value& v : built) outs.push_back(v.tensor());
        return outs;
      },
      JitOptions{.capture_first_call = true});
  std::vector<Tensor> outs = (*p->jit)(ts);
  const RealizeReport& rep = p->jit->report();
  info.kernels = rep.kernels.size() + rep.copies;
  for (const auto& kr : rep.kernels) info.compiled += kr.compiled;
  info.schedule_ms = rep.schedule_ms, info.codegen_ms = rep.codegen_ms, info.compile_ms = rep.compile_ms;
  std::vector<Value> out(outs.begin(), outs.end());
  check_outputs(out);
  for (size_t k : rs.inputs_read) p->read[k] = reference(ts[k]);
  // An output that is an input (or a view of one) would replay as the captured input's buffer.
  bool passthrough = false;
  for (const Tensor& o : outs) {
    UOp b = o.dense_buffer();
    p->output_buffers.push_back(b);
    for (const Tensor& t : ts) passthrough |= b && b == t.dense_buffer();
  }
  p->replayable = p->jit->captured() && !passthrough && !rs.device_reads && !rs.fresh_random;
  p->why = rs.device_reads
               ? "the graph reads values computed on the device (data-dependent shapes or control flow)"
           : rs.fresh_random ? "an unseeded random op draws new numbers on every run"
           : passthrough     ? "an output is an input passed through"
                             : p->jit->why();
  info.captured = p->replayable;
  if (!p->replayable) info.not_captured = p->why;
  if (p->replayable) last = p.get();
  plans.push_back(std::move(p));
  info.total_ms = ms_since(t0);
  return out;
}

}  // namespace sluice::onnx
