#!/usr/bin/env python3
"""sluice's speed on the CPU device beside its peers, in one command: every figure of sluice's speed goals
(the ROWS table below), each as sluice's median and min-max over the rounds, the peer's, their ratio, the
goal and whether it is met. Prints a table, then the same rows as one JSON line (also written to --json FILE): per row "what", "unit",
"sluice" and "peer_value" ({"median", "min", "max"}; null without a peer), "peer", "ratio", "goal", "met".

  scripts/bench.py [--rounds R] [--json FILE] [--no-models] [--build DIR]

Sources, all run here, the two sides of each comparison in the same round (this machine is noisy):
- tools/bench/realize_bench: launch + wait, graph replay, add 16M, matmul 1024^3, the FMA peak per core
  with every core running FMAs at once (as in the matmul),
  cold compile of the GPT-2 block, and the CNN and GPT-2 block beside PyTorch CPU (2 threads, a
  subprocess of the same benchmark); OpenBLAS sgemm beside the matmul.
- numpy's add of 16M float32 (out= given: no allocation on its side).
- scripts/bench-models.sh: PP-OCRv4 det/rec/cls and Silero VAD beside ONNX Runtime, 1 and 2 threads.
OPENBLAS_CORETYPE (which this machine sets to slow OpenBLAS down) is unset for the runs whose peers use
OpenBLAS; sluice's kernels never call it. The reference design (tinygrad) is not a dependency: its rows
show the figures recorded for it on this machine, marked as such.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The reference design v0.10.0, measured on this machine when the goals were set (not run here); its CNN
# figure is for the convs with padding 1.
RECORDED = {"cnn_ms": 40.7, "launch_us": 6.8, "replay_us": 0.30}


def realize_bench(build, pattern, peer_env=False):
    """The realize_bench rows matching `pattern`, by name (without /real_time), less any that failed. The
    CPU device runs on every hardware thread, as OpenBLAS does there."""
    env = {k: v for k, v in os.environ.items() if k != "SLUICE_CPU_THREADS"}
    if peer_env:
        env.pop("OPENBLAS_CORETYPE", None)
    out = subprocess.run([os.path.join(build, "tools/bench/realize_bench"), "--benchmark_filter=" + pattern,
                          "--benchmark_format=json"], env=env, check=True, capture_output=True, text=True).stdout
    return {b["name"].replace("/real_time", "").split("/iterations")[0]: b for b in json.loads(out)["benchmarks"]
            if not b.get("error_occurred")}


def counter(rows, name, key):
    """One counter of one benchmark; None when the benchmark or the counter is missing."""
    return rows.get(name, {}).get(key)


NUMPY_ADD = """
import time, statistics, numpy as np
n = 1 << 24
a, b, c = np.full(n, 1, np.float32), np.full(n, 2, np.float32), np.empty(n, np.float32)
for _ in range(3): np.add(a, b, out=c)
ts = []
for _ in range(20):
    t0 = time.perf_counter(); np.add(a, b, out=c); ts.append(time.perf_counter() - t0)
print(12 * n / statistics.median(ts) / 1e9)
"""


def peer_python(code):
    """The output of `code` from the first python3 that runs it (the one on PATH, else the system one,
    where Debian's numpy and torch live), as realize_bench's PyTorch side picks it; None if neither does."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    for py in ("python3", "/usr/bin/python3"):
        r = subprocess.run([py, "-c", code], env=env, capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout
    return None


def numpy_add_gbs():
    """numpy's add bandwidth (GB/s)."""
    out = peer_python(NUMPY_ADD)
    return float(out) if out else None


class Figures:
    """Samples per key, one per round."""

    def __init__(self):
        self.samples = {}

    def add(self, key, value, scale=1.0):
        if value is not None and value > 0:
            value *= scale
            self.samples.setdefault(key, []).append(value)

    def get(self, key):
        v = self.samples.get(key)
        return None if not v else (statistics.median(v), min(v), max(v))


def measure(args):
    f = Figures()
    for r in range(args.rounds):
        print(f"round {r + 1} of {args.rounds} ...", file=sys.stderr, flush=True)
        ours = realize_bench(args.build, "BM_CpuScheduleRoundTrip|BM_CpuJitReplay/100|BM_CpuAdd16M|"
                                         "BM_CpuMatmul1024|BM_FmaPeak")
        # A process of its own: a cold compile includes starting the compiler (loading clang's library).
        cold = realize_bench(args.build, "BM_ColdCompileGpt2Block")
        blas = realize_bench(args.build, "BM_OpenblasSgemm1024", peer_env=True)
        f.add("numpy_add_gbs", numpy_add_gbs())
        models = realize_bench(args.build, "BM_CnnVsTorch|BM_CnnPad1VsTorch|BM_Gpt2BlockVsTorch", peer_env=True)
        f.add("launch_us", counter(ours, "BM_CpuScheduleRoundTrip", "p50_us"))
        f.add("replay_us", counter(ours, "BM_CpuJitReplay/100", "per_kernel_us"))
        f.add("add_gbs", counter(ours, "BM_CpuAdd16M", "bytes_per_second"), 1e-9)
        threads = counter(blas, "BM_OpenblasSgemm1024", "threads")  # both sides' thread count
        if threads:
            f.add("matmul_gflops_core", counter(ours, "BM_CpuMatmul1024", "GFLOPS"), 1 / threads)
            f.add("openblas_gflops_core", counter(blas, "BM_OpenblasSgemm1024", "GFLOPS"), 1 / threads)
        # What each core's FMAs reach while every core runs them, as the matmul's do.
        all_cores = [b for name, b in ours.items() if name.startswith("BM_FmaPeak/threads:")]
        f.add("fma_peak_gflops", all_cores[0].get("GFLOPS") if all_cores else None)
        f.add("cold_compile_s", counter(cold, "BM_ColdCompileGpt2Block", "compile_ms"), 1e-3)
        for key, name in (("cnn", "BM_CnnVsTorch"), ("cnn_pad1", "BM_CnnPad1VsTorch"), ("gpt2", "BM_Gpt2BlockVsTorch")):
            f.add(key + "_ms", counter(models, name, "sluice_ms"))
            f.add(key + "_torch_ms", counter(models, name, "torch_ms"))
    if args.models:
        with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
            # A model that fails is reported on stderr and left out; the rows written so far are kept.
            r = subprocess.run([os.path.join(ROOT, "scripts/bench-models.sh"), "--rounds", str(args.rounds),
                                "--runs", "10", "--json", out.name], stdout=sys.stderr)
            if r.returncode != 0:
                print(f"bench.py: bench-models.sh failed (exit {r.returncode}); rows it did not write are "
                      "missing", file=sys.stderr)
            for line in out.read().splitlines():
                row = json.loads(line)
                f.samples[f"{row['model']}_t{row['threads']}_ms"] = [row["sluice_ms"]]
                f.samples[f"{row['model']}_t{row['threads']}_ort_ms"] = [row["ort_ms"]]
    return f


# Rows: what, unit, sluice's key, the peer, its key (or a recorded figure), and the goal: the ratio
# sluice/peer at most `le` (times) or at least `ge` (rates), or sluice's own figure at most `abs_le`.
ROWS = [
    ("matmul 1024^3 per core", "GFLOP/s", "matmul_gflops_core", "OpenBLAS", "openblas_gflops_core", {"ge": 1.0}),
    ("matmul 1024^3 per core", "GFLOP/s", "matmul_gflops_core", "FMA peak, all cores", "fma_peak_gflops",
     {"ge": 0.85}),
    ("CNN b64", "ms", "cnn_ms", "PyTorch CPU", "cnn_torch_ms", {"le": 1.0}),
    ("CNN b64, padding 1", "ms", "cnn_pad1_ms", "PyTorch CPU", "cnn_pad1_torch_ms", {"le": 1.0}),
    ("CNN b64, padding 1", "ms", "cnn_pad1_ms", "tinygrad (recorded)", RECORDED["cnn_ms"], {"le": 0.7}),
    ("GPT-2 block T=128", "ms", "gpt2_ms", "PyTorch CPU", "gpt2_torch_ms", {"le": 1.0}),
    ("add 16M fp32", "GB/s", "add_gbs", "numpy", "numpy_add_gbs", {"ge": 1.0}),
    ("launch + wait, one kernel", "us", "launch_us", "tinygrad (recorded)", RECORDED["launch_us"], {"le": 1.0}),
    ("replayed graph, per kernel", "us", "replay_us", "tinygrad (recorded)", RECORDED["replay_us"],
     {"abs_le": 0.25}),
    ("cold compile GPT-2 block", "s", "cold_compile_s", None, None, {"abs_le": 0.25}),
] + [(f"{m} ({t} thread{'s' if t > 1 else ''})", "ms", f"{k}_t{t}_ms", "ONNX Runtime", f"{k}_t{t}_ort_ms",
      {"le": 1.0})
     for k, m in (("det", "PP-OCR det"), ("rec", "PP-OCR rec"), ("cls", "PP-OCR cls"), ("vad", "Silero VAD chunk"))
     for t in (1, 2)]


def evaluate(f):
    out = []
    for what, unit, key, peer, pkey, goal in ROWS:
        ours = f.get(key)
        theirs = (pkey, pkey, pkey) if isinstance(pkey, float) else f.get(pkey) if pkey else None
        if ours is None or (peer and theirs is None):
            continue
        ratio = ours[0] / theirs[0] if theirs else None
        (kind, bound), = goal.items()
        met = {"le": lambda: ratio <= bound, "ge": lambda: ratio >= bound,
               "abs_le": lambda: ours[0] <= bound}[kind]()
        goal_text = {"le": f"ratio <= {bound}", "ge": f"ratio >= {bound}", "abs_le": f"<= {bound} {unit}"}[kind]
        out.append({"what": what, "unit": unit, "sluice": ours, "peer": peer, "peer_value": theirs,
                    "ratio": ratio, "goal": goal_text, "met": met})
    return out


def fmt(v):
    if v is None:
        return "-"
    med, lo, hi = v
    return f"{med:.3g}" if lo == hi else f"{med:.3g} ({lo:.3g}-{hi:.3g})"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3, help="rounds; each runs both sides (default 3)")
    p.add_argument("--json", help="also write the JSON rows to this file")
    p.add_argument("--no-models", dest="models", action="store_false", help="skip the ONNX models")
    p.add_argument("--build", default=os.path.join(ROOT, "build/default"), help="the build tree")
    args = p.parse_args()
    if args.rounds < 1:
        sys.exit(f"bench.py: --rounds must be at least 1, got {args.rounds}")
    if not os.access(os.path.join(args.build, "tools/bench/realize_bench"), os.X_OK):
        sys.exit(f"bench.py: no {args.build}/tools/bench/realize_bench: build first "
                 "(cmake --preset default && cmake --build --preset default)")
    rows = evaluate(measure(args))
    print(f"{'figure':<28} {'unit':<8} {'sluice':<24} {'peer':<20} {'peer value':<24} {'ratio':>7}  goal")
    for r in rows:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
        print(f"{r['what']:<28} {r['unit']:<8} {fmt(r['sluice']):<24} {r['peer'] or '-':<20} "
              f"{fmt(r['peer_value']):<24} {ratio:>7}  {r['goal']}: {'met' if r['met'] else 'NOT met'}")
    stats = lambda v: None if v is None else dict(zip(("median", "min", "max"), v))
    line = json.dumps([dict(r, sluice=stats(r["sluice"]), peer_value=stats(r["peer_value"])) for r in rows])
    print(line)
    if args.json:
        with open(args.json + ".tmp", "w") as out:
            out.write(line + "\n")
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
