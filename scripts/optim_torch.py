#!/usr/bin/env python3
"""Writes tests/data/optim_torch.json: parameter trajectories of PyTorch's optimizers for
tests/ops/optim_test.cpp, which replays them in sluice on every device (the tests need no PyTorch).

Each case starts from the same (2, 3) float32 parameter and applies four steps with fixed gradients;
the expected parameter after every step comes from torch.optim (SGD, Adam, AdamW). PyTorch has no LAMB,
so its expectation is the reference design's rule written out below in float64 (Adam's moments and
bias correction, weight decay added to the update, the update scaled by |p| / |update|).

Run with Debian's python3-torch: /usr/bin/python3 scripts/optim_torch.py
"""
import json
import os

import torch

P0 = [0.5, -1.25, 2.0, -0.75, 1.5, 0.25]
GRADS = [
    [0.3, -0.2, 0.5, 0.1, -0.4, 0.25],
    [-0.1, 0.4, 0.2, -0.3, 0.15, -0.05],
    [0.2, 0.1, -0.6, 0.35, 0.05, 0.3],
    [0.05, -0.25, 0.1, 0.2, -0.1, 0.4],
]

# name, torch optimizer class, options (sluice's names: tests/ops/optim_test.cpp maps them)
CASES = [
    ("sgd", "SGD", {"lr": 0.1}),
    ("sgd_momentum", "SGD", {"lr": 0.1, "momentum": 0.9}),
    ("sgd_nesterov_weight_decay", "SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("adam", "Adam", {"lr": 0.01}),
    ("adam_weight_decay", "Adam", {"lr": 0.01, "weight_decay": 0.1, "betas": (0.8, 0.99)}),
    ("adamw", "AdamW", {"lr": 0.01, "weight_decay": 0.1}),
]


def torch_trajectory(cls, options):
    p = torch.tensor(P0, dtype=torch.float32).reshape(2, 3).requires_grad_(True)
    opt = getattr(torch.optim, cls)([p], **options)
    out = []
    for g in GRADS:
        opt.zero_grad()
        p.grad = torch.tensor(g, dtype=torch.float32).reshape(2, 3)
        opt.step()
        out.append([float(x) for x in p.detach().reshape(-1)])
    return out


def lamb_trajectory(lr, beta1, beta2, eps, weight_decay):
    p = torch.tensor(P0, dtype=torch.float64)
    m = torch.zeros(6, dtype=torch.float64)
    v = torch.zeros(6, dtype=torch.float64)
    out = []
    for t, g in enumerate(GRADS, start=1):
        g = torch.tensor(g, dtype=torch.float64)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        up = (m / (1 - beta1**t)) / ((v / (1 - beta2**t)).sqrt() + eps) + weight_decay * p
        pn, un = p.norm(), up.norm()
        ratio = float(pn / un) if pn > 0 and un > 0 else 1.0
        p = p - lr * ratio * up
        out.append([float(x) for x in p.float()])
    return out


def main():
    cases = []
    for name, cls, options in CASES:
        opts = dict(options)
        if "betas" in opts:
            opts["beta1"], opts["beta2"] = opts.pop("betas")
        cases.append({"name": name, "optimizer": cls, "options": opts, "params": torch_trajectory(cls, options)})
    lamb = {"lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-6, "weight_decay": 0.1}
    cases.append({"name": "lamb", "optimizer": "LAMB", "options": lamb, "params": lamb_trajectory(**lamb)})
    doc = {"generator": "scripts/optim_torch.py", "torch": torch.__version__, "shape": [2, 3], "p0": P0,
           "grads": GRADS, "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "optim_torch.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
