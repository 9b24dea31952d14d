"""sluice.jit as a decorator: captured on the second call, replayed from the third."""
import numpy as np
import pytest

import sluice
from conftest import close


def test_jitted_function_replays_with_new_inputs(device):
    @sluice.jit
    def step(x, w):
        return (x @ w).relu() + 1, x.sum()

    rng = np.random.default_rng(1)
    for i in range(4):
        x = rng.standard_normal((2, 3)).astype(np.float32)
        w = rng.standard_normal((3, 2)).astype(np.float32)
        y, s = step(sluice.Tensor(x, device=device), sluice.Tensor(w, device=device))
        close(y, np.maximum(x @ w, 0) + 1, rtol=1e-4)
        close(s, x.sum(), rtol=1e-4)
    assert step.calls == 4 and step.captured and step.why == ""
    assert step.kernel_count >= 1
    assert step.__name__ == "step"


def test_jit_checks_its_inputs():
    @sluice.jit
    def double(x):
        return x * 2

    for _ in range(3):
        double(sluice.ones(4, device="CPU"))
    with pytest.raises(sluice.ValueError, match=r"^\[jit\] input 0: captured \(4,\) float on CPU, got \(5,\) float on CPU"):
        double(sluice.ones(5, device="CPU"))
    with pytest.raises(sluice.DTypeError, match=r"\[jit\] argument 0 is a int: a jitted function takes tensors only"):
        double(3)
