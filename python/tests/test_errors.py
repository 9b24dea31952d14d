"""sluice::Error's subclasses as Python exceptions, with the C++ messages; Ctrl-C during a device wait."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import sluice


def test_classes_mirror_the_cpp_hierarchy():
    assert issubclass(sluice.ShapeError, sluice.Error) and issubclass(sluice.ShapeError, ValueError)
    assert issubclass(sluice.ShapeError, IndexError)
    assert issubclass(sluice.DTypeError, TypeError) and issubclass(sluice.ValueError, ValueError)
    assert issubclass(sluice.DeviceError, RuntimeError)
    assert issubclass(sluice.TimeoutError, sluice.QueueError) and issubclass(sluice.TimeoutError, TimeoutError)
    assert issubclass(sluice.FaultError, sluice.QueueError) and issubclass(sluice.CompileError, sluice.Error)


def test_messages_are_the_cpp_ones():
    cases = [
        (lambda: sluice.zeros(2, 3).reshape(4), sluice.ShapeError, "[reshape] cannot reshape (2, 3) to (4,)"),
        (lambda: sluice.zeros(2, 3) + sluice.zeros(4), sluice.ShapeError, "[add] cannot broadcast (2, 3) and (4,)"),
        (lambda: sluice.zeros(2) & sluice.zeros(2), sluice.DTypeError,
         "[bitwise_and] needs integer or bool tensors, got float"),
        (lambda: sluice.zeros(2, device="TPU"), sluice.DeviceError,
         '[device] unknown device "TPU": known kinds are CUDA, HIP, VULKAN, CL, CPU, NULL'),
        (lambda: sluice.zeros(2).item(), sluice.ValueError, "[item] tensor of shape (2,) has 2 elements, item() needs 1"),
    ]
    for fn, cls, message in cases:
        with pytest.raises(cls) as e:
            fn()
        assert str(e.value) == message


def test_binding_errors_name_the_function_and_value():
    with pytest.raises(sluice.DTypeError, match=r"^\[__add__\] expected a Tensor or a Python scalar, got str$"):
        sluice.zeros(2) + "a"
    with pytest.raises(sluice.ValueError, match=r"^\[div\] rounding_mode must be None, 'trunc' or 'floor', got 'up'$"):
        sluice.zeros(2).div(1, rounding_mode="up")
    with pytest.raises(sluice.DTypeError, match=r"unknown dtype 'float7'"):
        sluice.zeros(2, dtype="float7")
    with pytest.raises(sluice.ValueError, match=r"does not fit in int64"):
        sluice.zeros(2) + 2 ** 70


def test_ctrl_c_during_a_wait_raises_keyboard_interrupt_and_the_device_stays_usable():
    # A matmul big enough to take a while on the CPU device; SIGINT arrives while synchronize() waits.
    a = sluice.rand(1024, 1024, seed=1, device="CPU")
    big = a @ a @ a @ a
    big.realize()  # submitted (and compiled) without waiting
    timer = threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        sluice.synchronize("CPU")
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    timer.join()
    if not interrupted:
        pytest.skip(f"the work finished in {time.monotonic() - start:.2f} s, before the signal")
    # The work went on; the device finishes it and takes more.
    assert big.shape == (1024, 1024)
    sluice.synchronize("CPU")
    assert (sluice.ones(3, device="CPU") + 1).tolist() == [2.0, 2.0, 2.0]
    assert np.isfinite(big[0, 0].item())
