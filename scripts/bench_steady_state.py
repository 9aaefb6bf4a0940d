"""Steady-state sweep against the default 50-cycle sweep (issue 27).

The oscillator template's command-line default grid (``law.mu`` 0.05..1 x ``force.amplitude``
0.05..2, 64 x 64, Quinn 2004 eq. 5, ``dt = 0.01``, ``eps = 2 dt``): the same lanes measured
on the last of 50 forcing cycles (today's default) and on the periodic steady state
(``steady_state=True``: 5 transient cycles and a Newton solve on the same RK4 period map).
Prints the run times (compile excluded), the speed ratio, how many lanes agree in D to 1e-8,
and for the lanes that do not, whether 400 cycles of transient move the 50-cycle D towards
the steady state (a transient that had not died out, not a wrong orbit).

Usage: ``python scripts/bench_steady_state.py [--n 64] [--gradient]``.
"""

from __future__ import annotations

import argparse
import json
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np

import jaxfriction as jf


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="values per grid axis")
    parser.add_argument("--gradient", action="store_true", help="also dD/d law.mu in both sweeps")
    parser.add_argument("--check", type=int, default=5, help="disagreeing lanes re-run with 400 cycles")
    args = parser.parse_args()
    tpl = jf.template("oscillator")
    grid = {"law.mu": np.linspace(0.05, 1.0, args.n), "force.amplitude": np.linspace(0.05, 2.0, args.n)}
    kw = {"wrt": "law.mu"} if args.gradient else {"gradient": "none"}
    out = {}
    for name, option in (("cycles50", None), ("steady", True)):
        jf.sweep(tpl, {k: v[:2] for k, v in grid.items()}, progress=False, steady_state=option, **kw)  # warm
        t = time.perf_counter()
        ds = jf.sweep(tpl, grid, progress=False, steady_state=option, **kw)
        out[name] = (ds, time.perf_counter() - t)
    a, ta = out["cycles50"]
    b, tb = out["steady"]
    diff = np.abs(a["dissipation"].values - b["dissipation"].values)
    ok = b["status"].values == 0
    report = {
        "lanes": int(diff.size), "seconds_50_cycles": round(ta, 3), "seconds_steady": round(tb, 3),
        "speed_ratio": round(ta / tb, 2), "run_seconds_50": a.attrs["run_seconds"],
        "run_seconds_steady": b.attrs["run_seconds"], "steady_status": b.attrs["flagged"],
        "agree_1e-8": int(np.sum(diff[ok] <= 1e-8)), "agree_rel_1e-5": int(np.sum(
            diff[ok] <= 1e-5 * np.maximum(1.0, np.abs(b["dissipation"].values[ok])))), "converged_lanes": int(ok.sum()),
        "max_residual": float(np.nanmax(b["residual"].values[ok])), "max_abs_diff": float(np.nanmax(diff[ok])),
    }
    if args.gradient:
        g = np.abs(a["grad_dissipation"].values[0] - b["grad_dissipation"].values[0])
        report["grad_agree_1e-6"] = int(np.sum(g[ok] <= 1e-6))
    # the disagreeing lanes: does a longer transient approach the steady state?
    bad = np.argwhere(ok & (diff > 1e-8))
    order = np.argsort(-diff[tuple(bad.T)])[: args.check]
    checks = []
    for i, j in bad[order]:
        system = jf.set_parameters(tpl.system, {"law.mu": grid["law.mu"][i], "force.amplitude": grid["force.amplitude"][j]})
        orbit = jf.periodic_orbit(system, dt=tpl.dt)
        h = orbit.period / orbit.n_steps
        traj = jf.simulate(system, [0.0, 0.0], 0.0, 400 * orbit.period, dt=h, save_every=orbit.n_steps)
        d400 = float(jf.dissipation_per_cycle(traj, orbit.period, 400)[-1])
        checks.append({"mu": float(grid["law.mu"][i]), "amplitude": float(grid["force.amplitude"][j]),
                       "D_steady": float(b["dissipation"].values[i, j]), "D_50": float(a["dissipation"].values[i, j]),
                       "D_400": d400, "max_multiplier": float(np.max(np.abs(orbit.multipliers)))})
    report["disagreeing_lanes_checked"] = checks
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
