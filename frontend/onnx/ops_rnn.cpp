// ONNX ops: the recurrent layers RNN, GRU and LSTM (op.h).
// The sequence length is a shape, known when the graph is built, so the recurrence unrolls into one step of
// Tensor ops per time step: the input projection of every step is one matmul up front, each step adds the
// recurrent matmul and the gates. Every direction runs the same steps, the reverse one from the last step.
// sequence_lens masks the steps past a batch entry's length: its state holds and its Y rows are zero, which
// for the reverse direction is the same as starting at its own last step.
#include <algorithm>
#include <cctype>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

// The activations the spec lists, with how many of alpha, beta each reads and their defaults.
struct ActivationKind {
  const char* name;  // lower case: models spell them in any case
  int params;
  double alpha, beta;
  Tensor (*fn)(const Tensor& x, double alpha, double beta);
};
constexpr ActivationKind kActivations[] = {
    {"sigmoid", 0, 0, 0, [](const Tensor& x, double, double) { return x.sigmoid(); }},
    {"tanh", 0, 0, 0, [](const Tensor& x, double, double) { return x.tanh(); }},
    {"relu", 0, 0, 0, [](const Tensor& x, double, double) { return x.relu(); }},
    {"softsign", 0, 0, 0, [](const Tensor& x, double, double) { return x.softsign(); }},
    {"softplus", 0, 0, 0, [](const Tensor& x, double, double) { return x.softplus(); }},
    {"affine", 2, 1.0, 0.0, [](const Tensor& x, double a, double b) { return x * a + b; }},
    {"leakyrelu", 1, 0.01, 0, [](const Tensor& x, double a, double) { return x.leaky_relu(a); }},
    {"thresholdedrelu", 1, 1.0, 0, [](const Tensor& x, double a, double) { return x.gt(a).where(x, 0); }},
    {"scaledtanh", 2, 1.0, 1.0, [](const Tensor& x, double a, double b) { return (x * b).tanh() * a; }},
    {"hardsigmoid", 2, 0.2, 0.5, [](const Tensor& x, double a, double b) { return (x * a + b).clip(0, 1); }},
    {"elu", 1, 1.0, 0, [](const Tensor& x, double a, double) { return x.elu(a); }},
};

// One entry of the `activations` attribute with its alpha and beta.
struct Activation {
  const ActivationKind* kind;
  double alpha, beta;
};

Tensor activate(const Activation& a, const Tensor& x) { return a.kind->fn(x, a.alpha, a.beta); }

// The activations of every direction, `per_dir` each: the attribute's (names in any case; activation_alpha
// and activation_beta are consumed in order by the functions that take parameters), else the op's defaults.
// One direction's list given to a bidirectional layer serves both.
std::vector<Activation> activations(OpContext& c, const std::vector<std::string>& defaults, int num_dir) {
  std::vector<std::string> names = c.attr_strs("activations", defaults);
  const size_t per_dir = defaults.size();
  if (names.size() == per_dir && num_dir == 2) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  SLUICE_CHECK_IN(ValueError, c.op(), names.size() == per_dir * size_t(num_dir))
      << "activations has " << names.size() << " entries, want " << per_dir << " per direction for "
      << num_dir << " direction(s)";
  const std::vector<double> alphas = c.attr_floats("activation_alpha", {}),
                            betas = c.attr_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (std::string name : names) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char ch) { return char(std::tolower(ch)); });
    const auto* k = std::find_if(std::begin(kActivations), std::end(kActivations),
                                 [&](const ActivationKind& e) { return name == e.name; });
    SLUICE_CHECK_IN(ValueError, c.op(), k != std::end(kActivations)) << "unknown activation '" << name << "'";
    Activation a{k, k->alpha, k->beta};
    if (k->params >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (k->params >= 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

enum class Cell : uint8_t { Rnn, Gru, Lstm };

int gate_count(Cell cell) { return cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4; }

// The spec's activations of one direction: f (the gates), g (the candidate), h (the LSTM's output).
std::vector<std::string> default_activations(Cell cell) {
  if (cell == Cell::Rnn) return {"Tanh"};
  if (cell == Cell::Gru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

// One direction's weights (its slice of W, R, B, P) and activations.
struct Direction {
  Tensor w, r;                // (gates * hidden, input), (gates * hidden, hidden)
  Tensor wb, rb;              // (gates * hidden) each
  std::optional<Tensor> p;    // LSTM peepholes (3 * hidden): i, o, f
  std::vector<Activation> f;  // the cell's activations, in the attribute's order
};

// What every step reads besides the state.
struct StepParams {
  Cell cell;
  int64_t hidden;
  double clip;  // 0: none
  bool linear_before_reset, input_forget;
};

Tensor clipped(const StepParams& s, const Tensor& x) { return s.clip > 0 ? x.clip(-s.clip, s.clip) : x; }

// The recurrent state: h, and c for an LSTM.
struct State {
  Tensor h;
  std::optional<Tensor> c;
};

// One step from `st` with xw = X_t W^T + Wb (batch, gates * hidden), the equations of the ONNX spec.
State step(const StepParams& s, const Direction& d, const Tensor& xw, const State& st) {
  const Tensor& h = st.h;
  const int64_t n = s.hidden;
  if (s.cell == Cell::Rnn) return {activate(d.f[0], clipped(s, xw + h.matmul(d.r.transpose()) + d.rb)), {}};
  if (s.cell == Cell::Gru) {  // gates z, r, h
    std::vector<Tensor> x = xw.split(n, -1), rw = d.r.split(n, 0), rb = d.rb.split(n, 0);
    Tensor z = activate(d.f[0], clipped(s, x[0] + h.matmul(rw[0].transpose()) + rb[0]));
    Tensor r = activate(d.f[0], clipped(s, x[1] + h.matmul(rw[1].transpose()) + rb[1]));
    Tensor recurrent = s.linear_before_reset ? r * (h.matmul(rw[2].transpose()) + rb[2])
                                             : (r * h).matmul(rw[2].transpose()) + rb[2];
    Tensor candidate = activate(d.f[1], clipped(s, x[2] + recurrent));
    return {(1 - z) * candidate + z * h, {}};
  }
  // LSTM: gates i, o, f, c; peepholes i, o, f look at the cell state (o at the new one).
  std::vector<Tensor> g = (xw + h.matmul(d.r.transpose()) + d.rb).split(n, -1);
  const Tensor& c = *st.c;
  std::vector<Tensor> p = d.p ? d.p->split(n, 0) : std::vector<Tensor>{};
  auto peep = [&](int k, const Tensor& x, const Tensor& cell) { return d.p ? x + p[size_t(k)] * cell : x; };
  Tensor i = activate(d.f[0], clipped(s, peep(0, g[0], c)));
  Tensor f = s.input_forget ? 1 - i : activate(d.f[0], clipped(s, peep(2, g[2], c)));
  Tensor c_new = f * c + i * activate(d.f[1], clipped(s, g[3]));
  Tensor o = activate(d.f[0], clipped(s, peep(1, g[1], c_new)));
  return {o * activate(d.f[2], c_new), c_new};
}

// A direction over the whole sequence: Y (seq, batch, hidden) and the final state.
std::pair<Tensor, State> run_direction(const StepParams& s, const Direction& d, const Tensor& x, State st,
                                       const std::optional<Tensor>& lens, bool reverse) {
  const int64_t seq = x.shape(0);
  Tensor xw = x.matmul(d.w.transpose()) + d.wb;  // every step's input projection at once
  std::vector<Tensor> ys(size_t(seq), st.h);     // each overwritten by its step
  for (int64_t k = 0; k < seq; ++k) {
    const int64_t t = reverse ? seq - 1 - k : k;
    State next = step(s, d, xw.select(0, t), st);
    std::optional<Tensor> valid;
    if (lens) {                          // past its length a batch entry keeps its state
      valid = lens->gt(t).unsqueeze(1);  // (batch, 1)
      next.h = valid->where(next.h, st.h);
      if (next.c) next.c = valid->where(*next.c, *st.c);
    }
    // A realize point per step: each state feeds the next step's matmul and its gates; left lazy, every
    // later kernel would recompute the whole chain of steps before it.
    st.h = next.h.contiguous();
    if (next.c) st.c = next.c->contiguous();
    Tensor y = valid ? valid->where(st.h, 0) : st.h;  // and its Y rows are zero
    ys[size_t(t)] = valid ? y.contiguous().unsqueeze(0) : y.unsqueeze(0);
  }
  return {bounded_cat(ys, 0), st};
}

void check_shape(OpContext& c, const char* what, const Tensor& t, const Shape& want) {
  SLUICE_CHECK_IN(ShapeError, c.op(), t.shape() == want)
      << what << " has shape " << tuple_str(t.shape()) << ", want " << tuple_str(want);
}

// The node's (num_dir, batch, hidden) state input i, or zeros; layout 1 gives it batch first.
Tensor initial_state(OpContext& c, size_t i, bool batch_first, const Shape& shape, DType dtype) {
  if (!c.has(i)) return Tensor::zeros(shape, dtype, c.device());
  Tensor t = batch_first ? c.in(i).transpose(0, 1) : c.in(i);
  check_shape(c, i == 5 ? "initial_h" : "initial_c", t, shape);
  return t;
}

template <Cell kCell>
Values x_recurrent(OpContext& c) {
  const int gates = gate_count(kCell);
  const bool batch_first = c.attr_int("layout", 0) != 0;
  const std::string direction = c.attr_str("direction", "forward");
  SLUICE_CHECK_IN(ValueError, c.op(),
                  direction == "forward" || direction == "reverse" || direction == "bidirectional")
      << "direction must be forward, reverse or bidirectional, got '" << direction << "'";
  const int num_dir = direction == "bidirectional" ? 2 : 1;
  Tensor x = c.in(0);
  SLUICE_CHECK_IN(ShapeError, c.op(), x.ndim() == 3) << "X must be 3-D, got shape " << tuple_str(x.shape());
  if (batch_first) x = x.transpose(0, 1);  // (seq, batch, input)
  SLUICE_CHECK_IN(ShapeError, c.op(), x.shape(0) > 0)
      << "X has no time steps: shape " << tuple_str(c.in(0).shape());
  const int64_t batch = x.shape(1), input = x.shape(2);
  const Tensor &w = c.in(1), &r = c.in(2);
  const int64_t hidden = c.attr_int("hidden_size", r.ndim() == 3 ? r.shape(2) : 0);
  check_shape(c, "W", w, {num_dir, gates * hidden, input});
  check_shape(c, "R", r, {num_dir, gates * hidden, hidden});
  Tensor b = c.has(3) ? c.in(3) : Tensor::zeros({num_dir, 2 * gates * hidden}, x.dtype(), c.device());
  check_shape(c, "B", b, {num_dir, 2 * gates * hidden});
  std::optional<Tensor> lens = c.opt(4);
  if (lens) check_shape(c, "sequence_lens", *lens, {batch});
  const Shape state_shape{num_dir, batch, hidden};
  Tensor h0 = initial_state(c, 5, batch_first, state_shape, x.dtype());
  std::optional<Tensor> c0, peepholes;
  if (kCell == Cell::Lstm) {
    c0 = initial_state(c, 6, batch_first, state_shape, x.dtype());
    peepholes = c.opt(7);
    if (peepholes) check_shape(c, "P", *peepholes, {num_dir, 3 * hidden});
  }

  const std::vector<std::string> defaults = default_activations(kCell);
  const std::vector<Activation> acts = activations(c, defaults, num_dir);
  const StepParams params{kCell, hidden, c.attr_float("clip", 0.0), c.attr_int("linear_before_reset", 0) != 0,
                          c.attr_int("input_forget", 0) != 0};
  std::vector<Tensor> ys, hs, cs;
  for (int d = 0; d < num_dir; ++d) {
    std::vector<Tensor> biases = b.select(0, d).chunk(2, 0);
    Direction dir{w.select(0, d),
                  r.select(0, d),
                  biases[0],
                  biases[1],
                  std::nullopt,
                  {acts.begin() + long(d * defaults.size()), acts.begin() + long((d + 1) * defaults.size())}};
    if (peepholes) dir.p = peepholes->select(0, d);
    State st{h0.select(0, d), c0 ? std::optional<Tensor>(c0->select(0, d)) : std::nullopt};
    auto [y, last] = run_direction(params, dir, x, st, lens, direction == "reverse" || d == 1);
    ys.push_back(y);
    hs.push_back(last.h);
    if (last.c) cs.push_back(*last.c);
  }
  // Y is (seq, num_dir, batch, hidden), or (batch, seq, num_dir, hidden) batch first; the states
  // (num_dir, batch, hidden), or (batch, num_dir, hidden).
  Tensor y = stack(ys, 1), y_h = stack(hs, 0);
  if (batch_first) {
    y = y.permute({2, 0, 1, 3});
    y_h = y_h.transpose(0, 1);
  }
  Values out{y, y_h};
  if (kCell == Cell::Lstm) out.push_back(batch_first ? stack(cs, 0).transpose(0, 1) : stack(cs, 0));
  return out;
}

const OpDef kOps[] = {
    {"RNN", 1, x_recurrent<Cell::Rnn>},
    {"GRU", 1, x_recurrent<Cell::Gru>},
    {"LSTM", 1, x_recurrent<Cell::Lstm>},
};

}  // namespace

std::span<const OpDef> rnn_ops() { return kOps; }

}  // namespace sluice::onnx
