// ONNX ops: control flow (If, Loop, Scan), sequences and optionals (op.h).
// Control flow unrolls on the host: an If reads its condition and runs one branch, a Loop runs its body once
// per iteration (reading the condition the body returns), a Scan once per step of its scan axis, which is a
// shape. Each run of a body builds more lazy Tensor ops, so the whole unrolled graph still fuses and runs on
// the device. A sequence is a host list of tensors (value.h); an optional is its value, or None when empty.
#include <algorithm>

#include "frontend/onnx/op.h"
#include "frontend/onnx/proto.h"

namespace sluice::onnx {
namespace {

// A scalar of the run's device.
Tensor scalar(OpContext& c, Number v, DType dtype) { return Tensor::full({}, v, dtype, c.device()); }

// An int64 tensor input read as one number (a position, a trip count).
int64_t one_int(OpContext& c, size_t i) {
  std::vector<int64_t> v = c.ints(i);
  SLUICE_CHECK_IN(ValueError, c.op(), v.size() == 1)
      << "input " << i << " must hold one value, got " << v.size();
  return v[0];
}

// A value the body returned as a bool condition.
bool truth(OpContext& c, const Value& v) {
  eval::HostArray a = c.host(v.tensor(c.op()));
  SLUICE_CHECK_IN(ValueError, c.op(), a.numel() == 1) << "a condition must hold one value, got " << a.numel();
  return a.value(0) != 0;
}

// An axis in [-rank, rank) as a non-negative one.
int64_t normal_axis(OpContext& c, int64_t axis, int64_t rank) {
  SLUICE_CHECK_IN(ValueError, c.op(), axis >= -rank && axis < rank)
      << "axis " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

// Joins tensors along `axis` (a new one when `new_axis`).
Tensor join(std::vector<Tensor> parts, int64_t axis, bool new_axis) {
  if (new_axis)
    for (Tensor& t : parts) t = t.unsqueeze(axis);
  return bounded_cat(std::move(parts), axis);
}

// A body output stacked along `axis` over zero iterations: empty there, with the shape the body declares
// elsewhere (an unknown dim reads as 0: the tensor is empty either way).
Tensor empty_stack(OpContext& c, const ValueInfo& info, int64_t axis) {
  Shape shape;
  for (const Dim& d : info.shape) shape.push_back(std::max<int64_t>(d.size, 0));
  shape.insert(shape.begin() + normal_axis(c, axis, int64_t(shape.size()) + 1), 0);
  return Tensor::zeros(shape, info.dtype, c.device());
}

// ---------------------------------------------------------------- If, Loop, Scan

// The values an iteration hands the next, each tensor a realize point: left lazy, every kernel of a later
// iteration that reads one (a reduction, a matmul) would recompute the whole chain of iterations before it.
Values carry(Values values) {
  for (Value& v : values)
    if (v.is_tensor()) v = v.tensor().contiguous();
  return values;
}

Values x_if(OpContext& c) {
  return c.run_subgraph(c.attr_graph(truth(c, c.value(0)) ? "then_branch" : "else_branch"), {});
}

// Inputs M (trip count), cond, then the loop-carried values; the body takes (iteration, cond, carried...) and
// returns (cond, carried..., scan outputs...). Outputs: the final carried values, then each scan output's
// per-iteration values stacked along a new axis 0.
Values x_loop(OpContext& c) {
  const Graph& body = c.attr_graph("body");
  const size_t carried = c.size() < 2 ? 0 : c.size() - 2;
  SLUICE_CHECK_IN(ValueError, c.op(), body.outputs.size() >= 1 + carried)
      << "the body returns " << body.outputs.size() << " values, fewer than the condition and " << carried
      << " loop-carried values";
  const size_t scans = body.outputs.size() - 1 - carried;
  const std::optional<int64_t> trips = c.has(0) ? std::optional<int64_t>(one_int(c, 0)) : std::nullopt;
  SLUICE_CHECK_IN(ValueError, c.op(), trips || c.has(1))
      << "neither a trip count nor a condition is given: the loop would not end";
  bool go = !c.has(1) || truth(c, c.value(1));
  Values state(c.inputs().begin() + std::min<long>(2, long(c.size())), c.inputs().end());
  std::vector<std::vector<Tensor>> scanned(scans);
  for (int64_t i = 0; go && (!trips || i < *trips); ++i) {
    Values in{scalar(c, i, dtypes::int64), scalar(c, go, dtypes::bool_)};
    in.insert(in.end(), state.begin(), state.end());
    Values out = c.run_subgraph(body, in);
    state = carry(Values(out.begin() + 1, out.begin() + 1 + long(carried)));
    for (size_t k = 0; k < scans; ++k) scanned[k].push_back(out[1 + carried + k].tensor(c.op()));
    // The body's condition decides whether another iteration runs, with or without an input cond (the spec's
    // pseudo-code ignores it without one; onnxruntime and the reference implementation do not).
    go = truth(c, out[0]);
  }
  Values result = state;
  for (size_t k = 0; k < scans; ++k)
    result.push_back(scanned[k].empty() ? empty_stack(c, body.outputs[1 + carried + k], 0)
                                        : join(scanned[k], 0, true));
  return result;
}

// How a Scan walks its inputs and lays out its outputs.
struct ScanPlan {
  std::vector<int64_t> in_axes, in_reverse, out_axes, out_reverse;
};

// Runs a Scan body over `length` steps: `states` carried, step t reads index t (from the end when reversed)
// of each scan input along its axis. Returns the final states followed by each scan output, stacked along its
// axis (in reverse step order when so directed).
Values scan_steps(OpContext& c, const Graph& body, Values states, const std::vector<Tensor>& inputs,
                  const ScanPlan& plan, int64_t length) {
  const size_t n = states.size();
  const size_t outs = body.outputs.size() - n;
  std::vector<std::vector<Tensor>> scanned(outs);
  for (int64_t t = 0; t < length; ++t) {
    Values in = states;
    for (size_t j = 0; j < inputs.size(); ++j)
      in.push_back(inputs[j].select(plan.in_axes[j], plan.in_reverse[j] ? length - 1 - t : t));
    Values out = c.run_subgraph(body, in);
    states = carry(Values(out.begin(), out.begin() + long(n)));
    for (size_t k = 0; k < outs; ++k) scanned[k].push_back(out[n + k].tensor(c.op()));
  }
  Values result = states;
  for (size_t k = 0; k < outs; ++k) {
    const int64_t axis = k < plan.out_axes.size() ? plan.out_axes[k] : 0;
    if (scanned[k].empty()) {
      result.push_back(empty_stack(c, body.outputs[n + k], axis));
      continue;
    }
    if (k < plan.out_reverse.size() && plan.out_reverse[k])
      std::reverse(scanned[k].begin(), scanned[k].end());
    result.push_back(join(scanned[k], normal_axis(c, axis, scanned[k][0].ndim() + 1), true));
  }
  return result;
}

// Opset 8: input 0 is sequence_lens, every other input has a batch axis 0 and scan inputs scan along axis 1.
// Each batch entry runs on its own for its own length; the scan outputs of shorter ones are zero-padded.
Values scan8(OpContext& c, const Graph& body, size_t num_scan) {
  const size_t n = c.size() - 1 - num_scan;
  SLUICE_CHECK_IN(ValueError, c.op(), c.size() >= 1 + num_scan && body.outputs.size() >= n)
      << "the node has " << c.size() << " inputs and the body " << body.outputs.size() << " outputs for "
      << num_scan << " scan inputs";
  std::vector<Tensor> inputs;
  for (size_t j = 0; j < num_scan; ++j) inputs.push_back(c.in(1 + n + j));
  SLUICE_CHECK_IN(ValueError, c.op(), !inputs.empty() && inputs[0].ndim() >= 2)
      << "scan inputs must be (batch, sequence, ...)";
  const int64_t batch = inputs[0].shape(0), max_len = inputs[0].shape(1);
  std::vector<int64_t> lens = c.has(0) ? c.ints(0) : std::vector<int64_t>(size_t(batch), max_len);
  SLUICE_CHECK_IN(ValueError, c.op(), int64_t(lens.size()) == batch)
      << "sequence_lens has " << lens.size() << " values for a batch of " << batch;
  ScanPlan plan{std::vector<int64_t>(num_scan, 0),
                c.attr_ints("directions", std::vector<int64_t>(num_scan, 0)),
                {},
                {}};
  SLUICE_CHECK_IN(ValueError, c.op(), plan.in_reverse.size() == num_scan)
      << "directions has " << plan.in_reverse.size() << " entries for " << num_scan << " scan inputs";
  std::vector<Values> per_batch;
  for (int64_t b = 0; b < batch; ++b) {
    SLUICE_CHECK_IN(ValueError, c.op(), lens[size_t(b)] >= 0 && lens[size_t(b)] <= max_len)
        << "sequence length " << lens[size_t(b)] << " is outside [0, " << max_len << "]";
    Values states;
    for (size_t i = 0; i < n; ++i) states.push_back(c.in(1 + i).select(0, b));
    std::vector<Tensor> slices;
    for (const Tensor& x : inputs) slices.push_back(x.select(0, b));
    Values out = scan_steps(c, body, states, slices, plan, lens[size_t(b)]);
    for (size_t k = n; k < out.size(); ++k) {  // pad the scan axis to the longest sequence
      const Tensor& y = out[k].tensor(c.op());
      Bounds pads(size_t(y.ndim()), {0, 0});
      pads[0].second = max_len - y.shape(0);
      out[k] = y.pad(pads);
    }
    per_batch.push_back(out);
  }
  Values result;
  for (size_t k = 0; k < body.outputs.size(); ++k) {
    std::vector<Tensor> items;
    for (const Values& out : per_batch) items.push_back(out[k].tensor(c.op()));
    result.push_back(join(items, 0, true));
  }
  return result;
}

// Opset 9+: the state variables, then num_scan_inputs scan inputs, each with its own axis and direction.
Values x_scan(OpContext& c) {
  const Graph& body = c.attr_graph("body");
  const auto num_scan = size_t(c.attr_int("num_scan_inputs"));
  if (c.opset() < 9) return scan8(c, body, num_scan);
  SLUICE_CHECK_IN(ValueError, c.op(), num_scan >= 1 && num_scan <= c.size())
      << "num_scan_inputs is " << num_scan << " for " << c.size() << " inputs";
  const size_t n = c.size() - num_scan;
  SLUICE_CHECK_IN(ValueError, c.op(), body.outputs.size() >= n)
      << "the body returns " << body.outputs.size() << " values for " << n << " state variables";
  const size_t outs = body.outputs.size() - n;
  ScanPlan plan{c.attr_ints("scan_input_axes", std::vector<int64_t>(num_scan, 0)),
                c.attr_ints("scan_input_directions", std::vector<int64_t>(num_scan, 0)),
                c.attr_ints("scan_output_axes", std::vector<int64_t>(outs, 0)),
                c.attr_ints("scan_output_directions", std::vector<int64_t>(outs, 0))};
  SLUICE_CHECK_IN(ValueError, c.op(),
                  plan.in_axes.size() == num_scan && plan.in_reverse.size() == num_scan &&
                      plan.out_axes.size() == outs && plan.out_reverse.size() == outs)
      << "scan_input_axes/directions need " << num_scan << " entries, scan_output_axes/directions " << outs;
  std::vector<Tensor> inputs;
  int64_t length = -1;
  for (size_t j = 0; j < num_scan; ++j) {
    const Tensor& x = c.in(n + j);
    plan.in_axes[j] = normal_axis(c, plan.in_axes[j], x.ndim());
    const int64_t len = x.shape(plan.in_axes[j]);
    SLUICE_CHECK_IN(ShapeError, c.op(), length < 0 || len == length)
        << "scan input " << j << " has " << len << " steps, the first has " << length;
    length = len;
    inputs.push_back(x);
  }
  return scan_steps(c, body, Values(c.inputs().begin(), c.inputs().begin() + long(n)), inputs, plan, length);
}

// ---------------------------------------------------------------- sequences

const std::vector<Tensor>& items(OpContext& c, size_t i) { return c.value(i).items(c.op()); }
DType seq_dtype(OpContext& c, size_t i) { return c.value(i).sequence_dtype(); }

// A position into a sequence of n items: within [-n, n) (or [-n, n] where `at_end` may insert after the
// last).
size_t position(OpContext& c, int64_t pos, size_t n, bool at_end) {
  const auto len = int64_t(n);
  SLUICE_CHECK_IN(ValueError, c.op(), pos >= -len && (at_end ? pos <= len : pos < len))
      << "position " << pos << " is out of range for a sequence of " << n << " items";
  return size_t(pos < 0 ? pos + len : pos);
}

Values x_sequence_construct(OpContext& c) {
  std::vector<Tensor> ts;
  for (size_t i = 0; i < c.size(); ++i) ts.push_back(c.in(i));
  SLUICE_CHECK_IN(ValueError, c.op(), !ts.empty()) << "needs at least one tensor";
  for (const Tensor& t : ts)
    SLUICE_CHECK_IN(DTypeError, c.op(), t.dtype() == ts[0].dtype()) << "the tensors must have one dtype";
  return {Value::sequence(ts, ts[0].dtype())};
}

Values x_sequence_insert(OpContext& c) {
  std::vector<Tensor> ts = items(c, 0);
  const Tensor& t = c.in(1);
  SLUICE_CHECK_IN(DTypeError, c.op(), ts.empty() || t.dtype() == seq_dtype(c, 0))
      << "inserting a " << onnx_type_name(t.dtype()) << " tensor into a sequence of "
      << onnx_type_name(seq_dtype(c, 0));
  const size_t at = c.has(2) ? position(c, one_int(c, 2), ts.size(), true) : ts.size();
  ts.insert(ts.begin() + long(at), t);
  return {Value::sequence(ts, t.dtype())};
}

Values x_sequence_erase(OpContext& c) {
  std::vector<Tensor> ts = items(c, 0);
  const size_t at = position(c, c.has(1) ? one_int(c, 1) : -1, ts.size(), false);
  ts.erase(ts.begin() + long(at));
  return {Value::sequence(ts, seq_dtype(c, 0))};
}

Values x_sequence_at(OpContext& c) {
  const std::vector<Tensor>& ts = items(c, 0);
  return {ts[position(c, one_int(c, 1), ts.size(), false)]};
}

// A split's sizes: none given, pieces of 1; a scalar, pieces of that size (the last smaller); else the list.
Values x_split_to_sequence(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t axis = normal_axis(c, c.attr_int("axis", 0), x.ndim());
  const int64_t dim = x.shape(axis);
  if (!c.has(1)) {
    std::vector<Tensor> ts = x.split(1, axis);
    if (!c.attr_int("keepdims", 1))
      for (Tensor& t : ts) t = t.squeeze(axis);
    return {Value::sequence(ts, x.dtype())};
  }
  const Tensor& split = c.in(1);
  std::vector<int64_t> sizes = c.ints(1);
  if (split.ndim() == 0) {
    SLUICE_CHECK_IN(ValueError, c.op(), sizes[0] > 0) << "split must be positive, got " << sizes[0];
    return {Value::sequence(x.split(sizes[0], axis), x.dtype())};
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    SLUICE_CHECK_IN(ValueError, c.op(), s >= 0) << "split sizes must not be negative, got " << s;
    total += s;
  }
  SLUICE_CHECK_IN(ValueError, c.op(), total == dim)
      << "split sizes sum to " << total << ", but axis " << axis << " has " << dim;
  return {Value::sequence(x.split(Shape(sizes.begin(), sizes.end()), axis), x.dtype())};
}

Values x_concat_from_sequence(OpContext& c) {
  const std::vector<Tensor>& ts = items(c, 0);
  SLUICE_CHECK_IN(ValueError, c.op(), !ts.empty()) << "the sequence is empty";
  const bool new_axis = c.attr_int("new_axis", 0) != 0;
  const int64_t axis = normal_axis(c, c.attr_int("axis"), ts[0].ndim() + (new_axis ? 1 : 0));
  return {join(ts, axis, new_axis)};
}

// The body runs once per item of input 0; each further input gives the body its item of the same index when
// it is a sequence, else itself. Each body output becomes a sequence.
Values x_sequence_map(OpContext& c) {
  const Graph& body = c.attr_graph("body");
  const std::vector<Tensor>& first = items(c, 0);
  for (size_t j = 1; j < c.size(); ++j)
    SLUICE_CHECK_IN(ShapeError, c.op(), !c.value(j).is_sequence() || items(c, j).size() == first.size())
        << "input " << j << " has " << items(c, j).size() << " items, input 0 has " << first.size();
  std::vector<std::vector<Tensor>> outs(body.outputs.size());
  for (size_t i = 0; i < first.size(); ++i) {
    Values in;
    for (size_t j = 0; j < c.size(); ++j)
      in.push_back(c.value(j).is_sequence() ? items(c, j)[i] : c.value(j));
    Values out = c.run_subgraph(body, in);
    for (size_t k = 0; k < outs.size(); ++k) outs[k].push_back(out[k].tensor(c.op()));
  }
  Values result;
  for (size_t k = 0; k < outs.size(); ++k)
    result.push_back(Value::sequence(outs[k], outs[k].empty() ? body.outputs[k].dtype : outs[k][0].dtype()));
  return result;
}

// ---------------------------------------------------------------- optionals

// An optional holding input 0, or the empty one of the `type` attribute.
Values x_optional(OpContext& c) {
  SLUICE_CHECK_IN(ValueError, c.op(), c.has(0) || c.has_attr("type"))
      << "an empty optional needs the 'type' attribute";
  return {c.value(0)};
}

Values x_optional_get_element(OpContext& c) {
  SLUICE_CHECK_IN(ValueError, c.op(), c.has(0)) << "the optional is empty";
  return {c.value(0)};
}

const OpDef kOps[] = {
    {"If", 1, x_if},
    {"Loop", 1, x_loop},
    {"Scan", 8, x_scan},
    {"SequenceEmpty", 11,
     [](OpContext& c) -> Values { return {Value::sequence({}, c.attr_dtype("dtype", dtypes::float32))}; }},
    {"SequenceConstruct", 11, x_sequence_construct},
    {"SequenceInsert", 11, x_sequence_insert},
    {"SequenceErase", 11, x_sequence_erase},
    {"SequenceAt", 11, x_sequence_at},
    {"SequenceLength", 11,
     [](OpContext& c) -> Values { return {scalar(c, int64_t(items(c, 0).size()), dtypes::int64)}; }},
    {"SplitToSequence", 11, x_split_to_sequence},
    {"ConcatFromSequence", 11, x_concat_from_sequence},
    {"SequenceMap", 17, x_sequence_map},
    {"Optional", 15, x_optional},
    {"OptionalHasElement", 15, [](OpContext& c) -> Values { return {scalar(c, c.has(0), dtypes::bool_)}; }},
    {"OptionalGetElement", 15, x_optional_get_element},
};

}  // namespace

std::span<const OpDef> control_ops() { return kOps; }

}  // namespace sluice::onnx
