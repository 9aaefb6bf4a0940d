"""The timing rule of the benchmark scripts (``bench.py`` has its own, with a time budget)."""

from __future__ import annotations

import time

import numpy as np


def timed(call, runs):
    """One warm-up call (it compiles), then ``runs`` timed calls.

    Returns:
        ``(out, compile_seconds, seconds)``: the warm-up's result, the warm-up's time less
            the median (the compile time) and the median time of the timed calls.
    """
    began = time.perf_counter()
    out = call()
    first = time.perf_counter() - began
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    median = float(np.median(times))
    return out, first - median, median
