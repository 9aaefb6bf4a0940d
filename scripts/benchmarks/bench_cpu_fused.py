"""CPU experiment: does one compiled loop per lane block beat vmap-of-scan on CPU?

The fused kernel (:class:`jaxfriction.FusedKernel`) keeps a block of lanes through the whole
time loop. On a CPU it runs in Pallas' interpret mode, which XLA compiles into one loop over
the blocks with the whole RK4 time loop inside, on ``(block,)`` arrays: the CPU form of
"one compiled loop per lane block". This script measures workload A of ``scripts/benchmarks/bench.py``
(Quinn's forced oscillator, ``dt = 0.01``, 50 cycles at ``omega = 0.5``, 62,850 RK4 steps,
``D`` and the stick fraction of the last cycle) side by side in one run:

- ``jf.sweep`` on the XLA path (``kernel="vmap"``),
- ``jf.sweep`` on the fused kernel for several block sizes (``FusedKernel(block=b)``),
- the best numba contender of ``scripts/benchmarks/contenders.py`` (``prange`` over 16-lane blocks),

forward and with ``dD/d(mu N, alpha)`` in forward mode, on all CPU cores (one JAX device
per core). Throughput is lanes x steps / call time, the median of ``--runs`` calls after a
warm-up; every result is checked against the XLA path's.

Usage::

    python scripts/benchmarks/bench_cpu_fused.py                     # batches 1024 8192, blocks 64..1024
    python scripts/benchmarks/bench_cpu_fused.py --batches 4096 --blocks 128 512 --runs 3
"""

from __future__ import annotations

import argparse
import os
import sys

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_num_cpu_devices", os.cpu_count() or 1)

import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import contenders  # noqa: E402
from timing import timed  # noqa: E402

OMEGA, EPS, DT, CYCLES = 0.5, 0.02, 0.01, 50
SYSTEM = jf.Oscillator(law=jf.Quinn(1.0, EPS), force=jf.Harmonic(1.0, OMEGA))
OBSERVABLES = {"dissipation": jf.window_dissipation, "stick_fraction": jf.stick_fraction}


def jf_call(mu, alpha, kernel, grad):
    grid = {"law.mu": mu, "force.amplitude": alpha}
    wrt = ("law.mu", "force.amplitude") if grad else ()

    def call():
        ds = jf.sweep(SYSTEM, grid, samples=True, cycles=CYCLES, frequency="force.omega", dt=DT, progress=False,
                      observables=OBSERVABLES, wrt=wrt, gradient="forward", kernel=kernel, chunk_size=mu.size)
        return ds["grad_dissipation"].values[:, 0] if grad else ds["dissipation"].values

    return call


def numba_call(mu, alpha, grad):
    segments = contenders.sweep_segments(OMEGA, DT, CYCLES)
    if grad:
        return lambda: contenders.numba_sweep_grad(mu, alpha, omega=OMEGA, eps=EPS, segments=segments,
                                                   parallel=True)[1]
    return lambda: contenders.numba_sweep(mu, alpha, omega=OMEGA, eps=EPS, segments=segments, parallel=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1024, 8192])
    parser.add_argument("--blocks", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    steps = sum(n for _, n, _ in contenders.sweep_segments(OMEGA, DT, CYCLES))
    print(f"{jax.device_count()} CPU devices, {steps} RK4 steps per lane; M trajectory-steps/s (ratio to numba)")
    for grad in (False, True):
        for batch in args.batches:
            mu, alpha = contenders.sweep_lanes(batch)
            mu[1] = 0.05  # the library's Quinn law needs mu > 0 for a valid lane
            ref, _, t_numba = timed(numba_call(mu, alpha, grad), args.runs)
            rate_numba = batch * steps / t_numba
            cells = [("numba prange", rate_numba, None)]
            xla, _, t = timed(jf_call(mu, alpha, "vmap", grad), args.runs)
            cells.append(("jf vmap", batch * steps / t, np.max(np.abs(xla - ref))))
            for block in args.blocks:
                if block > batch:
                    continue
                out, _, t = timed(jf_call(mu, alpha, jf.FusedKernel(block=block), grad), args.runs)
                cells.append((f"jf fused b={block}", batch * steps / t, np.max(np.abs(out - xla))))
            print(f"\n{'dD/d(mu N, alpha)' if grad else 'D'}, batch {batch}:")
            for name, rate, diff in cells:
                agree = "" if diff is None else f"  max |diff| {diff:.1e}"
                print(f"  {name:18s} {rate / 1e6:8.1f} M/s  ({rate / rate_numba:.2f}x){agree}", flush=True)


if __name__ == "__main__":
    main()
