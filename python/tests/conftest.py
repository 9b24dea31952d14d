"""Shared fixtures: the devices present, each test parametrized over those that compute real values."""
import numpy as np
import pytest

import sluice

# Every device that opened. NULL completes work without computing: tests of values skip it.
PRESENT = [d.name for d in sluice.devices() if d.available]
COMPUTING = [d for d in PRESENT if d != "NULL"]


def pytest_report_header(config):
    absent = [f"{d.name} ({d.reason})" for d in sluice.devices() if not d.available]
    return [f"sluice {sluice.__version__}: devices {', '.join(PRESENT)}; absent: {'; '.join(absent) or 'none'}"]


@pytest.fixture(params=COMPUTING)
def device(request):
    return request.param


def close(a, b, rtol=1e-4, atol=1e-5):
    """Asserts a sluice tensor (or array) matches a numpy array in shape, dtype kind and values."""
    a = a.numpy() if isinstance(a, sluice.Tensor) else np.asarray(a)
    b = np.asarray(b)
    assert a.shape == b.shape, f"shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
