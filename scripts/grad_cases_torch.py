#!/usr/bin/env python3
"""Writes tests/data/grad_cases_torch.json: PyTorch's gradients for every case of conformance/grad_cases.cpp.

tests/ops/gradient_test.cpp runs each case on every device in float32 and compares its gradients with the
ones written here, so the tests need no torch. Run it (from anywhere) with a Python that has torch and
numpy, after adding or changing a case there:

    python3 scripts/grad_cases_torch.py

Each case below is the C++ case of the same name written in PyTorch, with the same input shapes and
domains. Input i holds grad_case_values(numel, domain, i + 1) rounded to float32, the upstream gradient
grad_case_values(numel(output), Domain::Any, 99) rounded to float32 (the same draw, reimplemented bit for
bit). The gradients are computed by torch.autograd in float64 from those float32 values and then rounded
to float32: the expectation is then the exact gradient at the inputs the device sees, without torch's own
float32 rounding in it, so all of a mismatch is the device's.

Where sluice's op is defined as in the reference design (tinygrad) rather than as torch's default, the
torch side uses the matching variant or writes the definition out; each such choice has a comment.
"""
import json
import math
import os
import re
import sys

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "grad_cases_torch.json")
CASES_CPP = os.path.join(ROOT, "conformance", "grad_cases.cpp")

MASK = (1 << 64) - 1


def grad_case_values(n, domain, seed):
    """conformance::grad_case_values: the same 64-bit LCG and the same double arithmetic, in order."""
    s = (seed * 0x9E3779B97F4A7C15 + 1) & MASK
    out = []
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & MASK
        u = float(s >> 11) / float(1 << 53)  # both exact in a double, as in C++
        if domain == "Any":
            x = (u * 2 - 1) * 1.8 + (-0.1 if u < 0.5 else 0.1)
        elif domain == "Positive":
            x = 0.5 + 1.5 * u
        elif domain == "Unit":
            x = (u * 2 - 1) * 0.9
        elif domain == "Prob":
            x = 0.1 + 0.8 * u
        else:
            raise ValueError(domain)
        out.append(x)
    return out


# The index tensors the C++ cases hard-code, on the inputs' device there.
def ints(v, shape=None):
    t = torch.tensor(v, dtype=torch.int64)
    return t.reshape(shape) if shape else t


LABELS = [2, 0, 3]

A, P, U, PR = "Any", "Positive", "Unit", "Prob"


def selu(x):
    # sluice's selu keeps the reference design's rounded constants (alpha 1.67326, gamma 1.0507), not
    # torch's full-precision ones (1.6732632..., 1.0507009...): written out with sluice's.
    return 1.0507 * torch.where(x >= 0, x, 1.67326 * (torch.exp(x) - 1))


def erf_as(x):
    # sluice's erf is Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7), as the reference design's; its
    # derivative differs from 2/sqrt(pi) e^(-x^2) by up to 7e-6, so the approximation itself is written
    # out (the same polynomial, Horner order and all) and differentiated.
    t = 1.0 / (1.0 + 0.3275911 * x.abs())
    poly = torch.full_like(t, 1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly = poly * t + c
    return torch.sign(x) * (1.0 - t * poly * torch.exp(-x * x))


def batchnorm(x, w, b, mean, invstd):
    # sluice's batchnorm takes invstd (inference form: (x - mean) * weight * invstd + bias), where
    # F.batch_norm takes a running variance with eps; written out so invstd gets its own gradient.
    v = lambda t: t.reshape(1, 3, 1)
    return (x - v(mean)) * v(w) * v(invstd) + v(b)


def attention(q, k, v):
    # torch 1.13 has no F.scaled_dot_product_attention: softmax(q k^T / sqrt(E) + causal mask) v, with
    # the lower-triangular mask (is_causal) as -inf above the diagonal, as sluice builds it.
    L, S = q.shape[-2], k.shape[-2]
    mask = torch.ones(L, S, dtype=torch.bool).tril()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, -1) @ v


def rmsnorm(x):
    # torch 1.13 has no F.rms_norm: x * rsqrt(mean(x^2) + eps) over the last axis, eps 1e-6 (sluice's).
    return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6)


# name -> (inputs [(shape, domain)], f). Same order and names as conformance/grad_cases.cpp.
CASES = [
    # elementwise, with broadcasting
    ("add", [((2, 3), A), ((3,), A)], lambda x: x[0] + x[1]),
    ("sub", [((2, 3), A), ((2, 1), A)], lambda x: x[0] - x[1]),
    ("mul", [((2, 3), A), ((3,), A)], lambda x: x[0] * x[1]),
    ("div", [((2, 3), A), ((3,), P)], lambda x: x[0] / x[1]),
    ("neg", [((5,), A)], lambda x: -x[0]),
    ("exp", [((5,), A)], lambda x: torch.exp(x[0])),
    ("exp2", [((5,), A)], lambda x: torch.exp2(x[0])),
    ("log", [((5,), P)], lambda x: torch.log(x[0])),
    ("log2", [((5,), P)], lambda x: torch.log2(x[0])),
    ("sqrt", [((5,), P)], lambda x: torch.sqrt(x[0])),
    ("rsqrt", [((5,), P)], lambda x: torch.rsqrt(x[0])),
    ("reciprocal", [((5,), P)], lambda x: torch.reciprocal(x[0])),
    ("sin", [((5,), A)], lambda x: torch.sin(x[0])),
    ("cos", [((5,), A)], lambda x: torch.cos(x[0])),
    ("tan", [((5,), U)], lambda x: torch.tan(x[0])),
    ("pow scalar", [((5,), P)], lambda x: x[0] ** 2.5),
    ("pow tensor", [((5,), P), ((5,), A)], lambda x: x[0] ** x[1]),
    ("square", [((5,), A)], lambda x: torch.square(x[0])),
    ("abs", [((6,), A)], lambda x: torch.abs(x[0])),
    ("maximum", [((6,), A), ((6,), A)], lambda x: torch.maximum(x[0], x[1])),
    ("minimum", [((6,), A), ((6,), A)], lambda x: torch.minimum(x[0], x[1])),
    ("where", [((6,), A), ((6,), A)], lambda x: torch.where(x[0] > 0, x[0] * 2, x[1])),
    ("clip", [((6,), A)], lambda x: torch.clamp(x[0], -1, 1)),
    ("lerp", [((4,), A), ((4,), A), ((4,), PR)], lambda x: torch.lerp(x[0], x[1], x[2])),
    # activations
    ("relu", [((6,), A)], lambda x: F.relu(x[0])),
    ("sigmoid", [((6,), A)], lambda x: torch.sigmoid(x[0])),
    ("tanh", [((6,), A)], lambda x: torch.tanh(x[0])),
    # sluice's gelu is the tanh approximation (the reference design's), torch's default is erf.
    ("gelu", [((6,), A)], lambda x: F.gelu(x[0], approximate="tanh")),
    # quick_gelu (x * sigmoid(1.702 x)) has no torch function.
    ("quick_gelu", [((6,), A)], lambda x: x[0] * torch.sigmoid(1.702 * x[0])),
    ("silu", [((6,), A)], lambda x: F.silu(x[0])),
    ("elu", [((6,), A)], lambda x: F.elu(x[0])),
    ("celu", [((6,), A)], lambda x: F.celu(x[0], alpha=0.5)),
    ("selu", [((6,), A)], lambda x: selu(x[0])),
    ("leaky_relu", [((6,), A)], lambda x: F.leaky_relu(x[0], 0.1)),
    # torch's softplus turns linear past threshold 20; the inputs stay below 2, where both are log(1+e^x).
    ("softplus", [((6,), A)], lambda x: F.softplus(x[0])),
    ("mish", [((6,), A)], lambda x: F.mish(x[0])),
    ("logsigmoid", [((6,), A)], lambda x: F.logsigmoid(x[0])),
    ("softsign", [((6,), A)], lambda x: F.softsign(x[0])),
    ("hardswish", [((6,), A)], lambda x: F.hardswish(x[0])),
    ("hardtanh", [((6,), A)], lambda x: F.hardtanh(x[0], -1, 1)),
    ("erf", [((6,), A)], lambda x: erf_as(x[0])),
    # reductions
    ("sum axis", [((2, 3, 2), A)], lambda x: x[0].sum(1)),
    ("mean", [((2, 3), A)], lambda x: x[0].mean(0, keepdim=True)),
    ("prod", [((2, 3), P)], lambda x: x[0].prod(1)),
    ("max axis", [((3, 4), A)], lambda x: x[0].max(1).values),
    ("min all", [((3, 4), A)], lambda x: x[0].min()),
    # var(axes, keepdim = false, correction = 1): torch's unbiased variance.
    ("var", [((3, 4), A)], lambda x: x[0].var(1, unbiased=True)),
    ("std", [((3, 4), A)], lambda x: x[0].std(0, unbiased=False, keepdim=True)),
    ("logsumexp", [((3, 4), A)], lambda x: torch.logsumexp(x[0], 1)),
    ("softmax", [((3, 4), A)], lambda x: torch.softmax(x[0], -1)),
    ("log_softmax", [((3, 4), A)], lambda x: torch.log_softmax(x[0], 0)),
    ("cumsum", [((2, 5), A)], lambda x: torch.cumsum(x[0], 1)),
    ("cumprod", [((5,), P)], lambda x: torch.cumprod(x[0], 0)),
    # movement and indexing
    ("reshape permute", [((2, 3, 2), A)], lambda x: x[0].reshape(3, 4).permute(1, 0) * 2),
    ("expand", [((3, 1), A)], lambda x: x[0].expand(2, 3, 4)),
    # sluice's pads are (before, after) per axis in axis order; F.pad's are last axis first.
    ("pad constant", [((2, 3), A)], lambda x: F.pad(x[0], (2, 1, 1, 0), value=0.5)),
    # reflect without repeating the edge, as torch's reflect; F.pad reflects only batched (N, C, W) input.
    ("pad reflect", [((2, 4), A)], lambda x: F.pad(x[0][None], (2, 1), mode="reflect")[0]),
    ("shrink flip", [((4, 3), A)], lambda x: x[0][1:3, 0:2].flip(0, 1)),
    ("slice step", [((6, 3), A)], lambda x: x[0][1::2, :2]),
    ("repeat", [((2, 2), A)], lambda x: x[0].repeat(2, 3)),
    ("roll", [((2, 4), A)], lambda x: torch.roll(x[0], 1, 1)),
    ("cat", [((2, 3), A), ((1, 3), A)], lambda x: torch.cat([x[0], x[1] * 3], 0)),
    ("stack", [((3,), A), ((3,), A)], lambda x: torch.stack([x[0], x[1]], 1)),
    ("tril", [((3, 3), A)], lambda x: torch.tril(x[0])),
    ("gather", [((3, 4), A)], lambda x: torch.gather(x[0], 1, ints([0, 3, 1, 1, 2, 2], (3, 2)))),
    ("index_select", [((4, 2), A)], lambda x: torch.index_select(x[0], 0, ints([3, 1, 3]))),
    # linear algebra
    ("matmul", [((2, 3), A), ((3, 4), A)], lambda x: x[0] @ x[1]),
    ("matmul batched", [((2, 2, 3), A), ((3, 2), A)], lambda x: x[0] @ x[1]),
    ("einsum", [((2, 3), A), ((3, 2), A)], lambda x: torch.einsum("ij,jk->ki", x[0], x[1])),
    # nn
    ("conv2d", [((1, 2, 4, 4), A), ((3, 2, 3, 3), A), ((3,), A)],
     lambda x: F.conv2d(x[0], x[1], x[2], stride=2, padding=1)),
    ("conv2d groups", [((1, 4, 3, 3), A), ((2, 2, 2, 2), A)], lambda x: F.conv2d(x[0], x[1], groups=2)),
    # sluice's transposed-conv weight is (C_in, C_out / groups, kH, kW), as torch's.
    ("conv_transpose2d", [((1, 2, 3, 3), A), ((2, 1, 2, 2), A)],
     lambda x: F.conv_transpose2d(x[0], x[1], stride=2)),
    ("max_pool2d", [((1, 1, 4, 4), A)], lambda x: F.max_pool2d(x[0], 2)),
    # count_include_pad = true (sluice's default and torch's): the padded zeros count in the divisor.
    ("avg_pool2d", [((1, 1, 4, 4), A)],
     lambda x: F.avg_pool2d(x[0], 3, stride=1, padding=1, count_include_pad=True)),
    # sluice's linear mode with align_corners = false samples at (i + 0.5) * scale - 0.5 clamped to the
    # edges: torch's bilinear with align_corners=False.
    ("interpolate", [((1, 1, 2, 3), A)],
     lambda x: F.interpolate(x[0], size=(3, 4), mode="bilinear", align_corners=False)),
    # sluice's layernorm has no affine part; eps 1e-5 as torch's.
    ("layernorm", [((2, 5), A)], lambda x: F.layer_norm(x[0], (5,), eps=1e-5)),
    ("rmsnorm", [((2, 5), A)], lambda x: rmsnorm(x[0])),
    ("batchnorm", [((2, 3, 2), A), ((3,), A), ((3,), A), ((3,), A), ((3,), P)], lambda x: batchnorm(*x)),
    ("attention", [((1, 3, 2), A), ((1, 3, 2), A), ((1, 3, 2), A)], lambda x: attention(*x)),
    # losses (sluice's default reduction is the mean, as torch's)
    ("cross_entropy indices", [((3, 4), A)], lambda x: F.cross_entropy(x[0], ints(LABELS))),
    # sluice smooths as torch does: target (1 - s) * one_hot + s / C.
    ("cross_entropy smoothed", [((3, 4), A)],
     lambda x: F.cross_entropy(x[0], ints(LABELS), reduction="sum", label_smoothing=0.1)),
    ("cross_entropy probabilities", [((3, 4), A), ((3, 4), PR)], lambda x: F.cross_entropy(x[0], x[1])),
    ("nll_loss", [((3, 4), A)], lambda x: F.nll_loss(torch.log_softmax(x[0], -1), ints(LABELS))),
    # ignore_index -1 and no smoothing: the mean over the rows of -log_softmax at the label.
    ("sparse_categorical_crossentropy", [((3, 4), A)], lambda x: F.cross_entropy(x[0], ints(LABELS))),
    # torch clamps the logs at -100, which probabilities in [0.1, 0.9] never reach.
    ("binary_cross_entropy", [((4,), PR), ((4,), PR)], lambda x: F.binary_cross_entropy(x[0], x[1])),
    ("binary_cross_entropy_with_logits", [((4,), A), ((4,), PR)],
     lambda x: F.binary_cross_entropy_with_logits(x[0], x[1])),
]


def shortest_f32(v):
    """The float32 of v as the shortest decimal that a correctly rounded read to double and then a cast to
    float gives back (what the C++ test does): what numpy prints, checked, else 9 digits."""
    f = np.float32(v)
    s = repr(float(np.format_float_scientific(f, unique=True)))
    if np.float32(float(s)) != f:
        s = "%.9g" % f
    assert np.float32(float(s)) == f, (v, s)
    return float(s)


def cpp_case_names():
    # The case names of the C++ table: each case opens a line with {"name",.
    with open(CASES_CPP) as f:
        return re.findall(r'^\s*\{"([^"]+)",', f.read(), re.M)


def run_case(name, inputs, f):
    xs32 = [np.array(grad_case_values(int(np.prod(s)), d, i + 1), dtype=np.float32).reshape(s)
            for i, (s, d) in enumerate(inputs)]
    xs = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs32]
    y = f(xs)
    w32 = np.array(grad_case_values(y.numel(), "Any", 99), dtype=np.float32).reshape(tuple(y.shape))
    grads = torch.autograd.grad(y, xs, torch.tensor(w32, dtype=torch.float64), allow_unused=True)
    out = {"name": name, "inputs": [], "output_shape": list(y.shape)}
    for x in xs32:
        out["inputs"].append({"shape": list(x.shape), "values": [shortest_f32(v) for v in x.ravel()]})
    out["upstream"] = [shortest_f32(v) for v in w32.ravel()]
    out["grads"] = []
    for x, g in zip(xs, grads):
        g = torch.zeros_like(x) if g is None else g
        vals = g.detach().numpy().astype(np.float32).ravel()
        assert np.all(np.isfinite(vals)), (name, vals)
        out["grads"].append([shortest_f32(v) for v in vals])
    return out


def main():
    torch.set_num_threads(1)
    names = [c[0] for c in CASES]
    assert len(set(names)) == len(names), "duplicate case names"
    cpp = cpp_case_names()
    missing, extra = sorted(set(cpp) - set(names)), sorted(set(names) - set(cpp))
    if missing or extra:
        sys.exit(f"the torch table does not match {os.path.relpath(CASES_CPP, ROOT)}: "
                 f"missing {missing}, not there {extra}")
    cases = [run_case(*c) for c in CASES]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    # One case a line: small diffs when a case changes.
    lines = [json.dumps(c, separators=(",", ":")) for c in cases]
    with open(OUT, "w") as f:
        f.write('{"generator":"scripts/grad_cases_torch.py",\n')
        f.write(f'"torch":{json.dumps(torch.__version__)},\n')
        f.write('"dtype":"float32 inputs; gradients computed in float64, rounded to float32",\n')
        f.write('"cases":[\n' + ",\n".join(lines) + "\n]}\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
