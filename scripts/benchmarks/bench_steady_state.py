"""Steady-state sweep against the transient sweeps of 50 and more cycles (issue 27).

The oscillator template's command-line default grid (``law.mu`` 0.05..1 x ``force.amplitude``
0.05..2, 64 x 64, Quinn 2004 eq. 5, ``dt = 0.01``, ``eps = 2 dt``), measured

- on the periodic steady state (``steady_state=True``: 5 transient cycles and a Newton solve
  on the RK4 period map, on the XLA path), and
- on the last of ``C`` forcing cycles for ``C`` in ``--cycles`` (50 is today's default; on a
  CPU the numba compiled loop), with the transient on the window's own step, so a transient
  that has died out gives exactly the steady state's D.

For each it prints the run time (compile excluded: each sweep runs twice, the second
timed), how many of the steady state's converged lanes the transient sweep matches in D to
1e-8, and the largest difference. The ratio that answers "how much faster for the same D"
is the time of the first ``C`` that matches (nearly) every lane, over the steady state's.

Usage: ``python scripts/benchmarks/bench_steady_state.py [--n 64] [--cycles 50,200,800,3200] [--gradient]``.
"""

from __future__ import annotations

import argparse
import json
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import jaxfriction as jf  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="values per grid axis")
    parser.add_argument("--cycles", default="50,200,800,3200", help="transient sweeps' cycle counts")
    parser.add_argument("--gradient", action="store_true", help="also dD/d law.mu in every sweep")
    args = parser.parse_args()
    tpl = jf.template("oscillator")
    grid = {"law.mu": np.linspace(0.05, 1.0, args.n), "force.amplitude": np.linspace(0.05, 2.0, args.n)}
    kw = {"wrt": "law.mu"} if args.gradient else {"gradient": "none"}

    def timed(**options):
        jf.sweep(tpl, grid, progress=False, **kw, **options)  # compile
        began = time.perf_counter()
        ds = jf.sweep(tpl, grid, progress=False, **kw, **options)
        return ds, time.perf_counter() - began

    steady, t_steady = timed(steady_state=True)
    ok = steady["status"].values == 0
    report = {"lanes": int(ok.size), "steady": {"seconds": round(t_steady, 3), "kernel": steady.attrs["kernel"],
                                                 "converged_lanes": int(ok.sum()), "flagged": steady.attrs["flagged"],
                                                 "max_residual": float(np.nanmax(steady["residual"].values[ok]))}}
    for cycles in (int(c) for c in args.cycles.split(",")):
        ds, seconds = timed(cycles=cycles)
        diff = np.abs(ds["dissipation"].values - steady["dissipation"].values)[ok]
        entry = {"seconds": round(seconds, 3), "kernel": ds.attrs["kernel"], "agree_1e-8": int(np.sum(diff <= 1e-8)),
                 "max_abs_diff": float(np.max(diff)), "time_over_steady": round(seconds / t_steady, 2)}
        if args.gradient:
            g = np.abs(ds["grad_dissipation"].values[0] - steady["grad_dissipation"].values[0])[ok]
            entry["grad_agree_1e-6"] = int(np.sum(g <= 1e-6))
        report[f"cycles_{cycles}"] = entry
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
