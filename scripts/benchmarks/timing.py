"""The timing rules of the benchmark scripts: a warm-up and timed calls (``bench.py`` has its own
form of that, with a time budget), and a speed ratio measured in alternating rounds."""

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


def alternating(ours, numba, rounds=5):
    """``ours`` and ``numba`` called one after the other ``rounds`` times: the best seconds of
    ``ours`` with its output, and the median over the rounds of ``numba``'s seconds over
    ``ours``'s (the speed ratio). Each round's pair runs on the same state of the machine, so
    the ratio does not take the drift of a shared machine between two separate best-of runs
    (numba's own chain loop ran at 115-183 M block-steps/s within five minutes)."""
    mine, ratios, kept = [], [], None
    for _ in range(rounds):
        began = time.perf_counter()
        numba()
        theirs = time.perf_counter() - began
        began = time.perf_counter()
        out = ours()
        mine.append(time.perf_counter() - began)
        ratios.append(theirs / mine[-1])
        kept = out if mine[-1] == min(mine) else kept
    return min(mine), kept, float(np.median(ratios))
