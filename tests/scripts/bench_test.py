"""scripts/bench.py: its goal table on fixed figures (every kind of goal, met and not, rows without a
figure left out), bad arguments, and one short real round through realize_bench (the counters it reads
exist, and every row whose peer is installed comes out)."""
import importlib.util
import json
import os
import platform
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "bench.py")
spec = importlib.util.spec_from_file_location("bench", SCRIPT)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def figures(**samples):
    f = bench.Figures()
    for k, vs in samples.items():
        for v in vs:
            f.add(k, v)
    return f


def row(rows, what, peer):
    return next(r for r in rows if r["what"] == what and r["peer"] == peer)


def test_goals_on_fixed_figures():
    f = figures(matmul_gflops_core=[90, 100, 110], openblas_gflops_core=[100, 100, 100], fma_peak_gflops=[200],
                cnn_ms=[10, 12, 30], cnn_torch_ms=[11], cnn_pad1_ms=[20], launch_us=[7.5], replay_us=[0.24, 0.26, 0.2],
                cold_compile_s=[0.3], det_t1_ms=[50], det_t1_ort_ms=[40])
    rows = bench.evaluate(f)
    mm = row(rows, "matmul 1024^3 per core", "OpenBLAS")
    assert mm["sluice"] == (100, 90, 110) and mm["ratio"] == pytest.approx(1.0) and mm["met"]
    assert not row(rows, "matmul 1024^3 per core", "FMA peak, all cores")["met"]  # 0.5 of the peak, goal 0.85
    cnn = row(rows, "CNN b64", "PyTorch CPU")  # the median, 12 ms, of 11 ms
    assert cnn["ratio"] == pytest.approx(12 / 11) and not cnn["met"]
    assert row(rows, "CNN b64, padding 1", "tinygrad (recorded)")["met"]  # 20 / 40.7
    assert not [r for r in rows if r["what"] == "CNN b64, padding 1" and r["peer"] == "PyTorch CPU"]
    assert not row(rows, "launch + wait, one kernel", "tinygrad (recorded)")["met"]  # 7.5 / 6.8
    assert row(rows, "replayed graph, per kernel", "tinygrad (recorded)")["met"]  # median 0.24 <= 0.25
    cold = row(rows, "cold compile GPT-2 block", None)
    assert cold["ratio"] is None and not cold["met"]
    assert not row(rows, "PP-OCR det (1 thread)", "ONNX Runtime")["met"]
    # No figure, no row: GPT-2, add, the other models.
    assert not [r for r in rows if r["what"].startswith(("GPT-2", "add", "PP-OCR rec", "Silero"))]
    assert bench.fmt((1.0, 0.5, 2.0)) == "1 (0.5-2)" and bench.fmt((3.0, 3.0, 3.0)) == "3"


def test_a_zero_or_missing_sample_is_no_figure():
    f = figures(add_gbs=[0, -1], numpy_add_gbs=[10])
    assert f.get("add_gbs") is None
    assert not [r for r in bench.evaluate(f) if r["what"] == "add 16M fp32"]


def have(module):
    """Whether a peer's module is there for bench.py."""
    return bench.peer_python("import " + module) is not None


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=600)


def test_bad_arguments_are_clear_errors(tmp_path):
    r = run("--rounds", "0")
    assert r.returncode != 0 and "--rounds must be at least 1, got 0" in r.stderr
    r = run("--build", str(tmp_path))
    assert r.returncode != 0 and "realize_bench" in r.stderr and "build first" in r.stderr


@pytest.mark.skipif(not os.environ.get("SLUICE_BUILD_DIR"), reason="needs SLUICE_BUILD_DIR (CTest sets it)")
def test_one_real_round(tmp_path):
    out = tmp_path / "bench.json"
    r = run("--rounds", "1", "--no-models", "--build", os.environ["SLUICE_BUILD_DIR"], "--json", str(out))
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())
    assert json.loads(r.stdout.strip().splitlines()[-1]) == rows
    whats = {x["what"] for x in rows}
    expected = ["launch + wait, one kernel", "replayed graph, per kernel", "matmul 1024^3 per core",
                "cold compile GPT-2 block"]
    if have("numpy"):
        expected.append("add 16M fp32")
    if have("torch"):
        expected += ["CNN b64", "CNN b64, padding 1", "GPT-2 block T=128"]
    for w in expected:
        assert w in whats, (w, r.stdout)
    # The peak every core reaches at once (BM_FmaPeak/threads:N), where the CPU has FMA instructions.
    if platform.machine() == "x86_64" and " fma " in open("/proc/cpuinfo").read():
        assert row(rows, "matmul 1024^3 per core", "FMA peak, all cores")["peer_value"]["median"] > 0
    for x in rows:
        assert x["sluice"]["median"] > 0 and isinstance(x["met"], bool)
        assert x["what"] in r.stdout
