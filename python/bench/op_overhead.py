#!/usr/bin/env python3
"""Per-op overhead of the Python binding: a one-element add built and realized from Python, median
microseconds, beside PyTorch's same operation (eager, on the CPU) and tinygrad's when installed.

    PYTHONPATH=build/default/python /usr/bin/python3 python/bench/op_overhead.py [--device CPU] [--n 2000]

sluice rows: `build` builds the lazy add only; `realize` builds it and submits its kernel (returns once
submitted); `realize+sync` also waits for the device; `item` reads the value back (realize, wait, copy).
"""
import argparse
import statistics
import time

import sluice


def median_us(fn, n):
    for _ in range(max(10, n // 10)):  # warm up: compile, caches
        fn()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default=sluice.default_device())
    p.add_argument("--n", type=int, default=2000)
    args = p.parse_args()
    a = sluice.Tensor([1.0], device=args.device).realize()
    b = sluice.Tensor([2.0], device=args.device).realize()

    def realize_sync():
        (a + b).realize()
        sluice.synchronize(args.device)

    rows = [
        ("sluice build", lambda: a + b),
        ("sluice realize", lambda: (a + b).realize()),
        ("sluice realize+sync", realize_sync),
        ("sluice item", lambda: (a + b).item()),
    ]
    try:
        import torch
        torch.set_num_threads(1)
        ta, tb = torch.tensor([1.0]), torch.tensor([2.0])
        rows += [("torch add", lambda: ta + tb), ("torch add+item", lambda: (ta + tb).item())]
    except ImportError:
        print("(PyTorch not installed: its rows are skipped)")
    try:
        from tinygrad import Tensor as TinyTensor  # the reference design, when installed
        ga, gb = TinyTensor([1.0]).realize(), TinyTensor([2.0]).realize()
        rows += [("tinygrad realize", lambda: (ga + gb).realize()), ("tinygrad item", lambda: (ga + gb).item())]
    except ImportError:
        print("(tinygrad not installed: its rows are skipped)")
    print(f"device {args.device}, {args.n} samples each, median µs")
    for name, fn in rows:
        print(f"  {name:22s} {median_us(fn, args.n):9.1f}")


if __name__ == "__main__":
    main()
