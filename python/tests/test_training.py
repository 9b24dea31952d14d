"""Gradients, no_grad, nn layers and optimizers: a training step lowers the loss; gradients match PyTorch."""
import numpy as np
import pytest

import sluice
from conftest import close


def test_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    xv, wv = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    x, w = sluice.Tensor(xv, requires_grad=True), sluice.Tensor(wv, requires_grad=True)
    loss = (x @ w).tanh().square().mean() + x.exp().sum() * 0.1
    loss.backward()
    tx, tw = torch.tensor(xv, requires_grad=True), torch.tensor(wv, requires_grad=True)
    tl = (tx @ tw).tanh().square().mean() + tx.exp().sum() * 0.1
    tl.backward()
    close(loss, tl.detach().numpy(), rtol=1e-5)
    close(x.grad, tx.grad.numpy(), rtol=1e-4)
    close(w.grad, tw.grad.numpy(), rtol=1e-4)


def test_requires_grad_and_no_grad():
    x = sluice.Tensor([1.0, 2.0])
    assert not x.requires_grad and x.grad is None
    x.requires_grad = True
    with sluice.no_grad():
        y = (x * 3).sum()
    with pytest.raises(sluice.ValueError):
        y.backward()  # nothing that requires grad reaches y
    (x * 3).sum().backward()
    close(x.grad, [3.0, 3.0])
    x.zero_grad()
    assert x.grad is None or x.grad.tolist() == [0.0, 0.0]

    @sluice.no_grad()
    def f(t):
        return t * 2

    with pytest.raises(sluice.ValueError):
        f(x).sum().backward()


@pytest.mark.parametrize("make", [
    lambda p: sluice.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: sluice.optim.Adam(p, lr=0.3),
    lambda p: sluice.optim.AdamW(p, lr=0.3),
    lambda p: sluice.optim.LAMB(p, lr=0.3),
], ids=["SGD", "Adam", "AdamW", "LAMB"])
def test_training_steps_lower_the_loss(make):
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((32, 4)).astype(np.float32)
    yv = (xv @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.25).astype(np.float32)
    layer = sluice.nn.Linear(4, 1, seed=1)
    opt = make(layer.parameters())
    x, y = sluice.Tensor(xv), sluice.Tensor(yv)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = (layer(x) - y).square().mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def test_jitted_training_step():
    layer = sluice.nn.Linear(3, 1, seed=4)
    opt = sluice.optim.SGD(layer.parameters(), lr=0.1)
    x = sluice.Tensor(np.eye(3, dtype=np.float32))
    y = sluice.Tensor([[1.0], [2.0], [3.0]])

    @sluice.jit
    def step(x, y):
        opt.zero_grad()
        loss = (layer(x) - y).square().mean()
        loss.backward()
        return [loss.contiguous()] + opt.step_lazy()

    losses = [step(x, y)[0].item() for _ in range(6)]
    assert step.captured and losses[-1] < losses[0]


def test_layers_and_state_dict():
    torch = pytest.importorskip("torch")
    conv = sluice.nn.Conv2d(2, 3, 3, padding=1, seed=5)
    assert conv.weight.shape == (3, 2, 3, 3) and conv.bias.shape == (3,)
    assert sorted(conv.state_dict()) == ["bias", "weight"]
    tconv = torch.nn.Conv2d(2, 3, 3, padding=1)
    with torch.no_grad():
        tconv.weight.copy_(torch.from_numpy(conv.weight.numpy()))
        tconv.bias.copy_(torch.from_numpy(conv.bias.numpy()))
    xv = np.random.default_rng(6).standard_normal((1, 2, 5, 5)).astype(np.float32)
    close(conv(sluice.Tensor(xv)), tconv(torch.from_numpy(xv)).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert sluice.nn.Linear(2, 2, bias=False).bias is None
    bn = sluice.nn.BatchNorm2d(3)
    assert bn(sluice.ones(2, 3, 4, 4)).shape == (2, 3, 4, 4)
    assert sluice.nn.Embedding(10, 4)(sluice.Tensor([[1, 2]])).shape == (1, 2, 4)
    assert sluice.nn.LayerNorm(4)(sluice.ones(2, 4)).shape == (2, 4)
    with pytest.raises(sluice.ValueError, match="weight"):
        sluice.nn.Linear(2, 2).load_state_dict({"weight": sluice.zeros(3, 3), "bias": sluice.zeros(2)})


def test_initializers_and_realize_all():
    w = sluice.nn.kaiming_uniform((64, 16), seed=3).numpy()
    assert np.abs(w).max() <= np.sqrt(6 / 16) + 1e-6
    np.testing.assert_array_equal(w, sluice.nn.kaiming_uniform((64, 16), seed=3).numpy())
    assert sluice.nn.xavier_normal((8, 8), seed=1).shape == (8, 8)
    a, b = sluice.ones(3) * 2, sluice.ones(3) * 3
    sluice.Tensor.realize_all([a, b])
    assert a.tolist() == [2.0] * 3 and b.tolist() == [3.0] * 3


def test_dropout_and_multihead_attention_match_pytorch():
    torch = pytest.importorskip("torch")
    d = sluice.nn.Dropout(0.5, seed=1, device="CPU")
    y = d(sluice.ones(1000, device="CPU")).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 400 < int((y == 0).sum()) < 600
    d.eval()
    assert d(sluice.ones(4, device="CPU")).tolist() == [1.0] * 4
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    m = sluice.nn.MultiheadAttention(8, 2, batch_first=True, device="CPU")
    m.load_state_dict({k: sluice.Tensor(v.detach().numpy(), device="CPU") for k, v in ref.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    want, _ = ref(*(torch.from_numpy(x),) * 3, need_weights=False)
    t = sluice.Tensor(x, device="CPU")
    np.testing.assert_allclose(m(t, t, t).numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
