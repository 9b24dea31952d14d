"""sluice: a lazy tensor runtime in the lineage of tinygrad, from Python.

    import sluice
    x = sluice.Tensor([[1.0, 2.0], [3.0, 4.0]])      # float32 on sluice.default_device()
    y = (x @ x.T + 1).relu()                         # lazy: builds a graph, runs nothing
    print(y.numpy())                                 # realizes it: schedules, compiles (cached), runs

Everything here is the C++ API (include/sluice/sluice.h) under the same names; this file adds only the
module-level creation functions, no_grad and jit as Python callables.
"""
import contextlib as _contextlib
import functools as _functools

from . import _sluice
from ._sluice import (  # noqa: F401  (re-exported)
    CompileError, DTypeError, DeviceError, DeviceInfo, DeviceProperties, Error, FaultError, JitFunction,
    QueueError, ShapeError, Tensor, TimeoutError, ValueError, __version__, bfloat16, bool_, canonical_device,
    cat, default_device, devices, double, dtype, float16, float32, float64, from_dlpack, gradients, half,
    int8, int16, int32, int64, manual_seed, nn, onnx, optim, set_hang_timeout, stack, synchronize, uint8,
    uint16, uint32, uint64,
)

# The creation functions at module level, as numpy and PyTorch have them: sluice.zeros(2, 3).
empty, zeros, ones, full = Tensor.empty, Tensor.zeros, Tensor.ones, Tensor.full
arange, linspace, eye = Tensor.arange, Tensor.linspace, Tensor.eye
rand, randn, randint, uniform, normal = Tensor.rand, Tensor.randn, Tensor.randint, Tensor.uniform, Tensor.normal
einsum = Tensor.einsum
tensor = Tensor


class no_grad(_contextlib.ContextDecorator):
    """While active on this thread, no gradient flows through the ops built (sluice::NoGrad).

    A context manager (``with sluice.no_grad():``) and a decorator (``@sluice.no_grad()``)."""

    def __enter__(self):
        self._guard = _sluice._no_grad_enter()
        return self

    def __exit__(self, *exc):
        self._guard = None  # the C++ guard ends here, on the thread that made it
        return False


def jit(fn=None):
    """Decorates a function of tensors whose kernels are captured on its second call and replayed from
    the third, without calling it (sluice::jit). It takes tensors as positional arguments and returns a
    tensor or a tuple/list of tensors; a replay's outputs are overwritten by the next call."""
    if fn is None:
        return jit
    wrapped = JitFunction(fn)
    _functools.update_wrapper(wrapped, fn, updated=())
    return wrapped


# PyTorch's names for the one BatchNorm (it takes any number of spatial axes).
nn.BatchNorm1d = nn.BatchNorm2d = nn.BatchNorm3d = nn.BatchNorm
# conv1d is conv2d with one spatial axis (the C++ API's alias).
Tensor.conv1d = Tensor.conv2d
