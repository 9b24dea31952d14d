"""The op families of the C++ Tensor API on every device present, against numpy (PyTorch where numpy has
no equivalent). Each family stacks its results into one tensor, so a device compiles a few kernels, not
one per op."""
import numpy as np
import pytest

import sluice
from conftest import close

rng = np.random.default_rng(0)
X = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)  # positive: log, sqrt, pow are defined
Y = rng.uniform(-2.0, 2.0, (3, 4)).astype(np.float32)
I = rng.integers(-20, 20, (3, 4)).astype(np.int32)
J = rng.integers(1, 6, (3, 4)).astype(np.int32)


def erf(v):
    import math
    return np.vectorize(math.erf)(v).astype(np.float32)


UNARY = {
    "neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "exp": np.exp,
    "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "reciprocal": np.reciprocal, "square": np.square, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": np.round, "sign": np.sign, "relu": lambda v: np.maximum(v, 0), "tanh": np.tanh,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "silu": lambda v: v / (1 + np.exp(-v)), "erf": erf,
    "softplus": lambda v: np.log1p(np.exp(v)), "softsign": lambda v: v / (1 + np.abs(v)),
}


def test_unary(device):
    x, y = sluice.Tensor(X, device=device), sluice.Tensor(Y, device=device)
    positive = {"sqrt", "rsqrt", "log", "log2"}
    got = sluice.stack([getattr(x if k in positive else y, k)() for k in UNARY])
    want = np.stack([f(X if k in positive else Y) for k, f in UNARY.items()])
    close(got, want, rtol=1e-3, atol=1e-4)


def test_binary_and_operators(device):
    x, y = sluice.Tensor(X, device=device), sluice.Tensor(Y, device=device)
    got = sluice.stack([x + y, x - y, x * y, x / y, x ** 2, 2 ** y, y % 1.5, -y, abs(y), x.maximum(y), x.minimum(y),
                        1 - x, 3 * x, 1 / x, x + 1, x.lerp(y, 0.25), y.clip(-1, 0.5), x.pow(y)])
    want = np.stack([X + Y, X - Y, X * Y, X / Y, X ** 2, 2 ** Y, np.mod(Y, 1.5), -Y, np.abs(Y), np.maximum(X, Y),
                     np.minimum(X, Y), 1 - X, 3 * X, 1 / X, X + 1, X + 0.25 * (Y - X), np.clip(Y, -1, 0.5), X ** Y])
    close(got, want, rtol=1e-3, atol=1e-4)


def test_integer_ops(device):
    i, j = sluice.Tensor(I, device=device), sluice.Tensor(J, device=device)
    got = sluice.stack([i + j, i * j, i // j, i % j, i & j, i | j, i ^ j, i << 1, j >> 1, ~i, 7 - i, i.div(j, rounding_mode="trunc")])
    want = np.stack([I + J, I * J, I // J, I % J, I & J, I | J, I ^ J, I << 1, J >> 1, ~I, 7 - I,
                     np.trunc(I / J).astype(np.int32)])
    assert got.dtype == sluice.int32
    np.testing.assert_array_equal(got.numpy(), want)
    assert (i / j).dtype == sluice.float32  # true division of integers is float


def test_comparisons_and_logic(device):
    x, y = sluice.Tensor(X, device=device), sluice.Tensor(Y, device=device)
    got = sluice.stack([x < y, x <= y, x > y, x >= y, x == x, x != y, (x > 1).logical_and(y > 0),
                        (x > 1).logical_or(y > 0), (x > 1).logical_not(), y.isnan(), (y / 0).isinf()])
    with np.errstate(divide="ignore"):
        inf = np.isinf(Y / np.float32(0))
    want = np.stack([X < Y, X <= Y, X > Y, X >= Y, X == X, X != Y, (X > 1) & (Y > 0), (X > 1) | (Y > 0), ~(X > 1),
                     np.isnan(Y), inf])
    assert got.dtype == sluice.bool_
    np.testing.assert_array_equal(got.numpy(), want)
    close((x > y).where(x, y), np.where(X > Y, X, Y))
    close((x > y).where(1.0, 0.0), np.where(X > Y, 1.0, 0.0))


def test_reductions(device):
    y = sluice.Tensor(Y, device=device)
    close(sluice.stack([y.sum(), y.max(), y.min(), y.mean(), y.prod(), y.std(), y.var(), y.logsumexp()]),
          [Y.sum(), Y.max(), Y.min(), Y.mean(), Y.prod(), Y.std(ddof=1), Y.var(ddof=1), np.log(np.exp(Y).sum())],
          rtol=1e-3)
    close(y.sum(axis=1), Y.sum(1))
    close(y.mean(axis=0, keepdim=True), Y.mean(0, keepdims=True))
    close(y.max(axis=(0, 1)), Y.max())
    np.testing.assert_array_equal(y.argmax(axis=1).numpy(), Y.argmax(1))
    np.testing.assert_array_equal(y.argmin().numpy(), Y.argmin())
    close(y.cumsum(axis=1), np.cumsum(Y, 1))
    close(y.softmax(), np.exp(Y) / np.exp(Y).sum(-1, keepdims=True))
    close(y.log_softmax(0), Y - np.log(np.exp(Y).sum(0, keepdims=True)))
    assert (y > 0).any().item() and not (y > 5).all().item()


def test_movement(device):
    y = sluice.Tensor(Y, device=device)
    close(y.reshape(4, 3), Y.reshape(4, 3))
    close(y.reshape((2, -1)), Y.reshape(2, -1))
    close(y.permute(1, 0), Y.T)
    close(y.T, Y.T)
    close(y.transpose(0, 1), Y.T)
    close(y.flatten(), Y.flatten())
    close(y.unsqueeze(0).squeeze(0), Y)
    close(y.expand(2, 3, 4), np.broadcast_to(Y, (2, 3, 4)))
    close(y.pad(((1, 0), (0, 2)), value=9), np.pad(Y, ((1, 0), (0, 2)), constant_values=9))
    close(y.shrink(((0, 2), (1, 3))), Y[0:2, 1:3])
    close(y.flip(1), Y[:, ::-1])
    close(y.cat(y, dim=1), np.concatenate([Y, Y], 1))
    close(sluice.stack([y, y], dim=0), np.stack([Y, Y]))
    close(sluice.cat([y, y]), np.concatenate([Y, Y]))
    parts = y.split(2, dim=1)
    assert len(parts) == 2
    close(parts[1], Y[:, 2:])
    close(y.chunk(3)[2], Y[2:])
    close(y.repeat(2, 1), np.tile(Y, (2, 1)))
    close(y.roll(1, 1), np.roll(Y, 1, 1))
    close(y.tril(), np.tril(Y))
    close(y.triu(1), np.triu(Y, 1))


def test_linear_algebra_and_casts(device):
    x, y = sluice.Tensor(X, device=device), sluice.Tensor(Y, device=device)
    close(x @ y.T, X @ Y.T, rtol=1e-4)
    close(x.matmul(y.T), X @ Y.T, rtol=1e-4)
    close(x.dot(y.T), X @ Y.T, rtol=1e-4)
    close(sluice.einsum("ij,kj->ik", x, y), np.einsum("ij,kj->ik", X, Y), rtol=1e-4)
    close(y.cast(sluice.int32), Y.astype(np.int32))
    close(y.cast(sluice.float16).cast(sluice.float32), Y.astype(np.float16).astype(np.float32))
    close(x.bitcast(sluice.uint32), X.view(np.uint32))
    close(sluice.Tensor(J, device=device).one_hot(6), np.eye(6, dtype=np.int32)[J])


def test_gather_and_masks(device):
    y = sluice.Tensor(Y, device=device)
    idx = np.array([[0, 3], [1, 1], [2, 0]], np.int32)
    close(y.gather(1, sluice.Tensor(idx, device=device)), np.take_along_axis(Y, idx, 1))
    close(y.index_select(1, sluice.Tensor([3, 0], device=device)), Y[:, [3, 0]])
    close(y.masked_fill(y > 0, 0.0), np.where(Y > 0, 0, Y))


def test_nn_functions_against_pytorch(device):
    torch = pytest.importorskip("torch")  # numpy has no convolution or cross entropy
    F = torch.nn.functional
    img = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    x = sluice.Tensor(img, device=device)
    out = x.conv2d(sluice.Tensor(w, device=device), sluice.Tensor(b, device=device), stride=2, padding=1)
    close(out, F.conv2d(torch.tensor(img), torch.tensor(w), torch.tensor(b), stride=2, padding=1).numpy(), rtol=1e-3,
          atol=1e-4)
    close(x.max_pool2d(), F.max_pool2d(torch.tensor(img), 2).numpy())
    close(x.avg_pool2d(kernel_size=3, stride=1, padding=1),
          F.avg_pool2d(torch.tensor(img), 3, stride=1, padding=1).numpy(), rtol=1e-4)
    close(x.layernorm(), F.layer_norm(torch.tensor(img), (6,)).numpy(), rtol=1e-3, atol=1e-4)
    logits = rng.standard_normal((5, 7)).astype(np.float32)
    labels = np.array([0, 6, 3, 3, 1], np.int32)
    ce = sluice.Tensor(logits, device=device).sparse_categorical_crossentropy(sluice.Tensor(labels, device=device))
    close(ce, F.cross_entropy(torch.tensor(logits), torch.tensor(labels).long()).numpy(), rtol=1e-4)
    close(sluice.Tensor(Y, device=device).gelu(), F.gelu(torch.tensor(Y), approximate="tanh").numpy(), rtol=1e-3,
          atol=1e-4)
