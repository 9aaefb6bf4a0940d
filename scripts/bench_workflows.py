"""Cost of the workflow layer, measured side by side in one run (issue 7's performance report).

On the default sweep's kernel (Quinn's forced oscillator, RK4, dt = 0.01, float64):

1. throughput with 1 device against all devices (the host split into one CPU device per
   core with ``jax_num_cpu_devices``), ``jf.sweep`` in memory;
2. the overhead of ``jf.sweep`` writing every chunk to disk (resumable, netCDF at the end)
   against the same lanes in memory;
3. the cost of dD/d(mu N, alpha) against the forward run, forward and reverse mode.

Medians of ``--repeats`` runs after a warm-up; compile time reported apart. Speed is
measured here, never in tests. Usage: ``python scripts/bench_workflows.py [--cycles 50]
[--batch 1024] [--json PATH]``.
"""

import argparse
import json
import os
import platform
import tempfile
import time

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_num_cpu_devices", os.cpu_count())

import numpy as np  # noqa: E402
from timing import timed  # noqa: E402

import jaxfriction as jf  # noqa: E402

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    side = int(round(args.batch ** 0.5))
    grid = {"law.mu": np.linspace(0.05, 1.0, side), "force.amplitude": np.linspace(0.05, 2.0, side)}
    tpl = jf.template("oscillator")

    def sweep(**kw):
        return jf.sweep(tpl, grid, cycles=args.cycles, progress=False, **kw)

    steps = side * side * sweep().attrs["steps_per_lane"]
    rows = []

    def row(name, compile_s, run_s, reference=None):
        rows.append({"case": name, "compile_s": round(compile_s, 2), "run_s": round(run_s, 3),
                     "Msteps_per_s": round(steps / run_s / 1e6, 2),
                     "relative_cost": None if reference is None else round(run_s / reference, 2)})
        print(rows[-1], flush=True)

    devices = jax.local_devices()
    _, c1, one = timed(lambda: sweep(devices=devices[:1]), args.repeats)
    row("forward, 1 device, in memory", c1, one)
    _, call, base = timed(lambda: sweep(), args.repeats)
    row(f"forward, {len(devices)} devices, in memory", call, base, one)
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(10**6))
        chunk = max(len(devices), side * side // 8)

        def saved():  # wall time of a fresh sweep minus its compile time
            start = time.perf_counter()
            ds = sweep(chunk_size=chunk, out_dir=os.path.join(tmp, str(next(counter))))
            return ds.attrs["compile_seconds"], time.perf_counter() - start - ds.attrs["compile_seconds"]

        runs = [saved() for _ in range(args.repeats)]
        row(f"forward, {len(devices)} devices, 8 chunks saved to disk + netCDF", float(np.median([c for c, _ in runs])),
            float(np.median([r for _, r in runs])), base)
    for mode in ("forward", "reverse"):
        _, cg, grad_s = timed(lambda: sweep(wrt=["law.mu", "force.amplitude"], gradient=mode), args.repeats)
        row(f"D and dD/d(mu N, alpha), {mode} mode, {len(devices)} devices", cg, grad_s, base)
    report = {"date": time.strftime("%Y-%m-%d"), "machine": platform.processor() or platform.machine(),
              "cores": os.cpu_count(), "jax": jax.__version__, "batch": side * side, "cycles": args.cycles,
              "steps_per_trajectory": steps // (side * side), "rows": rows}
    print("\n| case | compile s | run s | M traj-steps/s | cost vs previous reference |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['compile_s']} | {r['run_s']} | {r['Msteps_per_s']} | {r['relative_cost'] or ''} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
