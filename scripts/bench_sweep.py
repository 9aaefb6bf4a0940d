"""Throughput of the default sweep (Quinn forced oscillator, RK4, 50 cycles, dt = 0.01).

Measures trajectory-steps per second of ``dissipation_sweep`` (forward run plus the
forward-mode dD/dmu tangent) for several batch sizes, compile time separately. Speed is
measured here, never in tests. Usage: ``python scripts/bench_sweep.py [--cycles 50]``.
"""

import argparse
import json

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from jaxfriction._workflows import SweepConfig, dissipation_sweep  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 32, 64])
    args = parser.parse_args()
    rows = []
    for n in args.sizes:  # n x n grid in one chunk
        ds = dissipation_sweep(np.linspace(0.05, 1, n), np.linspace(0.05, 2, n), SweepConfig(cycles=args.cycles),
                               chunk_size=n * n, progress=False)
        rows.append({"batch": n * n, "compile_s": round(ds.attrs["compile_seconds"], 2),
                     "run_s": round(ds.attrs["run_seconds"], 2),
                     "Msteps_per_s": round(ds.attrs["steps_per_second"] / 1e6, 2)})
        print(rows[-1], flush=True)
    print(json.dumps({"device": str(jax.devices()[0]), "rows": rows}, indent=1))
