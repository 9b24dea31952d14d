#!/usr/bin/env python3
"""Writes tests/data/nn_torch.safetensors: PyTorch's nn.MultiheadAttention on fixed inputs, for
tests/ops/nn_test.cpp, which loads each case's state into sluice's nn::MultiheadAttention (the same keys),
runs the same inputs on every device and compares the output and the gradients. Run it (from anywhere)
with a Python that has torch, after changing a case:

    python3 scripts/nn_torch.py

Tensors are named "<case>.<what>": state.<key> (the module's state_dict), query/key/value, the masks, out
(the forward result), upstream (the gradient fed back) and grad.<name> (of query/key/value and of each
parameter). Computed in float64 from float32 values, stored as float32 (masks as bool).
"""
import json
import os
import struct

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = {torch.float32: ("F32", "f"), torch.bool: ("BOOL", "B")}


def case(name, e, heads, l, s, n, bias, batch_first, self_attention, masks):
    torch.manual_seed(len(name))
    m = torch.nn.MultiheadAttention(e, heads, bias=bias, batch_first=batch_first)
    # Non-zero biases, so their gradients and use are checked too.
    with torch.no_grad():
        for k, p in m.named_parameters():
            if "bias" in k:
                p.uniform_(-0.5, 0.5)
    m = m.double()
    shape = lambda t: (n, t, e) if batch_first else (t, n, e)
    q = torch.randn(shape(l)).float().double().requires_grad_()
    k = q if self_attention else torch.randn(shape(s)).float().double().requires_grad_()
    v = q if self_attention else torch.randn(shape(s)).float().double().requires_grad_()
    kwargs = {}
    out = {}
    if "attn_mask" in masks:
        am = torch.rand(l, s) < 0.3
        am[:, 0] = False  # no row fully masked
        kwargs["attn_mask"] = am
        out["attn_mask"] = am
    if "causal" in masks:  # what sluice's is_causal = true means
        kwargs["attn_mask"] = torch.triu(torch.ones(l, s, dtype=torch.bool), 1)
    if "key_padding_mask" in masks:
        kp = torch.zeros(n, s, dtype=torch.bool)
        kp[1, -2:] = True
        kwargs["key_padding_mask"] = kp
        out["key_padding_mask"] = kp
    for key, t in m.state_dict().items():
        out["state." + key] = t.float()
    y, _ = m(q, k, v, need_weights=False, **kwargs)
    g = torch.randn(y.shape).float().double()
    (y * g).sum().backward()
    out.update(query=q, out=y, upstream=g, **{"grad.query": q.grad})
    if not self_attention:
        out.update(key=k, value=v, **{"grad.key": k.grad, "grad.value": v.grad})
    for key, p in m.named_parameters():
        out["grad." + key] = p.grad
    return {name + "." + key: t.detach().float() if t.dtype != torch.bool else t for key, t in out.items()}


def save(tensors, path):
    header, data = {"__metadata__": {"writer": "scripts/nn_torch.py"}}, b""
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        dtype, fmt = DTYPES[t.dtype]
        values = [int(x) for x in t.flatten().tolist()] if t.dtype == torch.bool else t.flatten().tolist()
        blob = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def main():
    tensors = {}
    tensors.update(case("masked", 8, 2, 5, 6, 3, True, False, False, ["attn_mask", "key_padding_mask"]))
    tensors.update(case("causal", 12, 3, 4, 4, 2, False, True, True, ["causal"]))
    path = os.path.join(ROOT, "tests", "data", "nn_torch.safetensors")
    save(tensors, path)
    print("wrote", path, len(tensors), "tensors")


if __name__ == "__main__":
    main()
