"""Creation, conversion back to Python, and the Tensor's Python protocols."""
import numpy as np
import pytest

import sluice
from conftest import close


@pytest.mark.parametrize("np_dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "float16",
                                      "float32", "float64"])
def test_numpy_round_trip_keeps_dtype(np_dtype):
    a = (np.arange(12).reshape(3, 4) % 5).astype(np_dtype)
    t = sluice.Tensor(a, device="CPU")
    assert t.shape == (3, 4) and t.dtype == np_dtype
    out = t.numpy()
    assert out.dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(out, a)


def test_python_values_take_the_default_dtypes():
    assert sluice.Tensor([1.5, 2]).dtype == sluice.float32
    assert sluice.Tensor([[1, 2], [3, 4]]).dtype == sluice.int32
    assert sluice.Tensor([True, False]).dtype == sluice.bool_
    assert sluice.Tensor(3.0).shape == ()
    assert sluice.Tensor([1, 2], dtype=sluice.float64).dtype == sluice.float64
    assert sluice.Tensor([1, 2], dtype="int64").numpy().dtype == np.int64


def test_bfloat16_rounds_and_reads_as_float32():
    t = sluice.Tensor([1.0, 1.00390625, 3.14159], dtype=sluice.bfloat16)
    assert t.dtype == sluice.bfloat16
    np.testing.assert_array_equal(t.numpy(), np.array([1.0, 1.0, 3.140625], np.float32))


def test_creation_functions():
    close(sluice.zeros(2, 3), np.zeros((2, 3)))
    close(sluice.ones((2, 3), dtype=sluice.int32), np.ones((2, 3), np.int32))
    close(sluice.full((2, 2), 7.5), np.full((2, 2), 7.5))
    close(sluice.arange(5), np.arange(5))
    close(sluice.arange(1, 2, 0.25), np.arange(1, 2, 0.25))
    close(sluice.linspace(0, 1, 5), np.linspace(0, 1, 5))
    close(sluice.eye(3, 4), np.eye(3, 4))
    close(sluice.zeros(2, 2).ones_like(), np.ones((2, 2)))
    assert sluice.arange(5).dtype == sluice.int32 and sluice.arange(0.5, 3).dtype == sluice.float32
    assert sluice.empty(4, dtype=sluice.uint8).shape == (4,)


def test_random_tensors_follow_their_seeds():
    a, b = sluice.rand(1000, seed=7).numpy(), sluice.rand(1000, seed=7).numpy()
    np.testing.assert_array_equal(a, b)
    assert 0 <= a.min() and a.max() < 1 and abs(a.mean() - 0.5) < 0.05
    assert not np.array_equal(sluice.rand(10).numpy(), sluice.rand(10).numpy())  # unseeded calls differ
    sluice.manual_seed(3)
    c = sluice.randn(10).numpy()
    sluice.manual_seed(3)
    np.testing.assert_array_equal(c, sluice.randn(10).numpy())
    n = sluice.randn(4000, seed=1).numpy()
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    r = sluice.randint(100, low=3, high=6, seed=2).numpy()
    assert r.min() >= 3 and r.max() < 6


def test_reading_back():
    t = sluice.Tensor([[1, 2], [3, 4]])
    assert t.tolist() == [[1, 2], [3, 4]]
    assert t[1, 0].item() == 3 and isinstance(t[1, 0].item(), int)
    assert isinstance(sluice.Tensor([2.5]).item(), float)
    assert len(t) == 2 and [r.tolist() for r in t] == [[1, 2], [3, 4]]
    assert repr(t) == "Tensor([[1, 2], [3, 4]], dtype=int, device=CPU)"  # the C++ printer
    assert str(t) == repr(t)
    assert float(sluice.Tensor(2.5)) == 2.5 and int(sluice.Tensor(3)) == 3
    assert bool(sluice.Tensor([1])) and not bool(sluice.Tensor(0))
    np.testing.assert_array_equal(np.asarray(t), [[1, 2], [3, 4]])
    assert t.ndim == 2 and t.numel() == 4 and t.nbytes() == 16 and t.element_size() == 4


def test_dtypes():
    assert sluice.float32.itemsize == 4 and sluice.float32.is_float and not sluice.int8.is_float
    assert repr(sluice.float16) == "sluice.float16" and str(sluice.uint8) == "uint8"
    assert sluice.float32 == "float32" and sluice.float32 == np.float32 and sluice.half == sluice.float16
    assert sluice.dtype("int64") == sluice.int64
    assert {sluice.float32: 1}[sluice.dtype("float32")] == 1


def test_devices_and_moves(device):
    infos = {d.name: d for d in sluice.devices()}
    assert infos[device].available and infos[device].reason == ""
    props = infos[device].properties
    assert props.memory_bytes > 0 and isinstance(props.device_name, str)
    assert sluice.default_device() in infos
    t = sluice.Tensor([1.0, 2.0], device=device)
    assert t.device == device
    u = (t * 2).to("CPU")
    assert u.device == "CPU"
    close(u, [2.0, 4.0])
    assert t.to(device.lower()).device == device  # any spelling, canonical on the tensor
    sluice.synchronize(device)
    sluice.synchronize()


def test_absent_devices_say_why():
    for d in sluice.devices():
        if not d.available:
            assert d.reason and d.properties is None


def test_null_device_runs_without_computing():
    if "NULL" not in [d.name for d in sluice.devices() if d.available]:
        pytest.skip("NULL device absent")
    t = (sluice.ones(4, device="NULL") + 1).realize()
    assert t.numpy().shape == (4,)


def test_readme_example():
    x = sluice.Tensor([[1., 2., 3.], [4., 5., 6.]])
    w = sluice.Tensor(np.array([[1, 0], [-1, 2], [.5, 1]], np.float32))
    y = (x @ w + 1).relu()
    close(y, np.maximum(np.array([[1, 2, 3], [4, 5, 6]], np.float32) @ w.numpy() + 1, 0))
    assert y.sum().item() == pytest.approx(float(y.numpy().sum()))
    if y.device == "CPU":
        np.testing.assert_array_equal(np.from_dlpack(y), y.numpy())
