#include "frontend/onnx/compiled_model.h"

#include <algorithm>
#include <sstream>

#include "base/error.h"
#include "frontend/onnx/proto.h"
#include "runtime/jit.h"
#include "runtime/reference.h"
#include "runtime/saved_plan.h"

namespace sluice::onnx {
namespace {

ValueInfo info_of(const PlanTensor& t) {
  ValueInfo v;
  v.name = t.name;
  v.known_dtype = v.has_shape = true;
  v.dtype = t.dtype;
  for (int64_t d : t.shape) v.shape.push_back({d, ""});
  return v;
}

std::string values_str(const eval::HostArray& a) {
  std::ostringstream os;
  os << "(";
  for (int64_t k = 0; k < a.numel() && k < 8; ++k) os << (k ? ", " : "") << a.value(k);
  os << (a.numel() > 8 ? ", ...)" : ")");
  return os.str();
}

}  // namespace

struct CompiledModel::Impl {
  std::string path, name, device;
  std::vector<ValueInfo> inputs, outputs;
  std::vector<std::vector<std::byte>> fixed;  // per input: the values it was compiled for (empty: any)
  Jit jit{nullptr};
  std::vector<UOp> output_buffers;
};

CompiledModel::CompiledModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledModel::~CompiledModel() = default;
CompiledModel::CompiledModel(CompiledModel&&) noexcept = default;
CompiledModel& CompiledModel::operator=(CompiledModel&&) noexcept = default;

CompiledModel CompiledModel::load(const std::string& path, const std::string& device) {
  SavedPlan plan = read_plan_file(path);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->name = plan.label;
  plan.label = path + " (" + impl->name + ")";  // what load_plan's errors name
  impl->jit = load_plan(plan, device);
  impl->device = canonical_device(device.empty() ? plan.target.device : device);
  for (const PlanTensor& t : plan.inputs) {
    impl->inputs.push_back(info_of(t));
    impl->fixed.push_back(t.fixed);
  }
  for (const PlanTensor& t : plan.outputs) impl->outputs.push_back(info_of(t));
  return CompiledModel(std::move(impl));
}

const std::string& CompiledModel::name() const { return impl_->name; }
const std::string& CompiledModel::device() const { return impl_->device; }
const std::vector<ValueInfo>& CompiledModel::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& CompiledModel::outputs() const { return impl_->outputs; }

std::vector<Value> CompiledModel::run(const std::map<std::string, Value>& given) {
  Impl& m = *impl_;
  std::string names;
  for (const ValueInfo& i : m.inputs) names += (names.empty() ? "" : ", ") + i.name;
  for (const auto& [name, v] : given) {
    const bool known =
        std::any_of(m.inputs.begin(), m.inputs.end(), [&](const ValueInfo& i) { return i.name == name; });
    SLUICE_CHECK_IN(ValueError, "onnx", known)
        << m.path << ": no input is named '" << name << "' (inputs: " << names << ")";
  }
  std::vector<Tensor> ts;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    const ValueInfo& info = m.inputs[k];
    auto it = given.find(info.name);
    SLUICE_CHECK_IN(ValueError, "onnx", it != given.end() && it->second.is_tensor())
        << m.path << ": input '" << info.name << "' (" << info.type_str() << ") is "
        << (it == given.end() ? "missing" : "not a tensor: " + it->second.str());
    Tensor t = it->second.tensor();
    SLUICE_CHECK_IN(DTypeError, "onnx", t.dtype() == info.dtype)
        << m.path << ": input '" << info.name << "' was compiled for " << info.type_str() << ", got "
        << onnx_type_name(t.dtype()) << " " << tuple_str(t.shape());
    Shape want;
    for (const Dim& d : info.shape) want.push_back(d.size);
    SLUICE_CHECK_IN(ShapeError, "onnx", t.shape() == want)
        << m.path << ": input '" << info.name << "' was compiled for " << info.type_str() << ", got shape "
        << tuple_str(t.shape()) << " (compile the model again for this shape)";
    if (!m.fixed[k].empty()) {
      eval::HostArray got = reference(t);
      if (got.to_bytes() != m.fixed[k])
        SLUICE_FAIL(ValueError, "onnx")
            << m.path << ": the model read input '" << info.name
            << "' on the host when it was compiled, so it holds "
            << "only for the value it had then, "
            << values_str(eval::HostArray::from_bytes(t.dtype(), t.shape(), m.fixed[k])) << "; got "
            << values_str(got) << " (compile the model again with this value)";
    }
    t = t.to(m.device);
    // An input that is an output of the last run (a state fed back) is copied: the replay overwrites it.
    if (UOp b = t.dense_buffer();
        b && std::find(m.output_buffers.begin(), m.output_buffers.end(), b) != m.output_buffers.end()) {
      Tensor copy = Tensor::empty(t.shape(), t.dtype(), m.device);
      copy.assign(t);
      t = copy.realize();
    }
    if (!t.dense_buffer()) t = t.contiguous();
    ts.push_back(t);
  }
  std::vector<Tensor> outs = m.jit(ts);
  m.output_buffers.clear();
  for (const Tensor& o : outs) m.output_buffers.push_back(o.dense_buffer());
  return {outs.begin(), outs.end()};
}

}  // namespace sluice::onnx
