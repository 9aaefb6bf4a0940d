"""The default sweep before and after a change, side by side in one run.

Runs the default sweep's workload (Quinn's forced oscillator, Quinn's law with eps = 2 dt,
dt = 0.01, 50 cycles at omega = 0.5, D of the last cycle and dD/d(mu N) in forward mode, a
32 x 32 grid of (mu N, alpha) = 1024 lanes, all CPU devices) with the library of a baseline
revision (a temporary git worktree) and with this tree, in alternating fresh processes, and
prints the median trajectory-steps per second of each (run time, compile excluded): the
baseline's ``system_sweep`` (what its ``jaxfriction sweep`` ran: dissipation, stick fraction,
peak slip, final position) against this tree's ``jf.sweep`` on the oscillator template (the
same plus the energy residual), and the baseline's fastest path (``batch_dissipation``:
dissipation, its gradient and the stick fraction, no I/O).

Usage: ``python scripts/benchmarks/bench_regression.py [--baseline 0c1c4ce] [--grid 32] [--cycles 50]
[--repeats 3] [--json PATH]``. Speed is measured here, never in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Measures one side in a fresh process: ``python -c CODE ROOT SIDE GRID CYCLES``; prints JSON.
CODE = r'''
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import jax
jax.config.update("jax_num_cpu_devices", os.cpu_count())
jax.config.update("jax_enable_x64", True)
import numpy as np
import jaxfriction
side, n, cycles, n_wrt = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
assert jaxfriction.__file__.startswith(sys.argv[1]), jaxfriction.__file__
mu, alpha = np.linspace(0.05, 1.0, n), np.linspace(0.05, 2.0, n)
out = {"side": side}
if side == "new":
    import jaxfriction as jf
    def call():
        return jf.sweep(jf.template("oscillator"), {"law.mu": mu, "force.amplitude": alpha}, cycles=cycles,
                        wrt=["law.mu", "force.amplitude"][:n_wrt], progress=False)
else:
    from jaxfriction.workflows import SweepConfig, batch_dissipation, system_sweep
    config = SweepConfig(cycles=cycles)
    def call():  # what the baseline's `jaxfriction sweep` ran on its defaults
        return system_sweep("oscillator", {"muN": mu, "alpha": alpha}, fixed={"eps": 0.02}, cycles=cycles,
                            wrt=["muN", "alpha"][:n_wrt], progress=False)
    mesh = [m.ravel() for m in np.meshgrid(mu, alpha, indexing="ij")]  # its default: dD/dmu
    batch_dissipation(*mesh, config)  # compile
    began = time.perf_counter()
    d = batch_dissipation(*mesh, config)
    out["batch_seconds"] = time.perf_counter() - began
first = call()
runs = [call() for _ in range(2)]
steps = first.attrs["trajectory_steps"] if "trajectory_steps" in first.attrs else n * n * first.attrs["steps_per_lane"]
assert "grad_dissipation" in first or "dD_dmuN" in first
out.update(compile_seconds=first.attrs["compile_seconds"], run_seconds=min(r.attrs["run_seconds"] for r in runs),
           trajectory_steps=int(steps), devices=first.attrs["devices"],
           D=np.asarray(first["dissipation"]).ravel().tolist()[:8])
print(json.dumps(out))
'''


def measure(root, side, grid, cycles, n_wrt):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XLA_FLAGS")}
    done = subprocess.run([sys.executable, "-c", CODE, str(root), side, str(grid), str(cycles), str(n_wrt)],
                          capture_output=True,
                          text=True, env=env, cwd=root, check=False)
    if done.returncode:
        raise RuntimeError(f"{side} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="0c1c4ce", help="git revision before the change")
    parser.add_argument("--grid", type=int, default=32, help="grid points per axis (lanes = grid^2)")
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3, help="alternating process pairs")
    parser.add_argument("--wrt", type=int, default=1, choices=(1, 2),
                        help="gradient of D with respect to mu N (1, the default sweep) or mu N and alpha (2)")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline], check=True,
                       capture_output=True)
        try:
            results = {"baseline": [], "new": []}
            for _ in range(args.repeats):
                results["baseline"].append(measure(base, "baseline", args.grid, args.cycles, args.wrt))
                results["new"].append(measure(ROOT, "new", args.grid, args.cycles, args.wrt))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False,
                           capture_output=True)
    lanes, steps = args.grid**2, results["new"][0]["trajectory_steps"]
    rate = {side: statistics.median(r["trajectory_steps"] / r["run_seconds"] for r in runs)
            for side, runs in results.items()}
    batch = statistics.median(steps / r["batch_seconds"] for r in results["baseline"])
    compile_ = {side: statistics.median(r["compile_seconds"] for r in runs) for side, runs in results.items()}
    same = results["baseline"][0]["D"] == results["new"][0]["D"]
    print(f"default sweep, {lanes} lanes x {steps // lanes} steps, {('dD/dmu', 'dD/d(mu, alpha)')[args.wrt - 1]} "
          f"forward, "
          f"{results['new'][0]['devices']} devices, median of {args.repeats} alternating runs")
    print("| path | M trajectory-steps/s | compile (s) |")
    print("|---|---|---|")
    print(f"| baseline {args.baseline}: system_sweep('oscillator') (its CLI default) | {rate['baseline'] / 1e6:.1f} | "
          f"{compile_['baseline']:.2f} |")
    if args.wrt == 1:
        print(f"| baseline {args.baseline}: batch_dissipation (D, dD/dmu, stick fraction only; no I/O) | "
              f"{batch / 1e6:.1f} | |")
    print(f"| this tree: jf.sweep(template('oscillator')) | {rate['new'] / 1e6:.1f} | {compile_['new']:.2f} |")
    print(f"ratio new / baseline system_sweep: {rate['new'] / rate['baseline']:.3f}; new / batch_dissipation: "
          f"{rate['new'] / batch:.3f}; first 8 D bitwise equal: {same}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rates": rate, "batch_dissipation": batch, "compile": compile_,
                                               "bitwise_equal_first_lanes": same, "runs": results}, indent=2))


if __name__ == "__main__":
    main()
