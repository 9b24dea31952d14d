"""sluice.onnx on a model of the ONNX backend test suite (Debian's libonnx-testdata)."""
import os

import numpy as np
import pytest

import sluice
from conftest import close

DATA = os.environ.get("SLUICE_ONNX_TESTDATA", "/usr/share/libonnx-testdata/data")
MODEL = os.path.join(DATA, "node", "test_add_bcast", "model.onnx")


@pytest.fixture
def model_path():
    if not os.path.exists(MODEL):
        pytest.skip(f"{MODEL} absent (Debian's libonnx-testdata)")
    return MODEL


def test_load_and_run(model_path, tmp_path):
    m = sluice.onnx.load(model_path, device="CPU")
    assert m.inputs == ["x", "y"] and m.device == "CPU"
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, y = rng.standard_normal((3, 4, 5)).astype(np.float32), rng.standard_normal(5).astype(np.float32)
        (out,) = m.run({"x": x, "y": sluice.Tensor(y, device="CPU")})
        close(out, x + y)
    assert m.last_run["replayed"]
    m.save(str(tmp_path / "add.sluice"))
    c = sluice.onnx.load_compiled(str(tmp_path / "add.sluice"))
    (out,) = c.run({"x": x, "y": y})
    close(out, x + y)


def test_bad_inputs_name_the_model(model_path):
    m = sluice.onnx.load(model_path, device="CPU")
    with pytest.raises(sluice.Error):
        m.run({"x": np.zeros((3, 4, 5), np.float32)})  # y is missing
