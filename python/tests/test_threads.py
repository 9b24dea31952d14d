"""Several Python threads building and realizing on one device at once (the GIL is released while the
runtime schedules, compiles and waits)."""
import threading

import numpy as np

import sluice


def test_threads_share_one_device(device):
    errors, results = [], {}

    def work(k):
        try:
            for i in range(5):
                t = (sluice.full((16,), float(k), device=device) * (i + 1) + 1).sum()
                results[(k, i)] = t.item()
        except Exception as e:  # noqa: BLE001: reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for (k, i), v in results.items():
        assert v == 16 * (k * (i + 1) + 1)
    assert len(results) == 20
