"""DLPack: zero-copy export of CPU tensors and zero-copy import onto the CPU device (same data pointer),
from numpy and PyTorch."""
import numpy as np
import pytest

import sluice
from conftest import PRESENT


def test_numpy_sees_the_cpu_buffer_without_a_copy():
    t = sluice.arange(12, dtype=sluice.float32, device="CPU").reshape(3, 4) * 2  # lazy: realized by the export
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr()
    assert np.from_dlpack(t).ctypes.data == a.ctypes.data  # the same buffer every time
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4) * 2)
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU


def test_pytorch_sees_the_cpu_buffer_without_a_copy():
    torch = pytest.importorskip("torch")
    t = sluice.Tensor(np.arange(6, dtype=np.int64).reshape(2, 3), device="CPU")
    p = torch.from_dlpack(t)
    assert p.data_ptr() == t.data_ptr()
    assert p.dtype == torch.int64 and p.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_exported_memory_outlives_the_tensor():
    t = sluice.ones(1000, device="CPU") + 1
    a = np.from_dlpack(t)
    del t  # the capsule holds the buffer
    assert float(a.sum()) == 2000.0


def test_import_from_numpy_and_pytorch_shares_the_memory():
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    t = sluice.from_dlpack(a)
    assert t.shape == (2, 4) and t.dtype == sluice.float32 and t.device == "CPU"
    assert t.data_ptr() == a.ctypes.data  # the same memory, no copy
    np.testing.assert_array_equal((t * 2).numpy(), a * 2)
    a[0, 0] = 99  # a write on either side shows on the other
    assert t[0, 0].item() == 99
    torch = pytest.importorskip("torch")
    p = torch.arange(5, dtype=torch.int32)
    u = sluice.from_dlpack(p)
    assert u.data_ptr() == p.data_ptr()
    np.testing.assert_array_equal(u.numpy(), np.arange(5))
    round_trip = sluice.from_dlpack(torch.from_dlpack(sluice.Tensor([1.5, 2.5], device="CPU")))
    assert round_trip.tolist() == [1.5, 2.5]


def test_imported_memory_goes_back_to_its_owner_once_unused():
    import gc
    import sys
    import time
    a = np.ones(1 << 16, dtype=np.float32)
    before = sys.getrefcount(a)
    t = sluice.from_dlpack(a)
    assert sys.getrefcount(a) == before + 1  # the import holds the array
    s = (t + 1).sum()
    del t
    assert s.item() == 2 * (1 << 16)  # the lazy sum still reads the imported memory
    del s
    gc.collect()
    # Given back: at once, or at the interpreter's next check when the last reference dropped on a thread
    # without the GIL (inside realize).
    for _ in range(1000):
        if sys.getrefcount(a) == before:
            break
        time.sleep(0.001)
    assert sys.getrefcount(a) == before


def test_import_onto_another_device_or_misaligned_memory_copies():
    raw = np.zeros(4 * 5, dtype=np.uint8)
    a = np.frombuffer(raw.data, dtype=np.float32, count=4, offset=1)  # not aligned to 4 bytes
    t = sluice.from_dlpack(a)
    assert t.data_ptr() != a.ctypes.data
    np.testing.assert_array_equal(t.numpy(), a)
    others = [d for d in PRESENT if d not in ("CPU", "NULL")]
    if others:
        b = np.arange(3, dtype=np.float32)
        u = sluice.from_dlpack(b, device=others[0])
        assert u.device == others[0]
        np.testing.assert_array_equal(u.numpy(), b)


def test_import_rejects_strided_views():
    with pytest.raises(ValueError, match=r"\[from_dlpack\] only C-contiguous"):
        sluice.from_dlpack(np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2])


def test_devices_without_host_access_refuse():
    others = [d for d in PRESENT if d not in ("CPU", "NULL")]
    if not others:
        pytest.skip("no device other than CPU")
    t = sluice.ones(3, device=others[0])
    with pytest.raises(sluice.DeviceError, match=rf"\[__dlpack__\] {others[0]} memory is not host-accessible"):
        np.from_dlpack(t)
    np.testing.assert_array_equal(np.from_dlpack(t.to("CPU")), np.ones(3))  # the explicit copy


def test_bool_has_no_dlpack_type():
    with pytest.raises(TypeError, match="DLPack 0.6 has no bool type"):
        np.from_dlpack(sluice.Tensor([True], device="CPU"))
