"""Many contacts through ``jf.sweep``: Quinn's Burridge-Knopoff chain against ``n``.

Side by side in one run, for each ``n``: the XLA path (``kernel="vmap"``), the compiled loop
written as loops over each lane's arrays (the default on CPUs for states of more than 64
numbers, ``jaxfriction._lanes.looped``) and the hand-written numba ``prange`` loop of
``scripts/benchmarks/contenders.py`` (the same RK4 arithmetic; final positions compared). Reports
M block-steps/s (lane-steps times blocks), the first sweep's wall time (planning and
compiling) and the largest difference of the final positions against numba. Speed is measured
here, never in tests. Usage:
``python scripts/benchmarks/bench_many_contacts.py [--ns 32 256 1024] [--lanes 8] [--steps 2000]``.
"""

import argparse
import json
import os
import platform
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import contenders as C  # noqa: E402

import jaxfriction as jf  # noqa: E402


def timed(fn, runs=3):
    best = np.inf
    for _ in range(runs):
        began = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - began)
    return best, out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ns", type=int, nargs="+", default=[32, 256, 1024])
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    rows = []
    for n in args.ns:
        dt = min(0.01, 1.0 / n)  # dt = 0.01 is unstable for n >= 256
        eps = 10 * 0.5 * dt  # Quinn: eps = 10 omega dt
        system = jf.BurridgeKnopoffChain(law=jf.Quinn(mu=1.0, eps=eps), n=n)
        alphas = np.linspace(0.1, 0.9, args.lanes)
        block_steps = args.lanes * args.steps * n
        row = {"n": n}
        for name, kernel in (("xla", "vmap"), ("looped", jf.CompiledLoopKernel(loops=True))):
            def run(kernel=kernel):
                return jf.sweep(system, {"alpha": alphas}, kernel=kernel, t1=args.steps * dt, dt=dt, progress=False)

            first, ds = timed(run, runs=1)
            best, ds = timed(run)
            row[name] = {"M_block_steps_s": round(block_steps / best / 1e6, 1), "first_s": round(first, 1)}
            row[name + "_final"] = np.asarray(ds["final_position"])
        C.numba_chain(alphas[:2], n=n, steps=2, h=dt, omega=0.5, eps=eps, parallel=True)
        best, ref = timed(lambda: C.numba_chain(alphas, n=n, steps=args.steps, h=dt, omega=0.5, eps=eps, parallel=True))
        row["numba_prange"] = {"M_block_steps_s": round(block_steps / best / 1e6, 1)}
        for name in ("xla", "looped"):
            row[name]["ratio_to_numba"] = round(row[name]["M_block_steps_s"] / row["numba_prange"]["M_block_steps_s"], 2)
            row[name]["max_diff_vs_numba"] = float(np.max(np.abs(row.pop(name + "_final") - ref[:, :n])))
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({"cpu": platform.processor() or platform.machine(), "jax": jax.__version__,
                      "lanes": args.lanes, "steps": args.steps, "rows": rows}, indent=1))
